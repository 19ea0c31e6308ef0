import { describe, expect, test } from 'bun:test';
import { Database } from 'bun:sqlite';
import path from 'node:path';
import { ManualClock } from '../../../src/clock.ts';
import { json } from '../../helpers/client.ts';
import { davLogin } from '../../helpers/dav.ts';
import { eventually } from '../../helpers/eventually.ts';
import { randomBytes } from 'node:crypto';
import { downloaded, folder, listAll, storedObjectFiles, upload, uploadRaw } from '../../helpers/files.ts';
import { memoryLogger } from '../../helpers/logs.ts';
import * as seed from '../../helpers/seed.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { createUpload, headUpload, patchUpload } from '../../helpers/tus.ts';
import { holdWriteLock } from '../../helpers/write-lock.ts';

async function withServer(opts: Parameters<typeof startTestServer>[0], fn: (t: TestServer) => Promise<void>): Promise<void> {
  const t = await startTestServer(opts);
  try {
    await fn(t);
  } finally {
    await t.stop();
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('another connection holding the write lock longer than the server waits (docs/reliability.md, a busy database)', () => {
  test('a request (API or WebDAV) answers 503 with Retry-After and the busy message, and the same request succeeds once the lock is let go', async () => {
    const logger = memoryLogger();
    await withServer({ startWorker: false, logger }, async (t) => {
      const a = await seed.admin(t);
      const dav = await davLogin(t, a);
      const release = holdWriteLock(t);
      let made: Response;
      let uploaded: Response;
      let put: Response;
      try {
        made = await a.client.post('/api/files/folder', { name: 'while locked' });
        uploaded = await uploadRaw(a.client, 'while-locked.txt', 'bytes');
        put = await dav.put('put-while-locked.txt', 'bytes');
      } finally {
        release();
      }
      for (const res of [made, uploaded, put]) {
        expect(res.status).toBe(503);
        expect(res.headers.get('Retry-After')).toBe('5');
        expect(await json(res)).toEqual({ message: 'The server is busy; try again in a few seconds' });
      }
      expect(logger.lines.filter((l) => l.level === 'error')).toEqual([]);
      expect(logger.lines.filter((l) => l.msg === 'database busy').length).toBe(3);
      expect((await folder(a.client, 'while locked')).name).toBe('while locked');
      expect((await uploadRaw(a.client, 'while-locked.txt', 'bytes')).status).toBe(200);
      expect((await dav.put('put-while-locked.txt', 'bytes')).status).toBe(201);
      // The refused uploads' objects went with them: the two left are the retries'.
      expect(storedObjectFiles(t)).toEqual({ objects: [expect.any(String), expect.any(String)], temp: [] });
    });
  });

  test('a tus upload whose last PATCH meets the lock answers 503 and keeps its offset, so the client resumes and completes it', async () => {
    await withServer({ startWorker: false }, async (t) => {
      const a = await seed.admin(t);
      const data = randomBytes(64 * 1024);
      const location = (await createUpload(a.client, data.length, { filename: 'resumed.bin' })).headers.get('location')!;
      expect((await patchUpload(a.client, location, 0, data.subarray(0, 32 * 1024))).status).toBe(204);
      const release = holdWriteLock(t);
      let last: Response;
      try {
        last = await patchUpload(a.client, location, 32 * 1024, data.subarray(32 * 1024));
      } finally {
        release();
      }
      expect(last.status).toBe(503);
      expect(last.headers.get('Retry-After')).toBe('5');
      // Nothing of the refused PATCH counts: a client that asks resumes from the offset before it (what tus-js-client does on a 503).
      const head = await headUpload(a.client, location);
      expect(head.headers.get('upload-offset')).toBe(String(32 * 1024));
      expect(await listAll(a.client, '/api/files')).toEqual([]);
      const resumed = await patchUpload(a.client, location, 32 * 1024, data.subarray(32 * 1024));
      expect(resumed.status).toBe(204);
      const [item] = await listAll(a.client, '/api/files');
      expect(item).toMatchObject({ name: 'resumed.bin', size: data.length });
      expect(await downloaded(a.client, item!.id)).toEqual(data);
    });
  });

  test('the audit batch waits for the lock without spending attempts: no event is parked, every one reaches the log once', async () => {
    const logger = memoryLogger();
    await withServer({ startWorker: false, logger }, async (t) => {
      const a = await seed.admin(t);
      const { audit } = t.server.ctx.services;
      // Each batch meets the lock (held past the wait), which is let go before the failure is handled, as a writer that finishes does.
      const repo = t.server.ctx.repos.audit;
      const moveBatch = repo.moveBatch.bind(repo);
      repo.moveBatch = (...args) => {
        const release = holdWriteLock(t);
        try {
          return moveBatch(...args);
        } finally {
          release();
        }
      };
      // More rounds than an event's attempts (5): before, each busy round counted one and the fifth parked them all.
      for (let i = 0; i < 6; i++) expect(audit.processBatch()).toBe(0);
      repo.moveBatch = moveBatch;
      const release = holdWriteLock(t);
      try {
        // A refused sign-in writes nothing but its audit event, and that event is kept while the queue cannot take it.
        expect((await t.client().post('/api/login', { email: a.email, password: 'not it' })).status).toBe(401);
      } finally {
        release();
      }
      audit.flush();
      expect(audit.queueDepths()).toEqual({ pending: 0, failed: 0 });
      expect(audit.list({ action: 'auth.signup', user: a.id })).toHaveLength(1);
      expect(audit.list({ action: 'auth.sign_in' }).filter((e) => e.status === 'failure' && e.email === a.email)).toHaveLength(1);
      expect(logger.lines.filter((l) => l.level === 'error')).toEqual([]);
      expect(logger.lines.filter((l) => l.msg === 'database busy' && l.fields.what === 'audit log').length).toBe(1);
      expect(logger.lines.filter((l) => l.msg === 'database free again' && l.fields.what === 'audit log').length).toBe(1);
    });
  });

  test('the webhook dispatcher logs one busy spell, not every round, and turns each change into one delivery once free', async () => {
    const logger = memoryLogger();
    await withServer({ logger, env: { WEBHOOK_ALLOWED_HOSTS: '127.0.0.1' } }, async (t) => {
      const a = await seed.admin(t);
      const hook = await json(await a.client.post('/api/webhooks', { url: 'http://127.0.0.1:9/hook', events: ['item.created'] }));
      await folder(a.client, 'before');
      const release = holdWriteLock(t);
      try {
        // Three of the dispatcher's rounds (every 500 ms).
        await sleep(1600);
      } finally {
        release();
      }
      await folder(a.client, 'after');
      const sqlite = t.server.ctx.db.$client;
      await eventually(
        () =>
          sqlite.query<{ n: number }, [string]>('SELECT COUNT(*) AS n FROM webhook_deliveries WHERE webhook_id = ?').get(hook.webhook.id)!
            .n === 2,
      );
      const perChange = sqlite
        .query<{ n: number }, [string]>('SELECT COUNT(*) AS n FROM webhook_deliveries WHERE webhook_id = ? GROUP BY change_seq')
        .all(hook.webhook.id);
      expect(perChange).toEqual([{ n: 1 }, { n: 1 }]);
      expect(logger.lines.filter((l) => l.level === 'error')).toEqual([]);
      expect(logger.lines.filter((l) => l.msg === 'database busy' && l.fields.what === 'webhook dispatcher').length).toBe(1);
    });
  });

  test('a sign-in leaves a session only when it answers 200: another connection taking the write lock once the session row is written makes a 503 with no orphan session', async () => {
    await withServer({ startWorker: false, env: { WEBHOOK_ALLOWED_HOSTS: '127.0.0.1' } }, async (t) => {
      const a = await seed.admin(t);
      expect((await a.client.post('/api/webhooks', { url: 'http://127.0.0.1:9/hook', events: ['account.signed_in'] })).status).toBe(201);
      const sqlite = t.server.ctx.db.$client;
      const sessions = () => sqlite.query<{ n: number }, [string]>('SELECT COUNT(*) AS n FROM sessions WHERE user_id = ?').get(a.id)!.n;
      const before = sessions();
      // Another connection takes the write lock the first moment it can once the session row is written.
      const repo = t.server.ctx.repos.sessions;
      const insert = repo.insert.bind(repo);
      let release: (() => void) | null = null;
      repo.insert = (row) => {
        insert(row);
        repo.insert = insert;
        const other = new Database(path.join(t.dataDir, 'coffer.db'));
        try {
          other.run('BEGIN IMMEDIATE');
          sqlite.run('PRAGMA busy_timeout = 50');
          release = () => {
            other.run('ROLLBACK');
            other.close();
            sqlite.run('PRAGMA busy_timeout = 5000');
          };
        } catch {
          other.close();
        }
      };
      let res: Response;
      try {
        res = await t.client().post('/api/login', { email: a.email, password: a.password });
      } finally {
        (release as (() => void) | null)?.();
      }
      expect(sessions() - before).toBe(res.status === 200 ? 1 : 0);
      if (res.status !== 200) expect(res.status).toBe(503);
    });
  });

  test('read marks written behind wait for the lock and are written after it; the write neither throws nor drops them', async () => {
    const clock = new ManualClock(Date.now());
    const logger = memoryLogger();
    await withServer({ startWorker: false, clock, logger }, async (t) => {
      const a = await seed.admin(t);
      const item = await upload(a.client, 'read-me.txt', 'x');
      clock.advance(2 * 3600_000);
      const readAt = new Date(clock.now()).toISOString();
      await (await a.client.get(`/api/files/${item.id}/download`)).arrayBuffer();
      const { access } = t.server.ctx.services;
      const release = holdWriteLock(t);
      try {
        // The timer's flush: before, the busy write threw out of the timer (which ends the process) and the marks were gone.
        expect(() => access.flush()).not.toThrow();
      } finally {
        release();
      }
      clock.advance(60_000);
      access.flush();
      expect((await json(await a.client.get(`/api/files/${item.id}/info`))).accessedAt).toBe(readAt);
      expect(logger.lines.filter((l) => l.msg === 'database busy' && l.fields.what === 'access times').length).toBe(1);
    });
  });

  test('the content indexer logs one busy spell instead of an error each round, and indexes everything once free', async () => {
    const logger = memoryLogger();
    await withServer({ logger }, async (t) => {
      const a = await seed.admin(t);
      const item = await upload(a.client, 'notes.txt', 'the wifi password is hunter2');
      // The backfill's first queueing meets the lock, held for two of the indexer's rounds and let go.
      const repo = t.server.ctx.repos.content;
      const queueMissing = repo.queueMissing.bind(repo);
      let release: (() => void) | null = null;
      repo.queueMissing = (...args) => {
        if (!release) {
          release = holdWriteLock(t);
          setTimeout(() => release!(), 2500);
        }
        return queueMissing(...args);
      };
      expect((await a.client.put('/api/user/content-search-config', { enabled: true })).status).toBe(200);
      await eventually(
        async () => {
          const hits = await json(await a.client.get('/api/files/search?q=hunter2&content=true'));
          return hits.some((h: { id: string; match: string }) => h.id === item.id && h.match === 'content');
        },
        { timeoutMs: 30_000 },
      );
      expect(logger.lines.filter((l) => l.level === 'error')).toEqual([]);
      expect(logger.lines.filter((l) => l.msg === 'database busy' && l.fields.what === 'content index').length).toBe(1);
      expect(logger.lines.filter((l) => l.msg === 'database free again' && l.fields.what === 'content index').length).toBe(1);
    });
  });
});
