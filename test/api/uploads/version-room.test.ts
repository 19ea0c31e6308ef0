import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { randomBytes } from 'node:crypto';
import { json, type TestClient } from '../../helpers/client.ts';
import { davLogin } from '../../helpers/dav.ts';
import { folder, listAll, upload, uploadRaw } from '../../helpers/files.ts';
import * as seed from '../../helpers/seed.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { createUpload, patchUpload, TUS } from '../../helpers/tus.ts';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ startWorker: false });
  await seed.admin(t);
});
afterAll(() => t.stop());

function setLimit(accountId: string, bytes: number | null) {
  t.server.ctx.db.$client.query('UPDATE users SET storage_limit = ? WHERE id = ?').run(bytes, accountId);
}

function replace(client: TestClient, id: string, content: Uint8Array): Promise<Response> {
  const form = new FormData();
  form.append('file', new File([content], 'ignored.bin'));
  return client.request(`/api/files/${id}/replace`, { method: 'POST', body: form });
}

async function replaced(client: TestClient, id: string, content: Uint8Array): Promise<void> {
  const res = await replace(client, id, content);
  if (res.status !== 200) throw new Error(`replace: ${res.status} ${await res.text()}`);
}

async function versions(client: TestClient, id: string): Promise<Array<{ id: string; size: number }>> {
  const res = await client.get(`/api/files/${id}/versions`);
  if (res.status !== 200) throw new Error(`versions: ${res.status} ${await res.text()}`);
  return (await json(res)).versions;
}

/** A private file of `sizes[0]` bytes replaced by each later size in turn: one version per earlier size. */
async function fileWithHistory(client: TestClient, sizes: number[]): Promise<{ id: string; first: Buffer }> {
  const private_ = await folder(client, `Private ${randomBytes(3).toString('hex')}`);
  const first = randomBytes(sizes[0]!);
  const file = await upload(client, 'diary.bin', first, { parentId: private_.id });
  for (const size of sizes.slice(1)) await replaced(client, file.id, randomBytes(size));
  return { id: file.id, first };
}

async function dropLink(owner: seed.SeededLogin): Promise<string> {
  const drop = await folder(owner.client, 'Drop');
  const res = await owner.client.post('/api/files/share', { ids: [drop.id], shared: true, mode: 'upload' });
  expect(res.status).toBe(200);
  return /\/s\/([A-Za-z0-9_-]+)/.exec((await json(res)).links[drop.id])![1]!;
}

/** POST /s/<token>/tus as an anonymous visitor. */
function visitorCreate(token: string, length: number): Promise<Response> {
  return fetch(`${t.url}/s/${token}/tus`, {
    method: 'POST',
    headers: { ...TUS, 'Upload-Length': String(length), 'Upload-Metadata': `filename ${Buffer.from('x.bin').toString('base64')}` },
  });
}

async function sharedWithEditor(owner: seed.SeededLogin): Promise<{ root: any; editor: seed.SeededLogin }> {
  const root = await folder(owner.client, 'Team');
  const editor = await seed.owner(t);
  expect((await owner.client.post(`/api/files/${root.id}/members`, { email: editor.email, role: 'editor' })).status).toBe(201);
  return { root, editor };
}

const free = async (client: TestClient) => (await json(await client.get('/api/user/storage'))).free;

