import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { json } from '../../helpers/client.ts';
import { folder, heldBody, upload } from '../../helpers/files.ts';
import { davLogin } from '../../helpers/dav.ts';
import { errors } from '../../helpers/errors.ts';
import * as seed from '../../helpers/seed.ts';
import { holdCalls } from '../../helpers/hold-calls.ts';

let t: TestServer;

beforeAll(async () => {
  t = await startTestServer({ startWorker: false });
});
afterAll(() => t.stop());

/** Holds every object copy of the store until `release`; `held` resolves when the first one is held. */
const holdCopies = () => holdCalls(t.server.ctx.driver, 'copy');

/** Tree invariants of one account: live items under live folders, and each folder's tree size (and the root's) the sum of the live files below it. */
function treeProblems(accountId: string): string[] {
  const db = t.server.ctx.db.$client;
  const out: string[] = [];
  for (const r of db
    .query<{ name: string }, [string]>(
      `SELECT c.name FROM items c LEFT JOIN items p ON p.id = c.parent_id
       WHERE c.account_id = ? AND c.deleted_at IS NULL AND c.parent_id IS NOT NULL AND (p.id IS NULL OR p.deleted_at IS NOT NULL)`,
    )
    .all(accountId))
    out.push(`${r.name} is live in a folder that is not`);
  for (const r of db
    .query<{ name: string; treeSize: number; actual: number }, [string]>(
      `WITH RECURSIVE down(root, id) AS (SELECT id, id FROM items WHERE account_id = ?1 AND type = 'folder' AND deleted_at IS NULL
         UNION ALL SELECT down.root, i.id FROM items i JOIN down ON i.parent_id = down.id WHERE i.deleted_at IS NULL)
       SELECT f.name, f.tree_size AS treeSize,
         (SELECT COALESCE(SUM(i.size), 0) FROM down JOIN items i ON i.id = down.id WHERE down.root = f.id AND i.type = 'file') AS actual
       FROM items f WHERE f.account_id = ?1 AND f.type = 'folder' AND f.deleted_at IS NULL`,
    )
    .all(accountId))
    if (r.treeSize !== r.actual) out.push(`${r.name} counts ${r.treeSize} bytes, holds ${r.actual}`);
  const root = db.query<{ n: number }, [string]>('SELECT size AS n FROM tree_versions WHERE account_id = ?').get(accountId)?.n ?? 0;
  const live = db
    .query<{ n: number }, [string]>(
      `SELECT COALESCE(SUM(size), 0) AS n FROM items WHERE account_id = ? AND type = 'file' AND deleted_at IS NULL`,
    )
    .get(accountId)!.n;
  if (root !== live) out.push(`the root counts ${root} bytes, holds ${live}`);
  return out;
}

const liveNames = (accountId: string, parentId: string) =>
  t.server.ctx.db.$client
    .query<{ name: string }, [string, string]>(
      'SELECT name FROM items WHERE account_id = ? AND parent_id = ? AND deleted_at IS NULL ORDER BY name',
    )
    .all(accountId, parentId)
    .map((r) => r.name);

const nameTaken = { message: 'An item with this name already exists' };

