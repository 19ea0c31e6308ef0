import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { json, type TestClient } from '../../helpers/client.ts';
import { davLogin } from '../../helpers/dav.ts';
import { folder, folderChain, listAll, readZip, rowCount, upload } from '../../helpers/files.ts';
import * as seed from '../../helpers/seed.ts';
import { createUpload } from '../../helpers/tus.ts';
import { MAX_FOLDER_DEPTH } from '../../../src/contract/names.ts';

let t: TestServer;

beforeAll(async () => {
  t = await startTestServer({ startWorker: false });
  await seed.admin(t);
});
afterAll(() => t.stop());

const TOO_DEEP = `Folders may nest at most ${MAX_FOLDER_DEPTH} levels deep: choose a folder nearer the top`;

/** A chain of `levels` folders all called `name` under `parentId` (the root without one), made by one upload; the deepest one's id. */
async function chain(client: TestClient, name: string, levels: number, parentId?: string): Promise<string> {
  const form = new FormData();
  if (parentId) form.append('parentId', parentId);
  form.append('files', new File(['x'], 'x.txt'));
  form.append('relativePaths', `${`${name}/`.repeat(levels)}x.txt`);
  const body = await json(await client.request('/api/files/upload/bulk', { method: 'POST', body: form }));
  expect(body.failed).toEqual([]);
  return body.files[0].parentId;
}

/** A folder at the root with `height` levels of folders in it, itself included. */
async function tower(client: TestClient, name: string, height: number): Promise<string> {
  const top = await folder(client, name);
  await chain(client, 'f', height - 1, top.id);
  return top.id;
}

const folders = (accountId: string) => rowCount(t, "type = 'folder' AND account_id = ?", accountId);
const parentOf = (id: string) =>
  t.server.ctx.db.$client.query<{ p: string | null }, [string]>('SELECT parent_id AS p FROM items WHERE id = ?').get(id)?.p;

describe(`folders nest at most ${MAX_FOLDER_DEPTH} levels deep`, () => {
  test('a folder at the limit is made, one deeper is refused (API and MKCOL); a file may sit in the deepest folder', async () => {
    const o = await seed.owner(t);
    const dav = await davLogin(t, o);
    const bottom = await chain(o.client, 'a', MAX_FOLDER_DEPTH - 1);
    const last = await folder(o.client, 'last', bottom);
    const count = folders(o.id);
    const res = await o.client.post('/api/files/folder', { name: 'deeper', parentId: last.id });
    expect(res.status).toBe(400);
    expect(await json(res)).toEqual({ message: TOO_DEEP });
    const path = `${'a/'.repeat(MAX_FOLDER_DEPTH - 1)}last/`;
    const mkcol = await dav.request('MKCOL', `${path}deeper`);
    expect(mkcol.status).toBe(400);
    expect(await json(mkcol)).toEqual({ message: TOO_DEEP });
    expect(folders(o.id)).toBe(count);
    expect((await dav.put(`${path}file.txt`, 'deep')).status).toBe(201);
    expect((await upload(o.client, 'api.txt', 'deep', { parentId: last.id })).parentId).toBe(last.id);
  });

  test('an upload whose relative path would pass the limit below its parent fails before any of its folders is made', async () => {
    const o = await seed.owner(t);
    const bottom = await chain(o.client, 'a', MAX_FOLDER_DEPTH - 2);
    const count = folders(o.id);
    const form = new FormData();
    form.append('parentId', bottom);
    form.append('files', new File(['far'], 'far.txt'));
    form.append('relativePaths', 'x/y/z/far.txt');
    form.append('files', new File(['near'], 'near.txt'));
    form.append('relativePaths', 'w/near.txt');
    const body = await json(await o.client.request('/api/files/upload/bulk', { method: 'POST', body: form }));
    expect(body).toMatchObject({ total: 2, successful: 1, failedCount: 1 });
    expect(body.failed).toEqual([{ fileName: 'far.txt', error: TOO_DEEP, clientId: null }]);
    expect(folders(o.id)).toBe(count + 1);
    const tus = await createUpload(o.client, 1, { filename: 'far.txt', parentId: bottom, relativePath: 'x/y/z/far.txt' });
    expect(tus.status).toBe(400);
    expect(await json(tus)).toEqual({ message: TOO_DEEP });
    expect((await createUpload(o.client, 1, { filename: 'near.txt', parentId: bottom, relativePath: 'x/y/near.txt' })).status).toBe(201);
  });

  test('a move that would take a folder’s subtree past the limit is refused (API and MOVE); one that reaches it is made', async () => {
    const o = await seed.owner(t);
    const dav = await davLogin(t, o);
    const bottom = await chain(o.client, 'a', 200);
    const tall = await tower(o.client, 'tall', 51);
    const res = await o.client.post('/api/files/move', { ids: [tall], parentId: bottom });
    expect(res.status).toBe(400);
    expect(await json(res)).toEqual({ message: TOO_DEEP });
    const move = await dav.request('MOVE', 'tall/', { headers: { destination: `${t.url}/dav/${'a/'.repeat(200)}tall/` } });
    expect(move.status).toBe(400);
    expect(parentOf(tall)).toBeNull();
    const fits = await tower(o.client, 'fits', 50);
    expect((await o.client.post('/api/files/move', { ids: [fits], parentId: bottom })).status).toBe(200);
    expect(parentOf(fits)).toBe(bottom);
    // Up or sideways is always allowed: nothing goes deeper.
    expect((await o.client.post('/api/files/move', { ids: [fits], parentId: null })).status).toBe(200);
    expect(parentOf(fits)).toBeNull();
  });

  test('a copy that would pass the limit is refused with nothing written (API job and COPY), also when the target went deeper after it was queued', async () => {
    const o = await seed.owner(t);
    const dav = await davLogin(t, o);
    const bottom = await chain(o.client, 'a', 200);
    const tall = await tower(o.client, 'tall', 51);
    const count = folders(o.id);
    const res = await o.client.post('/api/files/copy', { ids: [tall], parentId: bottom });
    expect(res.status).toBe(400);
    expect(await json(res)).toEqual({ message: TOO_DEEP });
    const copy = await dav.request('COPY', 'tall/', { headers: { destination: `${t.url}/dav/${'a/'.repeat(200)}tall/` } });
    expect(copy.status).toBe(400);
    expect(folders(o.id)).toBe(count);

    const fits = await tower(o.client, 'fits', 50);
    const target = await folder(o.client, 'target');
    const queued = await json(await o.client.post('/api/files/copy', { ids: [fits], parentId: target.id }));
    expect((await o.client.post('/api/files/move', { ids: [target.id], parentId: bottom })).status).toBe(200);
    const before = folders(o.id);
    await t.server.worker.drain();
    expect((await o.client.get(`/api/files/jobs/${queued.jobId}`)).status).toBe(500);
    expect(folders(o.id)).toBe(before);
  });

  test('a folder restored from the trash into a folder that went too deep meanwhile goes back to the root, whole', async () => {
    const o = await seed.owner(t);
    const bottom = await chain(o.client, 'p', 240);
    const inner = await tower(o.client, 'inner', 6);
    expect((await o.client.post('/api/files/move', { ids: [inner], parentId: bottom })).status).toBe(200);
    expect((await o.client.post('/api/files/delete', { ids: [inner] })).status).toBe(200);
    const [p] = (await listAll(o.client, '/api/files')).filter((i) => i.name === 'p');
    const deeper = await chain(o.client, 'q', 10);
    expect((await o.client.post('/api/files/move', { ids: [p.id], parentId: deeper })).status).toBe(200);
    expect((await o.client.post('/api/files/trash/restore', { ids: [inner] })).status).toBe(200);
    expect(parentOf(inner)).toBeNull();
    expect(rowCount(t, "type = 'folder' AND deleted_at IS NULL AND account_id = ?", o.id)).toBe(folders(o.id));
  });
});

