import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { json, type TestClient } from '../../helpers/client.ts';
import { errors } from '../../helpers/errors.ts';
import { folder, listAll, rowCount, seedRows, SseReader, storedKeys, upload } from '../../helpers/files.ts';
import * as seed from '../../helpers/seed.ts';
import { ManualClock } from '../../../src/clock.ts';
import { Jobs } from '../../../src/jobs/catalog.ts';

let t: TestServer;
const clock = new ManualClock(Date.parse('2026-05-01T00:00:00Z'));
const DAY = 24 * 3600_000;

beforeAll(async () => {
  t = await startTestServer({ clock, startWorker: false });
  await seed.admin(t);
});
afterAll(() => t.stop());

const ndjson = async (res: Response) =>
  (await res.text())
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));

async function pollDone(client: TestClient, jobId: string): Promise<any> {
  const pending = await client.get(`/api/files/jobs/${jobId}`);
  expect(pending.status).toBe(202);
  expect(await json(pending)).toEqual({ jobId, status: 'created' });
  await t.server.worker.drain();
  const done = await client.get(`/api/files/jobs/${jobId}`);
  expect(done.status).toBe(200);
  return json(done);
}

/** A folder holding `n - 1` items (so the tree has n items). */
async function tree(o: seed.SeededLogin, name: string, n: number): Promise<any> {
  const dir = await folder(o.client, name);
  seedRows(t, o.id, dir.id, n - 1, (i) => ({ name: `${name}-${i}` }));
  return dir;
}