describe('a copy racing other changes', () => {
  test('a copy job whose target folder goes to the trash while its bytes are copied puts nothing there, and fails', async () => {
    const o = await seed.owner(t);
    const target = await folder(o.client, 'target');
    const file = await upload(o.client, 'report.txt', 'twelve bytes');
    t.server.ctx.queue.available = true;
    const { jobId } = await json(await o.client.post('/api/files/copy', { ids: [file.id], parentId: target.id }));
    const hold = holdCopies();
    const running = t.server.worker.drain();
    await hold.held;
    expect((await o.client.post('/api/files/delete', { ids: [target.id] })).status).toBe(200);
    hold.release();
    await running;
    expect(treeProblems(o.id)).toEqual([]);
    expect(liveNames(o.id, target.id)).toEqual([]);
    const poll = await o.client.get(`/api/files/jobs/${jobId}`);
    expect(poll.status).toBe(500);
    expect(await json(poll)).toEqual(errors.jobFailed);
  });

  test('a copied folder trashed while its files are copied gets no live files inside', async () => {
    const o = await seed.owner(t);
    const source = await folder(o.client, 'album');
    await upload(o.client, 'one.jpg', 'first picture', { parentId: source.id });
    t.server.ctx.queue.available = true;
    await o.client.post('/api/files/copy', { ids: [source.id] });
    const hold = holdCopies();
    const running = t.server.worker.drain();
    await hold.held;
    const copy = t.server.ctx.db.$client
      .query<{ id: string }, [string]>(`SELECT id FROM items WHERE account_id = ? AND name = 'album (1)'`)
      .get(o.id)!;
    expect((await o.client.post('/api/files/delete', { ids: [copy.id] })).status).toBe(200);
    hold.release();
    await running;
    expect(treeProblems(o.id)).toEqual([]);
  });

  test('WebDAV COPY: a destination name taken while the bytes are copied is 409, the other item stays', async () => {
    const o = await seed.owner(t);
    const dav = await davLogin(t, o);
    await upload(o.client, 'notes.txt', 'the source');
    const hold = holdCopies();
    const answer = dav.request('COPY', 'notes.txt', { headers: { destination: `${t.url}/dav/copy.txt`, overwrite: 'F' } });
    await hold.held;
    const other = await upload(o.client, 'COPY.txt', 'uploaded meanwhile');
    hold.release();
    const res = await answer;
    expect(res.status).toBe(409);
    expect(await json(res)).toEqual(nameTaken);
    const rows = t.server.ctx.db.$client
      .query<{ id: string; name: string }, [string]>(
        `SELECT id, name FROM items WHERE account_id = ? AND deleted_at IS NULL AND name_key LIKE 'copy%'`,
      )
      .all(o.id);
    expect(rows).toEqual([{ id: other.id, name: 'COPY.txt' }]);
    expect(treeProblems(o.id)).toEqual([]);
  });

  test('WebDAV COPY of a folder: an item put into the new folder while the copy runs keeps its name, the copy takes a free one', async () => {
    const o = await seed.owner(t);
    const dav = await davLogin(t, o);
    const source = await folder(o.client, 'docs');
    await upload(o.client, 'a.txt', 'copied', { parentId: source.id });
    const hold = holdCopies();
    const answer = dav.request('COPY', 'docs', { headers: { destination: `${t.url}/dav/docs2`, overwrite: 'F' } });
    await hold.held;
    expect((await dav.put('docs2/a.txt', 'written meanwhile')).status).toBe(201);
    hold.release();
    expect((await answer).status).toBe(201);
    const copy = t.server.ctx.db.$client
      .query<{ id: string }, [string]>(`SELECT id FROM items WHERE account_id = ? AND name = 'docs2'`)
      .get(o.id)!;
    expect(liveNames(o.id, copy.id)).toEqual(['a (1).txt', 'a.txt']);
    expect(treeProblems(o.id)).toEqual([]);
  });

  test('WebDAV COPY of a folder that fails part way removes what it copied, not a file another door put into the new folder', async () => {
    const o = await seed.owner(t);
    const dav = await davLogin(t, o);
    const source = await folder(o.client, 'photos');
    await upload(o.client, 'a.bin', new Uint8Array(1000), { parentId: source.id });
    await upload(o.client, 'b.bin', new Uint8Array(1000), { parentId: source.id });
    // Room for the copy when it starts; the file written meanwhile takes most of it.
    t.server.ctx.db.$client.query('UPDATE users SET storage_limit = ? WHERE id = ?').run(4100, o.id);
    const hold = holdCopies();
    const answer = dav.request('COPY', 'photos', { headers: { destination: `${t.url}/dav/backup`, overwrite: 'F' } });
    await hold.held;
    expect((await dav.put('backup/mine.txt', 'x'.repeat(1500))).status).toBe(201);
    hold.release();
    const res = await answer;
    expect(res.status).toBe(507);
    const backup = t.server.ctx.db.$client
      .query<{ id: string }, [string]>(`SELECT id FROM items WHERE account_id = ? AND name = 'backup' AND deleted_at IS NULL`)
      .get(o.id)!;
    expect(liveNames(o.id, backup.id)).toEqual(['mine.txt']);
    expect(await (await dav.request('GET', 'backup/mine.txt')).text()).toBe('x'.repeat(1500));
    expect(liveNames(o.id, source.id)).toEqual(['a.bin', 'b.bin']);
    expect(treeProblems(o.id)).toEqual([]);
  });

  test('a folder copy whose new folder is moved inside its source meanwhile copies what the source holds, not its own copy', async () => {
    const o = await seed.owner(t);
    const dav = await davLogin(t, o);
    const source = await folder(o.client, 'src');
    // The walk lists a folder's children in id order: the file goes in the first one, the copy is moved into the second.
    const [first, second] = [await folder(o.client, 'one', source.id), await folder(o.client, 'two', source.id)].sort((a, b) =>
      a.id < b.id ? -1 : 1,
    );
    await upload(o.client, 'x.bin', new Uint8Array(1000), { parentId: first.id });
    // A copy that kept copying itself would stop at the quota (413) instead of filling the disk.
    t.server.ctx.db.$client.query('UPDATE users SET storage_limit = ? WHERE id = ?').run(64 * 1024, o.id);
    const hold = holdCopies();
    const answer = dav.request('COPY', 'src', { headers: { destination: `${t.url}/dav/dst` } });
    await hold.held;
    const copy = t.server.ctx.db.$client
      .query<{ id: string }, [string]>(`SELECT id FROM items WHERE account_id = ? AND name = 'dst'`)
      .get(o.id)!;
    expect((await o.client.post('/api/files/move', { ids: [copy.id], parentId: second.id })).status).toBe(200);
    hold.release();
    expect((await answer).status).toBe(201);
    const names = t.server.ctx.db.$client
      .query<{ name: string }, [string]>('SELECT name FROM items WHERE account_id = ? AND deleted_at IS NULL ORDER BY name')
      .all(o.id)
      .map((r) => r.name);
    expect(names).toEqual(['dst', 'one', 'one', 'src', 'two', 'two', 'x.bin', 'x.bin']);
    expect(treeProblems(o.id)).toEqual([]);
  });

  test('WebDAV COPY of a file deleted for good while its bytes are copied is 404, not a storage fault', async () => {
    const o = await seed.owner(t);
    const dav = await davLogin(t, o);
    const file = await upload(o.client, 'draft.txt', 'soon gone');
    const hold = holdCopies();
    const answer = dav.request('COPY', 'draft.txt', { headers: { destination: `${t.url}/dav/kept.txt` } });
    await hold.held;
    t.server.ctx.queue.available = true;
    expect((await o.client.post('/api/files/delete', { ids: [file.id] })).status).toBe(200);
    expect((await o.client.post('/api/files/trash/delete', { ids: [file.id] })).status).toBe(202);
    await t.server.worker.drain();
    hold.release();
    const res = await answer;
    expect(res.status).toBe(404);
    expect(await json(res)).toEqual({ message: 'File or folder not found' });
    const live = t.server.ctx.db.$client.query<{ n: number }, [string]>(
      'SELECT COUNT(*) AS n FROM items WHERE account_id = ? AND deleted_at IS NULL',
    );
    expect(live.get(o.id)!.n).toBe(0);
    expect(treeProblems(o.id)).toEqual([]);
  });
});