describe('a chain of folders deeper than the limit, made before it existed', () => {
  test('info, listing, ZIP, copy, moves, WebDAV PROPFIND and MOVE, trash, restore and permanent delete of it answer, or refuse with the limit, never 500', async () => {
    const o = await seed.owner(t);
    const top = await folder(o.client, 'Old chain');
    const LEVELS = 400;
    const deepest = folderChain(t, o.id, top.id, LEVELS);
    await upload(o.client, 'bottom.txt', 'at the bottom', { parentId: deepest });
    const other = await folder(o.client, 'Elsewhere');
    const dav = await davLogin(t, o);
    const bottom = `Old%20chain/${'d/'.repeat(LEVELS)}bottom.txt`;
    const refused = async (res: Response) => {
      expect(res.status).toBe(400);
      expect((await json(res)).message).toBe(TOO_DEEP);
    };

    expect((await o.client.get(`/api/files/${deepest}/info`)).status).toBe(200);
    expect((await listAll(o.client, `/api/files?parentId=${deepest}`)).map((i) => i.name)).toEqual(['bottom.txt']);
    const zip = readZip(Buffer.from(await (await o.client.get(`/api/files/${top.id}/download`)).arrayBuffer()));
    expect(zip.at(-1)!.name).toBe(`Old chain/${'d/'.repeat(LEVELS)}bottom.txt`);
    await refused(await o.client.post('/api/files/copy', { ids: [top.id] }));
    await refused(await o.client.post('/api/files/move', { ids: [top.id], parentId: other.id }));
    const found = await dav.propfind(bottom, '0');
    expect(found.status).toBe(207);
    expect(await found.text()).toContain('bottom.txt');
    expect((await dav.propfind(`Old%20chain/${'d/'.repeat(LEVELS)}`, '1')).status).toBe(207);
    const davMove = await dav.request('MOVE', 'Old%20chain/', { headers: { destination: `${t.url}/dav/Elsewhere/Old%20chain` } });
    expect(davMove.status).toBeGreaterThanOrEqual(400);
    expect(davMove.status).toBeLessThan(500);

    expect((await o.client.post('/api/files/delete', { ids: [top.id] })).status).toBe(200);
    expect((await o.client.post('/api/files/trash/restore', { ids: [top.id] })).status).toBe(200);
    expect((await dav.propfind(bottom, '0')).status).toBe(207);
    expect((await o.client.post('/api/files/delete', { ids: [top.id] })).status).toBe(200);
    expect((await o.client.post('/api/files/trash/delete', { ids: [top.id] })).status).toBe(202);
    await t.server.worker.drain();
    expect(rowCount(t, 'account_id = ?', o.id)).toBe(1);
  }, 60_000);
});