describe('POST /api/files/delete (to trash)', () => {
  test('with Accept: application/x-ndjson: progress from 0 in batches of max(25, ceil(N/20)), then done', async () => {
    const o = await seed.owner(t);
    const dir = await tree(o, 'hundred', 100);
    const res = await o.client.post('/api/files/delete', { ids: [dir.id] }, { accept: 'application/x-ndjson' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/x-ndjson');
    const lines = await ndjson(res);
    expect(lines.slice(0, -1)).toEqual([0, 25, 50, 75, 100].map((done) => ({ type: 'progress', done, total: 100 })));
    expect(lines.at(-1)).toEqual({ type: 'done', message: expect.any(String) });
    expect(rowCount(t, 'account_id = ? AND deleted_at IS NULL', o.id)).toBe(0);
  });

  test('a big selection batches at ceil(N/20); without the header a single {message}', async () => {
    const o = await seed.owner(t);
    const dir = await tree(o, 'nine-hundred', 900);
    const lines = await ndjson(await o.client.post('/api/files/delete', { ids: [dir.id] }, { accept: 'application/x-ndjson' }));
    expect(lines.filter((l) => l.type === 'progress').map((l) => l.done)).toEqual([
      0,
      ...Array.from({ length: 20 }, (_, i) => (i + 1) * 45),
    ]);
    const f = await upload(o.client, 'plain.txt', 'x');
    const res = await o.client.post('/api/files/delete', { ids: [f.id] });
    expect(res.headers.get('content-type')).toContain('application/json');
    expect(await json(res)).toEqual({ message: expect.any(String) });
  });

  test('the trash lists what was trashed (roots only), folders first; the tree leaves listings and search', async () => {
    const o = await seed.owner(t);
    const dir = await folder(o.client, 'docs');
    const inner = await upload(o.client, 'inner-note.txt', 'x', { parentId: dir.id });
    const loose = await upload(o.client, 'loose.txt', 'y');
    await o.client.post('/api/files/delete', { ids: [loose.id, dir.id, inner.id] });
    const trash = await listAll(o.client, '/api/files/trash?limit=1');
    expect(trash.map((i) => i.id)).toEqual([dir.id, loose.id]);
    expect(trash.every((i) => typeof i.deletedAt === 'string')).toBe(true);
    expect(await listAll(o.client, '/api/files')).toEqual([]);
    expect(await json(await o.client.get('/api/files/search?q=inner'))).toEqual([]);
    expect((await o.client.post('/api/files/delete', { ids: [loose.id] })).status).toBe(404);
    // Storage usage still counts trashed files.
    expect(t.server.ctx.services.quota.usage(o.id).used).toBe(2);
  });

  test('more than 1000 items → 202 {queued, jobId}; the job trashes the tree and the poll reports {count}', async () => {
    const o = await seed.owner(t);
    const dir = await tree(o, 'huge', 1001);
    const res = await o.client.post('/api/files/delete', { ids: [dir.id] }, { accept: 'application/x-ndjson' });
    expect(res.status).toBe(202);
    const body = await json(res);
    expect(body.queued).toBe(true);
    expect(body.jobId).toMatch(/^[0-9a-f-]{36}$/);
    const done = await pollDone(o.client, body.jobId);
    expect(done).toEqual({ jobId: body.jobId, status: 'completed', result: { count: 1001 } });
    expect(rowCount(t, 'account_id = ? AND deleted_at IS NULL', o.id)).toBe(0);
    expect((await listAll(o.client, '/api/files/trash')).map((i) => i.id)).toEqual([dir.id]);
  });
});

describe('POST /api/files/trash/restore', () => {
  test('back to the original folder, with progress; a taken name gets (n); a gone parent means the root', async () => {
    const o = await seed.owner(t);
    const dir = await folder(o.client, 'home');
    const a = await upload(o.client, 'a.txt', 'a', { parentId: dir.id });
    const sub = await tree(o, 'sub', 40);
    await o.client.post('/api/files/move', { ids: [sub.id], parentId: dir.id });
    await o.client.post('/api/files/delete', { ids: [a.id, sub.id] });
    await upload(o.client, 'a.txt', 'new a', { parentId: dir.id });
    const res = await o.client.post('/api/files/trash/restore', { ids: [a.id, sub.id] }, { accept: 'application/x-ndjson' });
    const lines = await ndjson(res);
    expect(lines[0]).toEqual({ type: 'progress', done: 0, total: 41 });
    expect(lines.at(-1)).toEqual({ type: 'done', message: expect.any(String) });
    const names = (await listAll(o.client, `/api/files?parentId=${dir.id}&sortBy=name&order=asc`)).map((i) => i.name);
    expect(names).toEqual(['sub', 'a (1).txt', 'a.txt']);
    expect((await listAll(o.client, `/api/files?parentId=${sub.id}`)).length).toBe(39);

    const lost = await upload(o.client, 'orphan.txt', 'o', { parentId: sub.id });
    await o.client.post('/api/files/delete', { ids: [lost.id] });
    await o.client.post('/api/files/delete', { ids: [dir.id] });
    const plain = await o.client.post('/api/files/trash/restore', { ids: [lost.id] });
    expect(await json(plain)).toEqual({ message: expect.any(String) });
    expect((await json(await o.client.get(`/api/files/${lost.id}/info`))).parentId).toBeNull();
    expect((await o.client.post('/api/files/trash/restore', { ids: [lost.id] })).status).toBe(404);
  });

  test('a file and its folder trashed apart and restored together: the file goes back into the folder, whatever the order', async () => {
    const o = await seed.owner(t);
    const outer = await folder(o.client, 'outer');
    const inner = await folder(o.client, 'inner', outer.id);
    const note = await upload(o.client, 'note.txt', 'n', { parentId: inner.id });
    for (const id of [note.id, inner.id, outer.id]) await o.client.post('/api/files/delete', { ids: [id] });
    expect((await o.client.post('/api/files/trash/restore', { ids: [note.id, inner.id, outer.id] })).status).toBe(200);
    expect((await listAll(o.client, '/api/files')).map((i) => i.id)).toEqual([outer.id]);
    expect((await json(await o.client.get(`/api/files/${inner.id}/info`))).parentId).toBe(outer.id);
    expect((await json(await o.client.get(`/api/files/${note.id}/info`))).parentId).toBe(inner.id);
  });

  test('more than 1000 items → queued; the job restores everything', async () => {
    const o = await seed.owner(t);
    const dir = await tree(o, 'massive', 1200);
    const q = await json(await o.client.post('/api/files/delete', { ids: [dir.id] }));
    await pollDone(o.client, q.jobId);
    const res = await o.client.post('/api/files/trash/restore', { ids: [dir.id] });
    expect(res.status).toBe(202);
    const body = await json(res);
    expect(body.queued).toBe(true);
    expect((await pollDone(o.client, body.jobId)).result).toEqual({ count: 1200 });
    expect(rowCount(t, 'account_id = ? AND deleted_at IS NULL', o.id)).toBe(1200);
  });
});

describe('POST /api/files/trash/delete and /trash/empty', () => {
  test('usage stays the sum of files and versions through a long mixed sequence, members of a share included', async () => {
    const [o, m] = [await seed.owner(t), await seed.owner(t)];
    const exact = async (ownerBytes: number, memberBytes: number) => {
      for (const [login, bytes] of [
        [o, ownerBytes],
        [m, memberBytes],
      ] as const) {
        expect(t.server.ctx.repos.users.usageCheck().find((u) => u.id === login.id)).toMatchObject({ storageUsed: bytes, actual: bytes });
        expect((await json(await login.client.get('/api/user/storage'))).used).toBe(bytes);
      }
    };
    const replace = (client: TestClient, id: string, content: string) => {
      const form = new FormData();
      form.append('file', new File([content], 'x.bin'));
      return client.request(`/api/files/${id}/replace`, { method: 'POST', body: form });
    };
    const dir = await folder(o.client, 'mixed');
    const file = await upload(o.client, 'f.txt', 'a'.repeat(100), { parentId: dir.id });
    expect((await replace(o.client, file.id, 'b'.repeat(50))).status).toBe(200);
    clock.advance(2 * 3600_000);
    expect((await replace(o.client, file.id, 'c'.repeat(70))).status).toBe(200);
    await exact(220, 0);
    const [older] = (await json(await o.client.get(`/api/files/${file.id}/versions`))).versions.slice(1);
    expect((await o.client.post(`/api/files/${file.id}/versions/${older.id}/restore`)).status).toBe(200);
    await o.client.post('/api/files/copy', { ids: [dir.id] });
    await t.server.worker.drain();
    await exact(320, 0); // the copy has no history
    await o.client.post(`/api/files/${dir.id}/members`, { email: m.email, role: 'editor' });
    const own = await upload(m.client, 'own.txt', 'z'.repeat(30));
    await m.client.post('/api/files/copy', { ids: [own.id], parentId: dir.id });
    await m.client.post('/api/files/copy', { ids: [file.id] });
    await t.server.worker.drain();
    await exact(350, 130);
    expect((await m.client.post('/api/files/move', { ids: [own.id], parentId: dir.id })).status).toBe(403);
    const inner = await upload(m.client, 'inner.txt', 'q'.repeat(11), { parentId: dir.id });
    expect((await replace(m.client, inner.id, 'r'.repeat(13))).status).toBe(200);
    await m.client.post('/api/files/delete', { ids: [inner.id] });
    await exact(374, 130);
    await o.client.post('/api/files/delete', { ids: [file.id] });
    await o.client.post('/api/files/delete', { ids: [dir.id] });
    await o.client.post('/api/files/trash/restore', { ids: [file.id] });
    await o.client.post('/api/files/trash/delete', { ids: [dir.id] });
    await t.server.worker.drain();
    await exact(344, 130);
    await o.client.post('/api/files/trash/empty');
    await t.server.worker.drain();
    await exact(320, 130);
    expect(await json(await o.client.get('/api/user/storage'))).toMatchObject({ used: 320, versions: 120 });
  });

  test('permanent delete is queued (202); rows go, then objects in batches, and usage drops', async () => {
    const o = await seed.owner(t);
    const dir = await folder(o.client, 'to-purge');
    for (let i = 0; i < 3; i++) await upload(o.client, `p${i}.txt`, 'abcd', { parentId: dir.id });
    const keep = await upload(o.client, 'keep.txt', 'keep');
    const objects = (await storedKeys(t)).length;
    await o.client.post('/api/files/delete', { ids: [dir.id] });
    const res = await o.client.post('/api/files/trash/delete', { ids: [dir.id] });
    expect(res.status).toBe(202);
    const body = await json(res);
    expect(Object.keys(body).sort()).toEqual(['jobId', 'message', 'queued']);
    expect(body.queued).toBe(true);
    expect(await pollDone(o.client, body.jobId)).toEqual({ jobId: body.jobId, status: 'completed', result: { count: 4 } });
    expect(rowCount(t, 'account_id = ?', o.id)).toBe(1);
    expect((await storedKeys(t)).length).toBe(objects - 3);
    expect(t.server.ctx.services.quota.usage(o.id).used).toBe(4);
    expect((await o.client.post('/api/files/trash/delete', { ids: [keep.id] })).status).toBe(404);
  });

  test('empty trash: queued when there is something, else a message saying it is empty', async () => {
    const o = await seed.owner(t);
    const empty = await o.client.post('/api/files/trash/empty');
    expect(empty.status).toBe(200);
    expect(await json(empty)).toEqual({ message: 'Trash is already empty' });
    const a = await upload(o.client, 'a.txt', 'a');
    const b = await tree(o, 'b', 30);
    await o.client.post('/api/files/delete', { ids: [a.id, b.id] });
    const res = await o.client.post('/api/files/trash/empty');
    expect(res.status).toBe(202);
    const body = await json(res);
    expect(body.queued).toBe(true);
    expect((await pollDone(o.client, body.jobId)).result).toEqual({ count: 31 });
    expect(rowCount(t, 'account_id = ?', o.id)).toBe(0);
    expect(t.server.ctx.services.quota.usage(o.id).used).toBe(0);
  });

  test('empty trash removes what was in the trash when it was asked for, not what is trashed while the job waits', async () => {
    const o = await seed.owner(t);
    const before = await upload(o.client, 'before.txt', 'before');
    await o.client.post('/api/files/delete', { ids: [before.id] });
    clock.advance(1000);
    const res = await o.client.post('/api/files/trash/empty');
    expect(res.status).toBe(202);
    const { jobId } = await json(res);
    clock.advance(1000);
    const after = await upload(o.client, 'after.txt', 'after');
    await o.client.post('/api/files/delete', { ids: [after.id] });
    expect((await pollDone(o.client, jobId)).result).toEqual({ count: 1 });
    const trash = await json(await o.client.get('/api/files/trash'));
    expect(trash.map((i: { id: string }) => i.id)).toEqual([after.id]);
  });

  test('trash older than TRASH_RETENTION_DAYS is purged by the daily schedule', async () => {
    const o = await seed.owner(t);
    const old = await upload(o.client, 'old.txt', 'old');
    await o.client.post('/api/files/delete', { ids: [old.id] });
    clock.advance(20 * DAY);
    const again = await seed.login(t, o.email);
    const recent = await upload(again, 'recent.txt', 'recent');
    await again.post('/api/files/delete', { ids: [recent.id] });
    clock.advance(11 * DAY);
    const stream = new SseReader(await (await seed.login(t, o.email)).get('/api/files/events'));
    expect((await stream.nextEvent()).data).toEqual({ type: 'connected' });
    await t.server.worker.drain();
    // An open trash drops it as it would after a permanent delete, as a resumed stream replays it.
    expect((await stream.nextEvent()).data).toMatchObject({ type: 'file.permanently_deleted', data: { id: old.id, name: 'old.txt' } });
    expect(await stream.quietFor(200)).toBe(true);
    await stream.close();
    expect(rowCount(t, 'id = ?', old.id)).toBe(0);
    expect(rowCount(t, 'id = ?', recent.id)).toBe(1);
    expect(t.server.ctx.services.trash.purgeExpired(0)).toBe(0);
  });
});

describe('GET /api/files/jobs/:jobId', () => {
  test('400 for a non-UUID, 404 for an unknown job, 500 for a failed one, 503 when the queue is stopped', async () => {
    const o = await seed.owner(t);
    const bad = await o.client.get('/api/files/jobs/not-a-uuid');
    expect(bad.status).toBe(400);
    expect(await json(bad)).toEqual(errors.invalidJobId);
    const missing = await o.client.get(`/api/files/jobs/${crypto.randomUUID()}`);
    expect(missing.status).toBe(404);
    expect(await json(missing)).toEqual(errors.jobNotFound);
    const failedId = t.server.ctx.queue.enqueue(
      Jobs.filesCopy,
      { accountId: o.id, loginId: o.id, ids: ['x'], parentId: 'gone-folder' },
      { accountId: o.id },
    );
    await t.server.worker.drain();
    const failed = await o.client.get(`/api/files/jobs/${failedId}`);
    expect(failed.status).toBe(500);
    expect(await json(failed)).toEqual(errors.jobFailed);
    const system = t.server.ctx.queue.enqueue(Jobs.jobsCleanup, null, { accountId: o.id });
    expect((await o.client.get(`/api/files/jobs/${system}`)).status).toBe(404);
    t.server.ctx.queue.available = false;
    try {
      const stopped = await o.client.get(`/api/files/jobs/${failedId}`);
      expect(stopped.status).toBe(503);
      expect(await json(stopped)).toEqual(errors.queueUnavailable);
      const copy = await o.client.post('/api/files/copy', { ids: [(await upload(o.client, 'c.txt', 'c')).id] });
      expect(copy.status).toBe(503);
    } finally {
      t.server.ctx.queue.available = true;
    }
    await t.server.worker.drain();
  });
});

describe('POST /api/files/copy', () => {
  test('always queued; deep copy with new objects, starred and modified kept, trashed descendants skipped, names (n)', async () => {
    const o = await seed.owner(t);
    const src = await folder(o.client, 'src');
    const inner = await folder(o.client, 'inner', src.id);
    const f1 = await upload(o.client, 'one.txt', 'one', { parentId: src.id, lastModified: '1600000000000' });
    await upload(o.client, 'two.txt', 'two', { parentId: inner.id });
    const gone = await upload(o.client, 'gone.txt', 'gone', { parentId: inner.id });
    await o.client.post('/api/files/delete', { ids: [gone.id] });
    await o.client.post('/api/files/star', { ids: [f1.id], starred: true });
    const objects = (await storedKeys(t)).length;
    const usage = t.server.ctx.services.quota.usage(o.id).used;
    const res = await o.client.post('/api/files/copy', { ids: [src.id] });
    expect(res.status).toBe(202);
    const body = await json(res);
    expect(Object.keys(body).sort()).toEqual(['jobId', 'message', 'queued']);
    const done = await pollDone(o.client, body.jobId);
    expect(done.result.count).toBe(1);
    const [copyId] = done.result.ids;
    const root = await json(await o.client.get(`/api/files/${copyId}/info`));
    expect(root).toMatchObject({ name: 'src (1)', type: 'folder', folderInfo: { totalSize: 6, fileCount: 2, folderCount: 1 } });
    const copied = await listAll(o.client, `/api/files?parentId=${copyId}&sortBy=name&order=asc`);
    expect(copied.map((i) => i.name)).toEqual(['inner', 'one.txt']);
    expect(copied[1]).toMatchObject({ starred: true, modified: new Date(1600000000000).toISOString(), shared: false });
    expect(await (await o.client.get(`/api/files/${copied[1].id}/download`)).text()).toBe('one');
    expect((await storedKeys(t)).length).toBe(objects + 2);
    expect(t.server.ctx.services.quota.usage(o.id).used).toBe(usage + 6);
    // The copy shares no object with the original: deleting the original leaves the copy readable.
    await o.client.post('/api/files/delete', { ids: [src.id] });
    await pollDone(o.client, (await json(await o.client.post('/api/files/trash/delete', { ids: [src.id] }))).jobId);
    expect(await (await o.client.get(`/api/files/${copied[1].id}/download`)).text()).toBe('one');
  });

  test('a retried copy job returns the ids of its first run and copies nothing twice', async () => {
    const o = await seed.owner(t);
    const dir = await folder(o.client, 'twice');
    await upload(o.client, 'x.txt', 'x', { parentId: dir.id });
    const file = await upload(o.client, 'y.txt', 'y');
    const { jobId } = await json(await o.client.post('/api/files/copy', { ids: [dir.id, file.id] }));
    const first = (await pollDone(o.client, jobId)).result;
    const rows = rowCount(t, 'account_id = ?', o.id);
    const objects = (await storedKeys(t)).length;
    const usage = t.server.ctx.services.quota.usage(o.id).used;
    const payload = t.server.ctx.queue.get(jobId)!.payload as {
      accountId: string;
      loginId: string;
      ids: string[];
      parentId: string | null;
    };
    const again = await t.server.ctx.services.copy.run(jobId, payload);
    expect(again).toEqual(first);
    expect(rowCount(t, 'account_id = ?', o.id)).toBe(rows);
    expect((await storedKeys(t)).length).toBe(objects);
    expect(t.server.ctx.services.quota.usage(o.id).used).toBe(usage);
  });

  test('into itself → 400; quota for the whole tree is checked first → 413; a missing target → 404', async () => {
    const o = await seed.owner(t);
    const dir = await folder(o.client, 'self');
    const child = await folder(o.client, 'child', dir.id);
    await upload(o.client, 'data.bin', 'x'.repeat(600), { parentId: child.id });
    const self = await o.client.post('/api/files/copy', { ids: [dir.id], parentId: child.id });
    expect(self.status).toBe(400);
    expect(await json(self)).toEqual({ message: 'A folder cannot be copied into itself or one of its descendants' });
    t.server.ctx.db.$client.query('UPDATE users SET storage_limit = 1000 WHERE id = ?').run(o.id);
    const over = await o.client.post('/api/files/copy', { ids: [dir.id] });
    expect(over.status).toBe(413);
    expect(await json(over)).toEqual({ message: 'Storage limit exceeded. Required: 600, available: 400.' });
    expect((await o.client.post('/api/files/copy', { ids: [dir.id], parentId: 'missing-folder-00000' })).status).toBe(404);
  });
});

describe('a job interrupted by a restart', () => {
  test('runs again after the restart and completes', async () => {
    const t2 = await startTestServer({ startWorker: false });
    try {
      const o = await seed.admin(t2);
      const dir = await folder(o.client, 'restart');
      seedRows(t2, o.id, dir.id, 1100);
      const { jobId } = await json(await o.client.post('/api/files/delete', { ids: [dir.id] }));
      // Claimed, one batch done, then the process "dies" before the handler finishes.
      expect(t2.server.ctx.queue.claim()!.id).toBe(jobId);
      t2.server.ctx.db.$client
        .query('UPDATE items SET deleted_at = 1, deleted_root_id = ? WHERE id IN (SELECT id FROM items WHERE parent_id = ? LIMIT 500)')
        .run(dir.id, dir.id);
      await t2.restart();
      const client = await seed.login(t2, o.email);
      expect((await client.get(`/api/files/jobs/${jobId}`)).status).toBe(202);
      await t2.server.worker.drain();
      const done = await json(await client.get(`/api/files/jobs/${jobId}`));
      expect(done).toEqual({ jobId, status: 'completed', result: { count: 601 } });
      expect(t2.server.ctx.db.$client.query<{ n: number }, []>('SELECT COUNT(*) AS n FROM items WHERE deleted_at IS NULL').get()!.n).toBe(
        0,
      );
    } finally {
      await t2.stop();
    }
  });
});

describe('a trash or restore streamed in batches, racing other requests', () => {
  /** Holds the next inline run of `method` after its `after`th progress line until `release`; `reached` resolves there. */
  function holdRun(method: 'planTrash' | 'planRestore', after: number) {
    const trash = t.server.ctx.services.trash;
    const original = trash[method];
    let reach!: () => void;
    let release!: () => void;
    const reached = new Promise<void>((r) => (reach = r));
    const open = new Promise<void>((r) => (release = r));
    trash[method] = (...args) => {
      trash[method] = original;
      const plan = original.apply(trash, args);
      if (plan.queued) return plan;
      const inner = plan.run;
      async function* held() {
        for (let n = 1; ; n++) {
          const step = await inner.next();
          if (step.done) return step.value;
          yield step.value;
          if (n === after) {
            reach();
            await open;
          }
        }
      }
      return { ...plan, run: held() };
    };
    return { reached, release };
  }

  const liveIn = (folderId: string) =>
    t.server.ctx.db.$client
      .query<{ id: string }, [string]>('SELECT id FROM items WHERE parent_id = ? AND deleted_at IS NULL ORDER BY id')
      .all(folderId)
      .map((r) => r.id);
  const rowOf = (id: string) =>
    t.server.ctx.db.$client
      .query<{ parentId: string | null; deletedRootId: string | null }, [string]>(
        'SELECT parent_id AS parentId, deleted_root_id AS deletedRootId FROM items WHERE id = ?',
      )
      .get(id);

  test('a trash reads the tree again at each batch: an item moved out meanwhile stays where it went (and outlives the purge), one moved in goes with the folder', async () => {
    const o = await seed.owner(t);
    const dir = await tree(o, 'moving', 100);
    const elsewhere = await folder(o.client, 'elsewhere');
    const incoming = await upload(o.client, 'incoming.txt', 'x', { parentId: elsewhere.id });
    const hold = holdRun('planTrash', 2);
    const answer = o.client.post('/api/files/delete', { ids: [dir.id] }, { accept: 'application/x-ndjson' });
    await hold.reached;
    const leaving = liveIn(dir.id).at(-1)!;
    expect((await o.client.post('/api/files/move', { ids: [leaving], parentId: elsewhere.id })).status).toBe(200);
    expect((await o.client.post('/api/files/move', { ids: [incoming.id], parentId: dir.id })).status).toBe(200);
    hold.release();
    const lines = await ndjson(await answer);
    expect(lines.at(-1)).toEqual({ type: 'done', message: 'Moved 1 item to trash; 1 item moved out of it meanwhile was left where it is' });
    expect(rowOf(leaving)).toEqual({ parentId: elsewhere.id, deletedRootId: null });
    expect(rowOf(incoming.id)).toEqual({ parentId: dir.id, deletedRootId: dir.id });
    expect((await listAll(o.client, `/api/files?parentId=${elsewhere.id}`)).map((i) => i.id)).toEqual([leaving]);
    expect(rowCount(t, 'deleted_root_id = ? AND deleted_at IS NOT NULL', dir.id)).toBe(100);
    const purge = await o.client.post('/api/files/trash/delete', { ids: [dir.id] });
    await pollDone(o.client, (await json(purge)).jobId);
    expect(rowOf(leaving)).toEqual({ parentId: elsewhere.id, deletedRootId: null });
    expect(rowOf(incoming.id)).toBeNull();
  });

  test('a trash whose selected item another request trashed first skips it and says so; a restore whose item another request restored first likewise', async () => {
    const o = await seed.owner(t);
    const files = [];
    for (const name of ['a.txt', 'b.txt', 'c.txt']) files.push(await upload(o.client, name, name));
    const big = await tree(o, 'big', 60);
    let hold = holdRun('planTrash', 2);
    let answer = o.client.post('/api/files/delete', { ids: [big.id, ...files.map((f) => f.id)] }, { accept: 'application/x-ndjson' });
    await hold.reached;
    expect((await o.client.post('/api/files/delete', { ids: [files[2]!.id] })).status).toBe(200);
    hold.release();
    let lines = await ndjson(await answer);
    expect(lines.at(-1)).toEqual({
      type: 'done',
      message: 'Moved 3 items to trash; 1 item was no longer there (another request moved it to the trash or deleted it)',
    });
    expect(rowOf(files[2]!.id)).toEqual({ parentId: null, deletedRootId: files[2]!.id });

    hold = holdRun('planRestore', 2);
    answer = o.client.post('/api/files/trash/restore', { ids: [big.id, ...files.map((f) => f.id)] }, { accept: 'application/x-ndjson' });
    await hold.reached;
    expect((await o.client.post('/api/files/trash/restore', { ids: [files[2]!.id] })).status).toBe(200);
    hold.release();
    lines = await ndjson(await answer);
    expect(lines.at(-1)).toEqual({
      type: 'done',
      message: 'Restored 3 items; 1 item was no longer in the trash (another request restored or deleted it)',
    });
    expect((await listAll(o.client, '/api/files')).map((i) => i.name).sort()).toEqual(['a.txt', 'b.txt', 'big', 'c.txt']);
  });

  test('a restore whose folder another request restored and trashed again meanwhile brings the whole folder back: nothing stays hidden under it', async () => {
    const o = await seed.owner(t);
    const big = await tree(o, 'again', 60);
    expect((await o.client.post('/api/files/delete', { ids: [big.id] })).status).toBe(200);
    const hold = holdRun('planRestore', 2);
    const answer = o.client.post('/api/files/trash/restore', { ids: [big.id] }, { accept: 'application/x-ndjson' });
    await hold.reached;
    expect((await o.client.post('/api/files/trash/restore', { ids: [big.id] })).status).toBe(200);
    expect((await o.client.post('/api/files/delete', { ids: [big.id] })).status).toBe(200);
    hold.release();
    expect((await ndjson(await answer)).at(-1)).toEqual({ type: 'done', message: 'Restored 1 item' });
    expect(rowCount(t, 'account_id = ? AND deleted_at IS NULL', o.id)).toBe(60);
    expect(await listAll(o.client, '/api/files/trash')).toEqual([]);
  });
  test('a restore whose folder another request deletes for good between two batches leaves no orphan: what it put back goes with the folder', async () => {
    const o = await seed.owner(t);
    const dir = await tree(o, 'doomed', 80);
    const sub = await folder(o.client, 'sub', dir.id);
    seedRows(t, o.id, sub.id, 30, (i) => ({ name: `deep-${i}` }));
    expect((await o.client.post('/api/files/delete', { ids: [dir.id] })).status).toBe(200);
    const hold = holdRun('planRestore', 3);
    const answer = o.client.post('/api/files/trash/restore', { ids: [dir.id] }, { accept: 'application/x-ndjson' });
    await hold.reached;
    // The first batches put members back (live, unseen under the folder still in the trash); then the folder goes for good.
    expect(rowCount(t, 'account_id = ? AND deleted_at IS NULL AND parent_id IS NOT NULL', o.id)).toBeGreaterThan(0);
    const purge = await o.client.post('/api/files/trash/delete', { ids: [dir.id] });
    const purged = await pollDone(o.client, (await json(purge)).jobId);
    hold.release();
    expect((await ndjson(await answer)).at(-1)).toEqual({
      type: 'done',
      message: 'Restored 0 items; 1 item was no longer in the trash (another request restored or deleted it)',
    });
    const doctor = await t.server.ctx.services.doctor.check();
    expect(doctor.unreachableItems).toEqual({ count: 0, items: [] });
    expect(doctor.usage.mismatches).toEqual([]);
    expect(purged).toMatchObject({ status: 'completed', result: { count: 111 } });
    expect(rowCount(t, 'account_id = ?', o.id)).toBe(0);
    // No live item anywhere under a parent that is gone (a trash entry whose folder went is not one: it goes back home).
    expect(rowCount(t, 'deleted_at IS NULL AND parent_id IS NOT NULL AND parent_id NOT IN (SELECT id FROM items)')).toBe(0);
    expect(await listAll(o.client, '/api/files')).toEqual([]);
    expect(await listAll(o.client, '/api/files/trash')).toEqual([]);
  });
});