describe('a WebDAV PUT racing another door', () => {
  test('a PUT with If-Match over a file another door replaces while its bytes arrive is 412; the other content stays current', async () => {
    const o = await seed.owner(t);
    const dav = await davLogin(t, o);
    const file = await upload(o.client, 'doc.txt', 'first');
    const etag = (await dav.request('HEAD', 'doc.txt')).headers.get('etag')!;
    const { body, release: more } = heldBody();
    const put = dav.put('doc.txt', body, { 'content-length': '2000', 'if-match': etag });
    await new Promise((r) => setTimeout(r, 50));
    const form = new FormData();
    form.append('file', new File(['saved in the web app'], 'doc.txt'));
    expect((await o.client.request(`/api/files/${file.id}/replace`, { method: 'POST', body: form })).status).toBe(200);
    more();
    const res = await put;
    expect(res.status).toBe(412);
    expect(await json(res)).toEqual({
      message: 'The file changed while this write was sent: its If-Match (or If) condition no longer holds',
    });
    expect(await (await dav.request('GET', 'doc.txt')).text()).toBe('saved in the web app');
    // Held to the ETag as it is now, the PUT goes through.
    const etag2 = (await dav.request('HEAD', 'doc.txt')).headers.get('etag')!;
    expect((await dav.put('doc.txt', 'third', { 'if-match': etag2 })).status).toBe(204);
    expect(await (await dav.request('GET', 'doc.txt')).text()).toBe('third');
    expect(treeProblems(o.id)).toEqual([]);
  });

  test('a new file whose name a folder takes while its bytes arrive is 409, not a file under another name', async () => {
    const o = await seed.owner(t);
    const dav = await davLogin(t, o);
    const { body, release: more } = heldBody();
    const put = dav.put('plans', body, { 'content-length': '2000' });
    await new Promise((r) => setTimeout(r, 50));
    expect((await o.client.post('/api/files/folder', { name: 'Plans' })).status).toBe(200);
    more();
    const res = await put;
    expect(res.status).toBe(409);
    expect(await json(res)).toEqual(nameTaken);
    const rows = t.server.ctx.db.$client
      .query<{ name: string; type: string }, [string]>('SELECT name, type FROM items WHERE account_id = ? AND deleted_at IS NULL')
      .all(o.id);
    expect(rows).toEqual([{ name: 'Plans', type: 'folder' }]);
  });
});

