import { Database } from 'bun:sqlite';
import { describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import { json } from '../../helpers/client.ts';
import { parseJson, runCli } from '../../helpers/cli.ts';
import { startsUntilSettled } from '../../helpers/server-process.ts';
import { eventually } from '../../helpers/eventually.ts';
import { upload } from '../../helpers/files.ts';
import * as seed from '../../helpers/seed.ts';
import { startTestServer, tempDir } from '../../helpers/server.ts';
import { StorageUnavailableError } from '../../../src/storage/driver.ts';

const states = (dataDir: string) => {
  const db = new Database(path.join(dataDir, 'coffer.db'), { readonly: true });
  try {
    const docs = db
      .query<{ name: string; state: string }, []>(
        'SELECT i.name, d.state FROM content_docs d JOIN items i ON i.seq = d.seq ORDER BY i.name',
      )
      .all();
    const pending = db.query<{ n: number }, []>('SELECT count(*) AS n FROM content_pending').get()!.n;
    const tries = db
      .query<{ subject: string; attempts: number }, []>(
        `SELECT subject, attempts FROM unfinished_attempts WHERE purpose = 'content extraction' ORDER BY subject`,
      )
      .all();
    return { docs, pending, tries };
  } finally {
    db.close();
  }
};

describe('a document whose extraction kills the process', () => {
  test('is tried 3 times, then given up on: the server settles and indexes the others, its neighbours in the batch too; reindex tries it again', async () => {
    const dir = tempDir('coffer-content-crash-');
    const t = await startTestServer({ dataDir: dir });
    const a = await seed.admin(t);
    // The poison document is in the middle of the queue: one neighbour is read before it, one after, in the same batch.
    await upload(a.client, 'good.txt', 'the boiler invoice');
    await upload(a.client, 'poison.txt', 'the words that crash the decoder');
    await upload(a.client, 'also-good.txt', 'the wifi password');
    await t.server.stop({ graceMs: 1000 });
    expect(parseJson(await runCli(['settings', 'set', 'contentSearch', 'true', '--json', '--data-dir', dir]))).toEqual({
      contentSearch: true,
    });

    // The fault point: the process dies (SIGKILL, as a native crash in a decoder or an out-of-memory abort would) as
    // poison.txt is handed to an extraction worker.
    const dies = path.join(dir, '..', `${path.basename(dir)}-dies-in-extraction.ts`);
    fs.writeFileSync(
      dies,
      `const post = Worker.prototype.postMessage;
       Worker.prototype.postMessage = function (message, ...rest) {
         if (message && message.name === 'poison.txt') process.kill(process.pid, 'SIGKILL');
         return post.call(this, message, ...rest);
       };\n`,
    );
    try {
      const starts = await startsUntilSettled(dir, dies, () => expect(states(dir)).toMatchObject({ pending: 0, docs: { length: 3 } }), 6);
      expect(starts).toEqual({ crashes: 3, settled: true });
      expect(states(dir).docs).toEqual([
        { name: 'also-good.txt', state: 'indexed' },
        { name: 'good.txt', state: 'indexed' },
        { name: 'poison.txt', state: 'failed' },
      ]);
      // Only the poison's tries are left counted (3): the neighbours', which the first crash cut short, were tried alone.
      expect(states(dir).tries).toEqual([{ subject: expect.stringMatching(/^\d+:/), attempts: 3 }]);

      // The others are searchable; the rebuild reads it again (this time it does not crash).
      await t.restart();
      const admin = await seed.login(t, a.email);
      expect(await json(await admin.get('/api/user/content-search-config'))).toMatchObject({ enabled: true, pending: 0 });
      const hits = await json<any[]>(await admin.get('/api/files/search?q=boiler&content=true'));
      expect(hits.map((h) => h.name)).toEqual(['good.txt']);
      await t.server.stop({ graceMs: 1000 });
      expect(parseJson(await runCli(['search', 'reindex', '--json', '--data-dir', dir]))).toEqual({ queued: 3 });
      await t.restart();
      await eventually(
        () =>
          expect(states(dir)).toMatchObject({
            pending: 0,
            docs: [{ state: 'indexed' }, { state: 'indexed' }, { state: 'indexed' }],
            tries: [],
          }),
        {
          timeoutMs: 30_000,
        },
      );
    } finally {
      fs.rmSync(dies, { force: true });
      await t.stop();
    }
  }, 180_000);

  test('a storage that does not answer for rounds on end takes no tries: each round counts one, and the document is indexed once it answers', async () => {
    const t = await startTestServer();
    try {
      const a = await seed.admin(t);
      const item = await upload(a.client, 'notes.txt', 'the wifi password is hunter2');
      const key = t.server.ctx.repos.items.get(a.id, item.id)!.storageKey!;
      const storage = t.server.ctx.storage;
      const readBytes = storage.readBytes.bind(storage);
      // The document's tries as each read of it begins: counted before the read, forgotten after a round the storage failed.
      const tries: number[] = [];
      storage.readBytes = async (...args: Parameters<typeof readBytes>) => {
        if (args[0] === key) {
          const row = t.server.ctx.db.$client
            .query<{ attempts: number }, []>(`SELECT attempts FROM unfinished_attempts WHERE purpose = 'content extraction'`)
            .get();
          tries.push(row?.attempts ?? 0);
          if (tries.length <= 3) throw new StorageUnavailableError('the bucket does not answer');
        }
        return readBytes(...args);
      };
      expect((await a.client.put('/api/user/content-search-config', { enabled: true })).status).toBe(200);
      await eventually(
        async () => {
          const hits = await json<any[]>(await a.client.get('/api/files/search?q=hunter2&content=true'));
          return hits.some((h) => h.id === item.id && h.match === 'content');
        },
        { timeoutMs: 30_000 },
      );
      expect(tries).toEqual([1, 1, 1, 1]);
      expect(states(t.dataDir).tries).toEqual([]);
    } finally {
      await t.stop();
    }
  }, 60_000);
});