describe("the account's versions make room only for bytes its own logins commit", () => {
  test("a drop link's visitor cannot reserve the owner's history: 413, every version stays, the free space is still taken", async () => {
    const o = await seed.owner(t);
    const file = await fileWithHistory(o.client, [1000, 1000, 1000, 1000, 1000]);
    const token = await dropLink(o);
    setLimit(o.id, 8000);
    // 3000 free, 4000 in versions: a reservation of both is refused rather than remove the versions.
    const refused = await visitorCreate(token, 7000);
    expect(refused.status).toBe(413);
    expect((await json(refused)).message).toBe('Storage limit exceeded. Required: 7000, available: 3000.');
    expect(await versions(o.client, file.id)).toHaveLength(4);
    const taken = await visitorCreate(token, 3000);
    expect(taken.status).toBe(201);
    expect(await free(o.client)).toBe(0);
    const ended = await fetch(t.url + taken.headers.get('location')!, { method: 'DELETE', headers: TUS });
    expect(ended.status).toBe(204);
    expect(await versions(o.client, file.id)).toHaveLength(4);
    expect(await free(o.client)).toBe(3000);
  });

  test("an editor's upload into a shared folder is refused (413) rather than remove the owner's private versions, plain or tus", async () => {
    const o = await seed.owner(t);
    const file = await fileWithHistory(o.client, [1000, 1000, 1000, 1000]);
    const { root, editor } = await sharedWithEditor(o);
    setLimit(o.id, 4500);
    const plain = await uploadRaw(editor.client, 'big.bin', randomBytes(2000), { parentId: root.id });
    expect(plain.status).toBe(413);
    const resumable = await createUpload(editor.client, 2000, { filename: 'big.bin', parentId: root.id });
    expect(resumable.status).toBe(413);
    expect(await versions(o.client, file.id)).toHaveLength(3);
    // What fits in the free space still goes in.
    expect((await uploadRaw(editor.client, 'small.bin', randomBytes(400), { parentId: root.id })).status).toBe(200);
    expect(await versions(o.client, file.id)).toHaveLength(3);
  });

  test("an editor's 100 replacements of a shared file stop at the free space and leave its history whole", async () => {
    const o = await seed.owner(t);
    const { root, editor } = await sharedWithEditor(o);
    const original = randomBytes(100);
    const shared = await upload(o.client, 'notes.bin', original, { parentId: root.id });
    setLimit(o.id, 100 + 2000);
    const statuses: number[] = [];
    for (let i = 0; i < 100; i++) statuses.push((await replace(editor.client, shared.id, randomBytes(100))).status);
    // Each replacement keeps the content before as a version: 20 fit in 2000 free bytes.
    expect(statuses.filter((s) => s === 200)).toHaveLength(20);
    expect(statuses.slice(20).every((s) => s === 413)).toBe(true);
    const history = await versions(o.client, shared.id);
    expect(history).toHaveLength(20);
    const oldest = await o.client.get(`/api/files/${shared.id}/versions/${history.at(-1)!.id}/download`);
    expect(Buffer.from(await oldest.arrayBuffer()).equals(original)).toBe(true);
  });

  test("an editor's copy into a shared folder takes only the free space, checked again when the job commits its bytes", async () => {
    const o = await seed.owner(t);
    const file = await fileWithHistory(o.client, [1000, 1000, 1000, 1000]);
    const { root, editor } = await sharedWithEditor(o);
    const big = await upload(editor.client, 'big.bin', randomBytes(2000));
    const small = await upload(editor.client, 'small.bin', randomBytes(400));
    setLimit(o.id, 4500);
    const refused = await editor.client.post('/api/files/copy', { ids: [big.id], parentId: root.id });
    expect(refused.status).toBe(413);
    expect((await json(refused)).message).toBe('Storage limit exceeded. Required: 2000, available: 500.');
    expect(await versions(o.client, file.id)).toHaveLength(3);
    // It fits when queued; by the time the job runs the free space is gone, and the versions stay.
    expect((await editor.client.post('/api/files/copy', { ids: [small.id], parentId: root.id })).status).toBe(202);
    setLimit(o.id, 4000);
    await t.server.worker.drain();
    expect(await listAll(o.client, `/api/files?parentId=${root.id}`)).toEqual([]);
    expect(await versions(o.client, file.id)).toHaveLength(3);
  });

  test("an editor's WebDAV COPY inside a shared folder is 507 beyond the free space; the owner's versions stay", async () => {
    const o = await seed.owner(t);
    const file = await fileWithHistory(o.client, [1000, 1000, 1000, 1000]);
    const { root, editor } = await sharedWithEditor(o);
    await upload(o.client, 'notes.bin', randomBytes(1000), { parentId: root.id });
    setLimit(o.id, 5500);
    const dav = await davLogin(t, editor);
    const res = await dav.request('COPY', 'Shared%20with%20me/Team/notes.bin', {
      headers: { destination: `${t.url}/dav/Shared%20with%20me/Team/copy.bin` },
    });
    expect(res.status).toBe(507);
    expect(await versions(o.client, file.id)).toHaveLength(3);
    expect((await listAll(o.client, `/api/files?parentId=${root.id}`)).map((i) => i.name)).toEqual(['notes.bin']);
  });

  test("the owner's own copy counts on versions and removes them only when the job commits its bytes", async () => {
    const o = await seed.owner(t);
    const file = await fileWithHistory(o.client, [1000, 1000, 1000, 1000]);
    const target = await folder(o.client, 'Copies');
    setLimit(o.id, 4500);
    expect((await o.client.post('/api/files/copy', { ids: [file.id], parentId: target.id })).status).toBe(202);
    expect(await versions(o.client, file.id)).toHaveLength(3);
    await t.server.worker.drain();
    expect((await listAll(o.client, `/api/files?parentId=${target.id}`)).map((i) => i.name)).toEqual(['diary.bin']);
    // 500 were free: the oldest version (1000 bytes) made room for the other 500.
    expect(await versions(o.client, file.id)).toHaveLength(2);
  });

  test("the owner's own tus upload counts on versions, removing them only once its bytes are committed", async () => {
    const o = await seed.owner(t);
    const file = await fileWithHistory(o.client, [600, 700, 800]);
    setLimit(o.id, 2600);
    // 500 free and 1300 in versions: 1000 bytes fit, and nothing goes while they are only reserved.
    let created = await createUpload(o.client, 1000, { filename: 'later.bin' });
    expect(created.status).toBe(201);
    expect((await versions(o.client, file.id)).map((v) => v.size)).toEqual([700, 600]);
    expect((await o.client.request(created.headers.get('location')!, { method: 'DELETE', headers: TUS })).status).toBe(204);
    expect((await versions(o.client, file.id)).map((v) => v.size)).toEqual([700, 600]);

    created = await createUpload(o.client, 1000, { filename: 'later.bin' });
    expect(created.status).toBe(201);
    // Reserved on versions already: another reservation may not count on them too.
    expect((await createUpload(o.client, 1000, { filename: 'twice.bin' })).status).toBe(413);
    expect((await patchUpload(o.client, created.headers.get('location')!, 0, randomBytes(1000))).status).toBe(204);
    // The commit removed the oldest version, just enough for its 500 bytes beyond the free space.
    expect((await versions(o.client, file.id)).map((v) => v.size)).toEqual([700]);
    expect(await json(await o.client.get('/api/user/storage'))).toMatchObject({ used: 2500, total: 2600, versions: 700 });
  });
});