describe('a WebDAV COPY onto a file racing another door', () => {
  const lockBody = `<D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype><D:owner>other</D:owner></D:lockinfo>`;

  test('its If header is checked again once the bytes are copied: a destination saved (412) or locked (423) meanwhile keeps what the other door left', async () => {
    const o = await seed.owner(t);
    const dav = await davLogin(t, o);
    const other = await davLogin(t, o, 'another device');
    await upload(o.client, 'notes.txt', 'the source');
    for (const race of ['saved', 'locked'] as const) {
      const file = await upload(o.client, `${race}.txt`, 'first');
      const etag = (await dav.request('HEAD', `${race}.txt`)).headers.get('etag')!;
      const hold = holdCopies();
      const answer = dav.request('COPY', 'notes.txt', {
        headers: { destination: `${t.url}/dav/${race}.txt`, if: `<${t.url}/dav/${race}.txt> ([${etag}])` },
      });
      await hold.held;
      if (race === 'saved') {
        const form = new FormData();
        form.append('file', new File(['saved in the web app'], `${race}.txt`));
        expect((await o.client.request(`/api/files/${file.id}/replace`, { method: 'POST', body: form })).status).toBe(200);
      } else expect((await other.request('LOCK', `${race}.txt`, { body: lockBody })).status).toBe(200);
      hold.release();
      const res = await answer;
      expect({ race, status: res.status }).toEqual({ race, status: race === 'saved' ? 412 : 423 });
      expect(await (await dav.request('GET', `${race}.txt`)).text()).toBe(race === 'saved' ? 'saved in the web app' : 'first');
      // The copy's object was not kept: the file's versions are only what the other door made.
      const versions = (await json(await o.client.get(`/api/files/${file.id}/versions`))).versions ?? [];
      expect({ race, versions: versions.length }).toEqual({ race, versions: race === 'saved' ? 1 : 0 });
      expect(treeProblems(o.id)).toEqual([]);
    }
  });

  test('a COPY to a new name: a depth-infinity LOCK taken on its folder by another client while the bytes are copied → 423, nothing lands', async () => {
    const o = await seed.owner(t);
    const dav = await davLogin(t, o);
    const other = await davLogin(t, o, 'another device');
    await upload(o.client, 'source.txt', 'the source');
    for (const what of ['file', 'folder'] as const) {
      const box = `Box-${what}`;
      expect((await dav.request('MKCOL', box)).status).toBe(201);
      if (what === 'folder') {
        expect((await dav.request('MKCOL', 'Tree')).status).toBe(201);
        expect((await dav.put('Tree/inside.txt', 'inside')).status).toBe(201);
      }
      const from = what === 'file' ? 'source.txt' : 'Tree';
      const hold = holdCopies();
      const answer = dav.request('COPY', from, { headers: { destination: `${t.url}/dav/${box}/copy` } });
      await hold.held;
      expect((await other.request('LOCK', box, { headers: { depth: 'infinity' }, body: lockBody })).status).toBe(200);
      hold.release();
      expect({ what, status: (await answer).status }).toEqual({ what, status: 423 });
      expect({ what, status: (await dav.request('HEAD', `${box}/copy`)).status }).toEqual({ what, status: 404 });
      expect(treeProblems(o.id)).toEqual([]);
    }
  });
});
