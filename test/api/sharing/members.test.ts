import { describe, expect, test } from 'bun:test';
import sharp from 'sharp';
import { json, type TestClient } from '../../helpers/client.ts';
import { eventually } from '../../helpers/eventually.ts';
import { downloaded, folder, heldBody, listAll, readZip, seedRows, SseReader, upload, uploadRaw } from '../../helpers/files.ts';
import * as seed from '../../helpers/seed.ts';
import type { TestServer } from '../../helpers/server.ts';
import { serverWithAdmin } from '../../helpers/suite.ts';
import { parseJson, runCli } from '../../helpers/cli.ts';
import { createUpload, headUpload, patchUpload, TUS } from '../../helpers/tus.ts';
import { newGroup } from '../../helpers/groups.ts';

let t: TestServer;
let admin: seed.SeededLogin;

serverWithAdmin((s) => ({ t, admin } = s));

/** An owner with a shared folder `Family` holding `photo.txt` and a subfolder `Trips`. */
async function sharedFolder() {
  const owner = await seed.owner(t);
  const root = await folder(owner.client, 'Family');
  const file = await upload(owner.client, 'photo.txt', 'photo bytes', { parentId: root.id });
  const sub = await folder(owner.client, 'Trips', root.id);
  const outside = await folder(owner.client, 'Private');
  const secret = await upload(owner.client, 'secret.txt', 'secret', { parentId: outside.id });
  return { owner, root, file, sub, outside, secret };
}

async function addMember(owner: TestClient, itemId: string, email: string, role: 'viewer' | 'editor') {
  const res = await owner.post(`/api/files/${itemId}/members`, { email, role });
  expect(res.status).toBe(201);
  return (await json(res)).member;
}

/** sharedFolder, with an editor and a viewer of it, and a stranger to it. */
async function sharedWithEditorAndViewer() {
  const shared = await sharedFolder();
  const editor = await seed.owner(t);
  const viewer = await seed.owner(t);
  const stranger = await seed.owner(t);
  await addMember(shared.owner.client, shared.root.id, editor.email, 'editor');
  await addMember(shared.owner.client, shared.root.id, viewer.email, 'viewer');
  return { ...shared, editor, viewer, stranger };
}

async function stream(client: TestClient): Promise<SseReader> {
  const res = await client.get('/api/files/events');
  expect(res.status).toBe(200);
  const reader = new SseReader(res);
  expect(await reader.nextData()).toEqual({ type: 'connected' });
  return reader;
}

/** The next event of `type` on a stream, skipping others. */
async function nextOfType(reader: SseReader, type: string): Promise<any> {
  for (;;) {
    const event = await reader.nextData(10_000);
    if (event.type === type) return event;
  }
}

const move = (c: TestClient, ids: string[], parentId: string | null) => c.post('/api/files/move', { ids, parentId });
const status = async (res: Promise<Response>) => (await res).status;
const setLimit = (accountId: string, bytes: number | null) =>
  t.server.ctx.db.$client.query('UPDATE users SET storage_limit = ? WHERE id = ?').run(bytes, accountId);

/** The owner ends an editor's right to write: removes it, or makes it a viewer. */
const endEditor = (owner: TestClient, itemId: string, memberId: string, end: 'remove' | 'viewer') =>
  end === 'remove'
    ? owner.delete(`/api/files/${itemId}/members/${memberId}`)
    : owner.send('PATCH', `/api/files/${itemId}/members/${memberId}`, { role: 'viewer' });

/** A tus PATCH of 2,000 bytes to `location` whose second half waits for `release`: the request is under way meanwhile. */
async function heldPatch(client: TestClient, location: string): Promise<{ patch: Promise<Response>; release: () => void }> {
  const { body, release } = heldBody();
  const patch = client.request(location, {
    method: 'PATCH',
    headers: { ...TUS, 'Upload-Offset': '0', 'Content-Type': 'application/offset+octet-stream', 'Content-Length': '2000' },
    body,
  });
  await new Promise((r) => setTimeout(r, 50));
  return { patch, release };
}

describe('members of an item', () => {
  test('add, list, change role and remove; the member is named with account id, email, name, role and time', async () => {
    const { owner, root } = await sharedFolder();
    const member = await seed.owner(t);
    const added = await addMember(owner.client, root.id, member.email.toUpperCase(), 'viewer');
    expect(added).toEqual({ accountId: member.id, email: member.email, name: 'Owner', role: 'viewer', addedAt: expect.any(String) });
    expect(await json(await owner.client.get(`/api/files/${root.id}/members`))).toEqual({ members: [added], groups: [] });

    let res = await owner.client.send('PATCH', `/api/files/${root.id}/members/${member.id}`, { role: 'editor' });
    expect(res.status).toBe(200);
    expect((await json(res)).member.role).toBe('editor');
    res = await owner.client.send('PATCH', `/api/files/${root.id}/members/${member.id}`, { role: 'owner' });
    expect(res.status).toBe(422);

    res = await owner.client.delete(`/api/files/${root.id}/members/${member.id}`);
    expect(res.status).toBe(200);
    expect((await json(res)).message).toContain(member.email);
    expect(await json(await owner.client.get(`/api/files/${root.id}/members`))).toEqual({ members: [], groups: [] });
    expect((await owner.client.delete(`/api/files/${root.id}/members/${member.id}`)).status).toBe(404);
  });

  test('an unknown email, a sub-user email and a disabled account are one 404; yourself and an existing member are 409', async () => {
    const { owner, root } = await sharedFolder();
    const sub = await seed.subUser(t, owner, []);
    const member = await seed.owner(t);
    const disabled = await seed.owner(t);
    expect((await admin.client.send('PATCH', `/api/user/${disabled.id}`, { disabled: true })).status).toBe(200);
    for (const email of [seed.uniqueEmail('nobody'), sub.email, disabled.email]) {
      const res = await owner.client.post(`/api/files/${root.id}/members`, { email, role: 'viewer' });
      expect(res.status).toBe(404);
      expect(await json(res)).toEqual({ message: 'No account with this email' });
    }
    expect((await owner.client.post(`/api/files/${root.id}/members`, { email: owner.email, role: 'viewer' })).status).toBe(409);
    await addMember(owner.client, root.id, member.email, 'viewer');
    expect((await owner.client.post(`/api/files/${root.id}/members`, { email: member.email, role: 'editor' })).status).toBe(409);
    expect((await owner.client.post(`/api/files/${root.id}/members`, { email: 'not an email', role: 'viewer' })).status).toBe(422);
  });

  test("only the item's account manages members: another account 404, a member 403, a sub-user without Share 403 naming it", async () => {
    const { owner, root } = await sharedFolder();
    const member = await seed.owner(t);
    const stranger = await seed.owner(t);
    const third = await seed.owner(t);
    await addMember(owner.client, root.id, member.email, 'editor');
    const body = { email: third.email, role: 'viewer' };

    expect(await status(stranger.client.post(`/api/files/${root.id}/members`, body))).toBe(404);
    expect(await status(stranger.client.get(`/api/files/${root.id}/members`))).toBe(404);
    expect(await status(stranger.client.delete(`/api/files/${root.id}/members/${member.id}`))).toBe(404);

    let res = await member.client.post(`/api/files/${root.id}/members`, body);
    expect(res.status).toBe(403);
    expect((await json(res)).message).toMatch(/only the owner/i);
    expect(await status(member.client.send('PATCH', `/api/files/${root.id}/members/${member.id}`, { role: 'viewer' }))).toBe(403);
    expect(await status(member.client.delete(`/api/files/${root.id}/members/${member.id}`))).toBe(403);
    // Members may see who else has the item.
    expect(await status(member.client.get(`/api/files/${root.id}/members`))).toBe(200);
    // Nor make a public link of it.
    expect(await status(member.client.post('/api/files/share', { ids: [root.id], shared: true }))).toBe(403);

    const noShare = await seed.subUser(t, owner, ['files.download']);
    res = await noShare.client.post(`/api/files/${root.id}/members`, body);
    expect(res.status).toBe(403);
    expect((await json(res)).message).toContain('"Share"');
    const canShare = await seed.subUser(t, owner, ['files.share']);
    expect(await status(canShare.client.post(`/api/files/${root.id}/members`, body))).toBe(201);
  });
});

describe("a sub-user makes editors only with an editor's permissions", () => {
  test('without Upload & create, Modify and Move to trash a sub-user adds or makes no editor (403, nothing changed); viewers it may add', async () => {
    const { owner, root } = await sharedFolder();
    const [person, other] = [await seed.owner(t), await seed.owner(t)];
    const group = await newGroup(admin, 'Editors', other);
    const sharer = await seed.subUser(t, owner, ['files.share', 'files.download']);
    const refusals = [
      await sharer.client.post(`/api/files/${root.id}/members`, { email: person.email, role: 'editor' }),
      await sharer.client.post(`/api/files/${root.id}/members`, { groupId: group, role: 'editor' }),
    ];
    expect(await status(sharer.client.post(`/api/files/${root.id}/members`, { email: person.email, role: 'viewer' }))).toBe(201);
    expect(await status(sharer.client.post(`/api/files/${root.id}/members`, { groupId: group, role: 'viewer' }))).toBe(201);
    refusals.push(
      await sharer.client.send('PATCH', `/api/files/${root.id}/members/${person.id}`, { role: 'editor' }),
      await sharer.client.send('PATCH', `/api/files/${root.id}/groups/${group}`, { role: 'editor' }),
    );
    for (const res of refusals) {
      expect(res.status).toBe(403);
      expect((await json(res)).message).toContain('"Upload & create"');
    }
    const { members, groups } = await json(await owner.client.get(`/api/files/${root.id}/members`));
    expect(members.map((m: { role: string }) => m.role)).toEqual(['viewer']);
    expect(groups.map((g: { role: string }) => g.role)).toEqual(['viewer']);
    // The editor could upload into the owner's folder, which the sub-user itself may not.
    expect((await uploadRaw(person.client, 'in.txt', 'x', { parentId: root.id })).status).toBe(403);

    const writer = await seed.subUser(t, owner, ['files.share', 'files.upload', 'files.edit', 'files.delete']);
    expect(await status(writer.client.send('PATCH', `/api/files/${root.id}/members/${person.id}`, { role: 'editor' }))).toBe(200);
    expect(await status(writer.client.send('PATCH', `/api/files/${root.id}/groups/${group}`, { role: 'editor' }))).toBe(200);
    // Making an editor a viewer takes rights away: Share is enough.
    expect(await status(sharer.client.send('PATCH', `/api/files/${root.id}/members/${person.id}`, { role: 'viewer' }))).toBe(200);
  });
});

describe('GET /api/files/shared?include=people', () => {
  test("the owner's Shared list adds items shared with people only when asked (include=people)", async () => {
    const { owner, root, file } = await sharedFolder();
    const member = await seed.owner(t);
    await addMember(owner.client, root.id, member.email, 'viewer');
    expect((await owner.client.post('/api/files/share', { ids: [file.id], shared: true })).status).toBe(200);
    expect((await listAll(owner.client, '/api/files/shared')).map((i) => i.name)).toEqual(['photo.txt']);
    const both = await listAll(owner.client, '/api/files/shared?include=people');
    expect(both.map((i) => [i.name, i.shared])).toEqual([
      ['Family', false],
      ['photo.txt', true],
    ]);
    expect(await listAll(member.client, '/api/files/shared?include=people')).toEqual([]);
  });
});

describe('GET /api/files/shared-with-me', () => {
  test('the items shared with the account, newest first, keyset paged, with owner, role and time; sub-users see them too', async () => {
    const member = await seed.owner(t);
    const memberSub = await seed.subUser(t, member, ['files.download']);
    const a = await sharedFolder();
    const b = await sharedFolder();
    await addMember(a.owner.client, a.root.id, member.email, 'viewer');
    await addMember(b.owner.client, b.file.id, member.email, 'editor');
    let res = await member.client.get('/api/files/shared-with-me?limit=1');
    expect(res.status).toBe(200);
    const first = await json(res);
    expect(first.items).toHaveLength(1);
    expect(first.items[0]).toMatchObject({
      id: b.file.id,
      name: 'photo.txt',
      type: 'file',
      role: 'editor',
      owner: { id: b.owner.id, email: b.owner.email },
    });
    res = await member.client.get(`/api/files/shared-with-me?limit=1&cursor=${first.nextCursor}`);
    const second = await json(res);
    expect(second.items.map((i: any) => [i.id, i.role])).toEqual([[a.root.id, 'viewer']]);
    expect(second.nextCursor).toBeNull();
    const viaSub = await json(await memberSub.client.get('/api/files/shared-with-me'));
    expect(viaSub.items.map((i: any) => i.id)).toEqual([b.file.id, a.root.id]);
    expect(await status(member.client.get('/api/files/shared-with-me?cursor=bogus'))).toBe(400);
    expect(await status(member.client.get('/api/files/shared-with-me?limit=0'))).toBe(422);
  });
});

describe('what members may do', () => {
  test('a viewer lists, reads details, downloads and zips inside; every change is 403; the owner tree outside is 404', async () => {
    const { owner, root, file, sub, outside, secret } = await sharedFolder();
    const viewer = await seed.owner(t);
    await addMember(owner.client, root.id, viewer.email, 'viewer');
    const c = viewer.client;

    expect((await listAll(c, `/api/files?parentId=${root.id}`)).map((i) => i.name).sort()).toEqual(['Trips', 'photo.txt']);
    expect(await listAll(c, `/api/files?parentId=${sub.id}`)).toEqual([]);
    expect((await json(await c.get(`/api/files/${file.id}/info`))).name).toBe('photo.txt');
    expect((await downloaded(c, file.id)).toString()).toBe('photo bytes');
    const zip = await c.post('/api/files/download/bulk', { ids: [file.id] });
    expect(zip.status).toBe(200);
    expect(readZip(Buffer.from(await zip.arrayBuffer())).map((e) => e.name)).toEqual(['photo.txt']);
    expect((await c.get(`/api/files/${root.id}/download`)).status).toBe(200);

    for (const res of [
      uploadRaw(c, 'new.txt', 'x', { parentId: root.id }),
      c.post('/api/files/folder', { name: 'New', parentId: root.id }),
      c.post('/api/files/rename', { id: file.id, name: 'renamed.txt' }),
      move(c, [file.id], sub.id),
      c.post('/api/files/delete', { ids: [file.id] }),
    ]) {
      const r = await res;
      expect(r.status).toBe(403);
      expect((await json(r)).message).toMatch(/editor role/);
    }

    // Outside the shared folder nothing exists for the member.
    expect(await status(c.get(`/api/files?parentId=${outside.id}`))).toBe(404);
    expect(await status(c.get(`/api/files/${secret.id}/download`))).toBe(404);
    expect(await status(c.get(`/api/files/${secret.id}/info`))).toBe(404);
    expect(await status(c.post('/api/files/download/bulk', { ids: [file.id, secret.id] }))).toBe(404);
  });

  test('an editor uploads, creates, renames, moves inside, replaces and trashes into the owner trash; bytes count against the owner', async () => {
    const { owner, root, file, sub } = await sharedFolder();
    const editor = await seed.owner(t);
    await addMember(owner.client, root.id, editor.email, 'editor');
    const c = editor.client;
    const before = (await json(await owner.client.get('/api/user/storage'))).used;
    const mine = (await json(await c.get('/api/user/storage'))).used;

    const added = await upload(c, 'added.txt', '0123456789', { parentId: root.id });
    expect((await json(await owner.client.get('/api/user/storage'))).used).toBe(before + 10);
    expect((await json(await c.get('/api/user/storage'))).used).toBe(mine);
    const made = await folder(c, 'Made', root.id);
    expect((await c.post('/api/files/rename', { id: added.id, name: 'renamed.txt' })).status).toBe(200);
    expect((await move(c, [added.id], made.id)).status).toBe(200);
    const form = new FormData();
    form.append('file', new File(['replaced'], 'x.txt'));
    expect((await c.request(`/api/files/${file.id}/replace`, { method: 'POST', body: form })).status).toBe(200);
    expect((await downloaded(owner.client, file.id)).toString()).toBe('replaced');
    expect((await c.post('/api/files/delete', { ids: [sub.id] })).status).toBe(200);
    const ownerTrash = await listAll(owner.client, '/api/files/trash');
    expect(ownerTrash.map((i) => i.id)).toContain(sub.id);
    expect((await listAll(owner.client, `/api/files?parentId=${made.id}`)).map((i) => i.name)).toEqual(['renamed.txt']);
    // The shared item itself stays the owner's to rename, move or trash.
    expect(await status(c.post('/api/files/rename', { id: root.id, name: 'Mine' }))).toBe(403);
    expect(await status(c.post('/api/files/delete', { ids: [root.id] }))).toBe(403);
  });

  test('an editor of a shared file gives it new content (replace, a version restored) but cannot rename, move, trash it or add a file beside it', async () => {
    const owner = await seed.owner(t);
    const file = await upload(owner.client, 'plan.txt', 'plan v1');
    const editor = await seed.owner(t);
    const viewer = await seed.owner(t);
    await addMember(owner.client, file.id, editor.email, 'editor');
    await addMember(owner.client, file.id, viewer.email, 'viewer');
    const replace = (c: TestClient, content: string) => {
      const form = new FormData();
      form.append('file', new File([content], 'plan.txt'));
      return c.request(`/api/files/${file.id}/replace`, { method: 'POST', body: form });
    };
    expect((await replace(editor.client, 'plan v2 by the editor')).status).toBe(200);
    expect((await downloaded(owner.client, file.id)).toString()).toBe('plan v2 by the editor');
    const { versions } = await json(await editor.client.get(`/api/files/${file.id}/versions`));
    expect((await editor.client.post(`/api/files/${file.id}/versions/${versions[0].id}/restore`, {})).status).toBe(200);
    expect((await downloaded(owner.client, file.id)).toString()).toBe('plan v1');

    expect((await replace(viewer.client, 'by the viewer')).status).toBe(403);
    expect(await status(editor.client.post('/api/files/rename', { id: file.id, name: 'mine.txt' }))).toBe(403);
    expect(await status(editor.client.post('/api/files/delete', { ids: [file.id] }))).toBe(403);
    const beside = new FormData();
    beside.append('file', new File(['beside'], 'beside.txt'));
    expect((await editor.client.request(`/api/files/${file.id}/derived`, { method: 'POST', body: beside })).status).toBe(403);
    expect((await listAll(owner.client, '/api/files')).map((i) => i.name)).toEqual(['plan.txt']);
  });

  test('an editor uploads into a shared folder whatever the order of the form: the file part before parentId, on every multipart door', async () => {
    const { owner, root, file } = await sharedFolder();
    const editor = await seed.owner(t);
    await addMember(owner.client, root.id, editor.email, 'editor');
    // The editor's own account is full: what counts is the room of the account the file lands in.
    setLimit(editor.id, 0);
    const c = editor.client;
    const post = (path: string, ...parts: Array<[string, string | File]>) => {
      const form = new FormData();
      for (const [name, value] of parts) form.append(name, value);
      return c.request(path, { method: 'POST', body: form });
    };
    const before = (await json(await owner.client.get('/api/user/storage'))).used;

    let res = await post('/api/files/upload', ['file', new File(['first'], 'late-parent.txt')], ['parentId', root.id]);
    expect(res.status).toBe(200);
    expect(await json(res)).toMatchObject({ name: 'late-parent.txt', parentId: root.id, size: 5 });

    res = await post(
      '/api/files/upload/bulk',
      ['files', new File(['one'], 'bulk-1.txt')],
      ['files', new File(['two'], 'bulk-2.txt')],
      ['parentId', root.id],
      ['relativePaths', 'Deep/bulk-1.txt'],
    );
    expect(res.status).toBe(200);
    const bulk = await json(res);
    expect(bulk).toMatchObject({ successful: 2, failedCount: 0 });

    res = await post(`/api/files/${file.id}/replace`, ['file', new File(['new'], 'x.txt')], ['lastModifiedTimes', '1700000000000']);
    expect(res.status).toBe(200);
    res = await post(
      `/api/files/${file.id}/derived`,
      ['file', new File(['derived'], 'photo.small.txt')],
      ['lastModifiedTimes', '1700000000000'],
    );
    expect(res.status).toBe(200);

    const names = (await listAll(owner.client, `/api/files?parentId=${root.id}`)).map((i) => i.name);
    expect(names).toEqual(expect.arrayContaining(['late-parent.txt', 'bulk-2.txt', 'Deep', 'photo.small.txt']));
    expect((await downloaded(owner.client, file.id)).toString()).toBe('new');
    expect((await json(await owner.client.get('/api/user/storage'))).used).toBe(before + 5 + 3 + 3 + 7 + 3);
    // The owner's quota still holds, whichever part comes first.
    setLimit(owner.id, before + 5 + 3 + 3 + 7 + 3 + 4);
    res = await post('/api/files/upload', ['file', new File(['x'.repeat(100)], 'over.txt')], ['parentId', root.id]);
    expect(res.status).toBe(413);
    setLimit(owner.id, null);
  });

  test('nothing crosses the boundary by move; copies out and (editors) in belong to the account that owns the copy', async () => {
    const { owner, root, file, outside, secret } = await sharedFolder();
    const editor = await seed.owner(t);
    await addMember(owner.client, root.id, editor.email, 'editor');
    const c = editor.client;
    const own = await folder(c, 'Own');
    const ownFile = await upload(c, 'own.txt', 'own bytes');

    for (const [ids, parentId] of [
      [[file.id], null],
      [[file.id], own.id],
      [[ownFile.id], root.id],
      [[file.id, ownFile.id], own.id],
    ] as Array<[string[], string | null]>) {
      const res = await move(c, ids, parentId);
      expect(res.status).toBe(403);
      expect((await json(res)).message).toMatch(/copy them instead/);
    }
    // The owner's folders outside the share do not exist for the member, as targets or sources.
    expect(await status(move(c, [file.id], outside.id))).toBe(404);
    expect(await status(c.post('/api/files/copy', { ids: [file.id], parentId: outside.id }))).toBe(404);
    expect(await status(c.post('/api/files/copy', { ids: [secret.id], parentId: own.id }))).toBe(404);

    const memberBefore = (await json(await c.get('/api/user/storage'))).used;
    let res = await c.post('/api/files/copy', { ids: [file.id], parentId: own.id });
    expect(res.status).toBe(202);
    const copied = await eventually(async () => {
      const rows = await listAll(c, `/api/files?parentId=${own.id}`);
      return rows.length === 1 && rows[0];
    });
    expect(copied.name).toBe('photo.txt');
    expect((await downloaded(c, copied.id)).toString()).toBe('photo bytes');
    expect((await json(await c.get('/api/user/storage'))).used).toBe(memberBefore + 'photo bytes'.length);
    // The owner never sees the member's copy.
    expect(await status(owner.client.get(`/api/files/${copied.id}/info`))).toBe(404);

    const ownerBefore = (await json(await owner.client.get('/api/user/storage'))).used;
    res = await c.post('/api/files/copy', { ids: [ownFile.id], parentId: root.id });
    expect(res.status).toBe(202);
    await eventually(async () => (await listAll(owner.client, `/api/files?parentId=${root.id}`)).some((i) => i.name === 'own.txt'));
    expect((await json(await owner.client.get('/api/user/storage'))).used).toBe(ownerBefore + 'own bytes'.length);

    const viewer = await seed.owner(t);
    await addMember(owner.client, root.id, viewer.email, 'viewer');
    const viewerFile = await upload(viewer.client, 'v.txt', 'v');
    expect(await status(viewer.client.post('/api/files/copy', { ids: [viewerFile.id], parentId: root.id }))).toBe(403);
  });

  test("a member's sub-user acts within its own permissions", async () => {
    const { owner, root, file } = await sharedFolder();
    const member = await seed.owner(t);
    await addMember(owner.client, root.id, member.email, 'editor');
    const reader = await seed.subUser(t, member, ['files.download']);
    expect((await downloaded(reader.client, file.id)).toString()).toBe('photo bytes');
    const res = await uploadRaw(reader.client, 'no.txt', 'x', { parentId: root.id });
    expect(res.status).toBe(403);
    expect((await json(res)).message).toContain('"Upload & create"');
    const blind = await seed.subUser(t, member, []);
    expect(await status(blind.client.get(`/api/files/${file.id}/download`))).toBe(403);
    expect((await listAll(blind.client, `/api/files?parentId=${root.id}`)).length).toBe(2);
  });

  test('removing a member or a role change takes effect on the next request, and open streams learn it at once', async () => {
    const { owner, root, file } = await sharedFolder();
    const member = await seed.owner(t);
    await addMember(owner.client, root.id, member.email, 'editor');
    expect(await status(member.client.post('/api/files/folder', { name: 'ok', parentId: root.id }))).toBe(200);
    await owner.client.send('PATCH', `/api/files/${root.id}/members/${member.id}`, { role: 'viewer' });
    expect(await status(member.client.post('/api/files/folder', { name: 'no', parentId: root.id }))).toBe(403);

    const events = await stream(member.client);
    expect((await owner.client.delete(`/api/files/${root.id}/members/${member.id}`)).status).toBe(200);
    expect(await nextOfType(events, 'share.removed')).toMatchObject({ type: 'share.removed', data: { id: root.id, name: 'Family' } });
    await events.close();
    expect(await status(member.client.get(`/api/files?parentId=${root.id}`))).toBe(404);
    expect(await status(member.client.get(`/api/files/${file.id}/download`))).toBe(404);
    expect((await json(await member.client.get('/api/files/shared-with-me'))).items).toEqual([]);
  });

  test("the sharing owner's account disabled or deleted ends access; the admin switch stops member shares and says why", async () => {
    const { owner, root, file } = await sharedFolder();
    const member = await seed.owner(t);
    await addMember(owner.client, root.id, member.email, 'viewer');

    expect((await admin.client.send('PATCH', `/api/user/${owner.id}`, { disabled: true })).status).toBe(200);
    expect(await status(member.client.get(`/api/files/${file.id}/download`))).toBe(404);
    expect((await json(await member.client.get('/api/files/shared-with-me'))).items).toEqual([]);
    expect((await admin.client.send('PATCH', `/api/user/${owner.id}`, { disabled: false })).status).toBe(200);
    expect(await status(member.client.get(`/api/files/${file.id}/download`))).toBe(200);
    // Disabling signed the owner out everywhere.
    const ownerClient = await seed.login(t, owner.email);

    expect((await admin.client.put('/api/user/people-sharing-config', { enabled: false })).status).toBe(200);
    try {
      const res = await member.client.get(`/api/files?parentId=${root.id}`);
      expect(res.status).toBe(403);
      expect((await json(res)).message).toMatch(/turned off/);
      expect(await status(ownerClient.post(`/api/files/${root.id}/members`, { email: admin.email, role: 'viewer' }))).toBe(403);
      expect(await status(member.client.put('/api/user/people-sharing-config', { enabled: true }))).toBe(403);
    } finally {
      await admin.client.put('/api/user/people-sharing-config', { enabled: true });
    }
    expect(await status(member.client.get(`/api/files?parentId=${root.id}`))).toBe(200);

    expect((await admin.client.delete(`/api/user/${owner.id}`)).status).toBeLessThan(300);
    expect(await status(member.client.get(`/api/files/${file.id}/download`))).toBe(404);
  });
});

describe('live events and notifications', () => {
  test('while the admin has sharing with people off, a member\u2019s open stream hears nothing of the shared folder; on again, it does', async () => {
    const { owner, root } = await sharedFolder();
    const member = await seed.owner(t);
    await addMember(owner.client, root.id, member.email, 'viewer');
    const events = await stream(member.client);
    expect((await admin.client.put('/api/user/people-sharing-config', { enabled: false })).status).toBe(200);
    try {
      await upload(owner.client, 'while-off.txt', 'x', { parentId: root.id });
    } finally {
      expect((await admin.client.put('/api/user/people-sharing-config', { enabled: true })).status).toBe(200);
    }
    // The first upload the stream hears of is the one after the switch came back on.
    const after = await upload(owner.client, 'after.txt', 'x', { parentId: root.id });
    expect((await nextOfType(events, 'file.uploaded')).data).toMatchObject({ id: after.id, name: 'after.txt' });
    await events.close();
  });

  test('a change inside a shared folder reaches the members\u2019 streams, not a stranger\u2019s; nothing outside it does', async () => {
    const { owner, root, outside } = await sharedFolder();
    const member = await seed.owner(t);
    await addMember(owner.client, root.id, member.email, 'viewer');
    const stranger = await seed.owner(t);
    const events = await stream(member.client);
    const strangers = await stream(stranger.client);
    await upload(owner.client, 'outside.txt', 'x', { parentId: outside.id });
    const inside = await upload(owner.client, 'inside.txt', 'x', { parentId: root.id });
    const event = await nextOfType(events, 'file.uploaded');
    expect(event.data).toMatchObject({ id: inside.id, name: 'inside.txt', parentId: root.id });
    // Once removed, the former member hears no more of the folder (the owner's uploads before and after count the same).
    expect((await owner.client.delete(`/api/files/${root.id}/members/${member.id}`)).status).toBe(200);
    expect(await nextOfType(events, 'share.removed')).toMatchObject({ data: { id: root.id } });
    expect(await nextOfType(events, 'notification')).toMatchObject({ data: { type: 'share.removed', itemId: root.id } });
    await upload(owner.client, 'after.txt', 'x', { parentId: root.id });
    expect(await events.quietFor(300)).toBe(true);
    await events.close();
    // A non-member's first upload event is its own upload: the shared folder's came before it and never arrived.
    const own = await upload(stranger.client, 'own.txt', 'x');
    expect((await nextOfType(strangers, 'file.uploaded')).data.id).toBe(own.id);
    await strangers.close();
  });

  test('a folder trashed or restored with a shared item inside: its members hear it of the shared item, as when it is trashed itself', async () => {
    const { owner, root } = await sharedFolder();
    const parent = await folder(owner.client, 'Parent');
    expect((await owner.client.post('/api/files/move', { ids: [root.id], parentId: parent.id })).status).toBe(200);
    const member = await seed.owner(t);
    await addMember(owner.client, root.id, member.email, 'viewer');
    const events = await stream(member.client);
    expect((await owner.client.post('/api/files/delete', { ids: [parent.id] })).status).toBe(200);
    expect((await nextOfType(events, 'file.deleted')).data).toMatchObject({ id: root.id, name: 'Family', parentId: parent.id });
    expect((await json(await member.client.get('/api/files/shared-with-me'))).items).toEqual([]);
    expect((await owner.client.post('/api/files/trash/restore', { ids: [parent.id] })).status).toBe(200);
    expect((await nextOfType(events, 'file.restored')).data).toMatchObject({ id: root.id, parentId: parent.id });
    // Nothing of the owner's own folder reaches the member.
    expect(await events.quietFor(300)).toBe(true);
    // Trashed on its own first, the shared item stays in the trash when its folder comes back: nothing more is said of it.
    await owner.client.post('/api/files/delete', { ids: [root.id] });
    expect((await nextOfType(events, 'file.deleted')).data.id).toBe(root.id);
    await owner.client.post('/api/files/delete', { ids: [parent.id] });
    await owner.client.post('/api/files/trash/restore', { ids: [parent.id] });
    expect(await events.quietFor(300)).toBe(true);
    await events.close();
  });

  test('a job an editor starts in a shared folder is theirs to follow: poll and live event for copy and trash; the owner sees it, a stranger 404', async () => {
    const { owner, root, file, sub } = await sharedFolder();
    const editor = await seed.owner(t);
    const stranger = await seed.owner(t);
    await addMember(owner.client, root.id, editor.email, 'editor');
    const events = await stream(editor.client);
    const jobEvent = async (type: string, jobId: string) => {
      for (;;) {
        const event = await nextOfType(events, type);
        if (event.data.jobId === jobId) return event.data;
      }
    };
    const follow = async (res: Response, type: string, action: string) => {
      expect(res.status).toBe(202);
      const { jobId } = await json(res);
      // The server's worker runs: the first poll finds the job waiting, running or done, never missing.
      const first = await editor.client.get(`/api/files/jobs/${jobId}`);
      expect([200, 202]).toContain(first.status);
      expect(await json(first)).toMatchObject({ jobId, status: expect.stringMatching(/^(created|active|completed)$/) });
      expect(await status(stranger.client.get(`/api/files/jobs/${jobId}`))).toBe(404);
      const body = await eventually(async () => {
        const done = await editor.client.get(`/api/files/jobs/${jobId}`);
        expect(done.status).toBe(200);
        return json(done);
      });
      expect(await json(await owner.client.get(`/api/files/jobs/${jobId}`))).toEqual(body);
      expect(await jobEvent(type, jobId)).toMatchObject({ userId: editor.id, action, jobId });
      return body;
    };

    const copied = await follow(await editor.client.post('/api/files/copy', { ids: [file.id], parentId: sub.id }), 'file.copied', 'copy');
    expect(copied).toMatchObject({ status: 'completed', result: { count: 1, ids: [expect.any(String)] } });

    // Over 1000 items: the trash runs as a job.
    const big = await folder(owner.client, 'Big', root.id);
    seedRows(t, owner.id, big.id, 1001);
    const trashed = await follow(await editor.client.post('/api/files/delete', { ids: [big.id] }), 'file.deleted', 'trash');
    expect(trashed).toEqual({ jobId: expect.any(String), status: 'completed', result: { count: 1002 } });
    await events.close();
  });

  test('being shared with, a role change and removal notify the member, live and in the list; read marks them', async () => {
    const { owner, root } = await sharedFolder();
    const member = await seed.owner(t);
    const events = await stream(member.client);
    await addMember(owner.client, root.id, member.email, 'viewer');
    const live = await nextOfType(events, 'notification');
    expect(live.data).toMatchObject({ type: 'share.added', itemId: root.id, readAt: null, unread: 1 });
    expect(live.data.text).toContain('"Family"');
    await owner.client.send('PATCH', `/api/files/${root.id}/members/${member.id}`, { role: 'editor' });
    await owner.client.delete(`/api/files/${root.id}/members/${member.id}`);
    await events.close();

    let list = await json(await member.client.get('/api/notifications?limit=2'));
    expect(list.unread).toBe(3);
    expect(list.notifications.map((n: any) => n.type)).toEqual(['share.removed', 'share.role_changed']);
    const rest = await json(await member.client.get(`/api/notifications?limit=2&cursor=${list.nextCursor}`));
    expect(rest.notifications.map((n: any) => n.type)).toEqual(['share.added']);
    expect(rest.nextCursor).toBeNull();

    let res = await member.client.post('/api/notifications/read', { ids: [rest.notifications[0].id] });
    expect(await json(res)).toEqual({ unread: 2 });
    // Another account's notification ids change nothing.
    res = await owner.client.post('/api/notifications/read', { all: true });
    expect(await json(res)).toEqual({ unread: 0 });
    expect((await json(await member.client.get('/api/notifications'))).unread).toBe(2);
    // Marking them by id is a 404, as for any id not the caller's, and a list holding one marks none of it.
    res = await owner.client.post('/api/notifications/read', { ids: [list.notifications[0].id] });
    expect({ status: res.status, body: await json(res) }).toEqual({
      status: 404,
      body: { message: 'Notification not found: mark only ids from GET /api/notifications of this account' },
    });
    res = await member.client.post('/api/notifications/read', { ids: [list.notifications[0].id, list.notifications[0].id, 'not-one'] });
    expect(res.status).toBe(404);
    expect((await json(await member.client.get('/api/notifications'))).unread).toBe(2);
    res = await member.client.post('/api/notifications/read', { all: true });
    expect(await json(res)).toEqual({ unread: 0 });
    list = await json(await member.client.get('/api/notifications'));
    expect(list.notifications.every((n: any) => n.readAt !== null)).toBe(true);
    expect(await status(member.client.post('/api/notifications/read', {}))).toBe(422);
  });
});

describe('drop folders', () => {
  test('files a visitor drops through an upload link notify the owner (live and in the list)', async () => {
    const o = await seed.owner(t);
    const inbox = await folder(o.client, 'Inbox');
    const res = await o.client.post('/api/files/share', { ids: [inbox.id], shared: true, mode: 'upload' });
    const url = new URL((await json(res)).links[inbox.id]);
    const events = await stream(o.client);
    const form = new FormData();
    form.append('uploader', 'Ada');
    form.append('file', new File(['one'], 'a.txt'));
    form.append('file', new File(['two'], 'b.txt'));
    const sent = await fetch(`${t.url}${url.pathname}/upload`, { method: 'POST', body: form, headers: { accept: 'application/json' } });
    expect(sent.status).toBe(201);
    const live = await nextOfType(events, 'notification');
    expect(live.data).toMatchObject({
      type: 'drop.files_added',
      itemId: inbox.id,
      text: 'Ada added 2 files to "Inbox" through a share link.',
    });
    await events.close();
    expect((await json(await o.client.get('/api/notifications'))).notifications[0]).toMatchObject({
      type: 'drop.files_added',
      readAt: null,
    });
  });
});

describe('the other doors', () => {
  test('tus: an editor uploads into a shared folder (owner quota); a viewer is 403, a stranger 404; removal ends a half-done upload', async () => {
    const { owner, root, editor, viewer, stranger } = await sharedWithEditorAndViewer();
    const before = (await json(await owner.client.get('/api/user/storage'))).used;

    let res = await createUpload(editor.client, 5, { filename: 'tus.txt', parentId: root.id });
    expect(res.status).toBe(201);
    let location = new URL(res.headers.get('location')!, t.url).pathname;
    res = await patchUpload(editor.client, location, 0, new TextEncoder().encode('hello'));
    expect(res.status).toBe(204);
    const names = (await listAll(owner.client, `/api/files?parentId=${root.id}`)).map((i) => i.name);
    expect(names).toContain('tus.txt');
    expect((await json(await owner.client.get('/api/user/storage'))).used).toBe(before + 5);

    expect((await createUpload(viewer.client, 5, { filename: 'v.txt', parentId: root.id })).status).toBe(403);
    expect((await createUpload(stranger.client, 5, { filename: 's.txt', parentId: root.id })).status).toBe(404);

    res = await createUpload(editor.client, 4, { filename: 'half.txt', parentId: root.id });
    location = new URL(res.headers.get('location')!, t.url).pathname;
    expect((await patchUpload(editor.client, location, 0, new TextEncoder().encode('ha'))).status).toBe(204);
    await owner.client.delete(`/api/files/${root.id}/members/${editor.id}`);
    expect((await patchUpload(editor.client, location, 2, new TextEncoder().encode('lf'))).status).toBe(404);
    expect((await headUpload(editor.client, location)).status).toBe(404);
  });

  test("tus: an editor's last PATCH into a folder the owner moves out of the share, or trashes, while it runs is 404; no file lands outside the share", async () => {
    const { owner, root, outside, editor } = await sharedWithEditorAndViewer();
    for (const [name, leave] of [
      ['moved.bin', (id: string) => owner.client.post('/api/files/move', { ids: [id], parentId: outside.id })],
      ['trashed.bin', (id: string) => owner.client.post('/api/files/delete', { ids: [id] })],
    ] as const) {
      const sub = await folder(owner.client, `for ${name}`, root.id);
      const created = await createUpload(editor.client, 2000, { filename: name, parentId: sub.id });
      expect(created.status).toBe(201);
      const location = new URL(created.headers.get('location')!, t.url).pathname;
      const { patch, release } = await heldPatch(editor.client, location);
      expect((await leave(sub.id)).status).toBe(200);
      release();
      const res = await patch;
      expect(res.status).toBe(404);
      expect(await json(res)).toEqual({ message: 'Folder not found' });
      const rows = t.server.ctx.db.$client.query<{ n: number }, [string]>('SELECT COUNT(*) AS n FROM items WHERE name = ?').get(name)!;
      expect(rows.n).toBe(0);
    }
  });

  test('tus: an editor removed (404) or made a viewer (403) while its last PATCH runs: the upload ends with its bytes and reservation, and no later sweep lands it', async () => {
    for (const [end, status] of [
      ['remove', 404],
      ['viewer', 403],
    ] as const) {
      const { owner, root } = await sharedFolder();
      const editor = await seed.owner(t);
      await addMember(owner.client, root.id, editor.email, 'editor');
      const before = (await json(await owner.client.get('/api/user/storage'))).used;
      const name = `late-${end}.bin`;
      const created = await createUpload(editor.client, 2000, { filename: name, parentId: root.id });
      expect(created.status).toBe(201);
      const location = new URL(created.headers.get('location')!, t.url).pathname;
      const { patch, release } = await heldPatch(editor.client, location);
      expect((await endEditor(owner.client, root.id, editor.id, end)).status).toBe(200);
      release();
      expect({ end, status: (await patch).status }).toEqual({ end, status });
      // The maintenance sweep, which finishes fully stored uploads a crash left, must not make the file either.
      await t.server.ctx.services.tusUploads.sweep();
      const rows = t.server.ctx.db.$client.query<{ n: number }, [string]>('SELECT COUNT(*) AS n FROM items WHERE name = ?').get(name)!;
      expect({ end, files: rows.n }).toEqual({ end, files: 0 });
      expect(t.server.ctx.repos.tusUploads.get(location.split('/').at(-1)!)).toBeNull();
      expect((await json(await owner.client.get('/api/user/storage'))).used).toBe(before);
    }
  });

  test("an editor's replace, derived file or bulk upload still arriving when the owner removes the member (404) or makes it a viewer (403) changes nothing", async () => {
    for (const door of ['replace', 'derived', 'bulk'] as const)
      for (const [end, status] of [
        ['remove', 404],
        ['viewer', 403],
      ] as const) {
        const { owner, root, file } = await sharedFolder();
        const editor = await seed.owner(t);
        await addMember(owner.client, root.id, editor.email, 'editor');
        let release!: () => void;
        const boundary = 'heldboundary';
        const field = door === 'bulk' ? 'files' : 'file';
        const parent = door === 'bulk' ? `--${boundary}\r\nContent-Disposition: form-data; name="parentId"\r\n\r\n${root.id}\r\n` : '';
        const body = new ReadableStream<Uint8Array>({
          async start(c) {
            const head = `--${boundary}\r\nContent-Disposition: form-data; name="${field}"; filename="new.txt"\r\nContent-Type: text/plain\r\n\r\nnew `;
            c.enqueue(new TextEncoder().encode(parent + head));
            await new Promise<void>((r) => (release = r));
            c.enqueue(new TextEncoder().encode(`bytes\r\n--${boundary}--\r\n`));
            c.close();
          },
        });
        const path = { replace: `/api/files/${file.id}/replace`, derived: `/api/files/${file.id}/derived`, bulk: '/api/files/upload/bulk' }[
          door
        ];
        const sent = editor.client.request(path, {
          method: 'POST',
          headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
          body,
        });
        await new Promise((r) => setTimeout(r, 50));
        expect((await endEditor(owner.client, root.id, editor.id, end)).status).toBe(200);
        release();
        expect({ door, end, status: (await sent).status }).toEqual({ door, end, status });
        expect((await downloaded(owner.client, file.id)).toString()).toBe('photo bytes');
        expect((await listAll(owner.client, `/api/files?parentId=${root.id}`)).map((i) => i.name).sort()).toEqual(['Trips', 'photo.txt']);
      }
  });

  test('file versions: viewers list and download them, editors restore, strangers and removed members get 404', async () => {
    const { owner, root, file } = await sharedFolder();
    const viewer = await seed.owner(t);
    const editor = await seed.owner(t);
    const stranger = await seed.owner(t);
    await addMember(owner.client, root.id, viewer.email, 'viewer');
    await addMember(owner.client, root.id, editor.email, 'editor');
    const form = new FormData();
    form.append('file', new File(['second content'], 'photo.txt'));
    expect((await owner.client.request(`/api/files/${file.id}/replace`, { method: 'POST', body: form })).status).toBe(200);

    const listed = await viewer.client.get(`/api/files/${file.id}/versions`);
    expect(listed.status).toBe(200);
    const [old] = (await json(listed)).versions;
    const bytes = await viewer.client.get(`/api/files/${file.id}/versions/${old.id}/download`);
    expect(await bytes.text()).toBe('photo bytes');
    expect(await status(viewer.client.post(`/api/files/${file.id}/versions/${old.id}/restore`))).toBe(403);
    expect(await status(stranger.client.get(`/api/files/${file.id}/versions`))).toBe(404);
    expect(await status(editor.client.post(`/api/files/${file.id}/versions/${old.id}/restore`))).toBe(200);
    expect((await downloaded(owner.client, file.id)).toString()).toBe('photo bytes');

    await owner.client.delete(`/api/files/${root.id}/members/${viewer.id}`);
    expect(await status(viewer.client.get(`/api/files/${file.id}/versions`))).toBe(404);
  });

  test("thumbnails: members see a shared picture, a member's sub-user without Download is 403, strangers and removed members 404", async () => {
    const { owner, root } = await sharedFolder();
    const png = await sharp({ create: { width: 40, height: 30, channels: 3, background: '#3366cc' } })
      .png()
      .toBuffer();
    const picture = await upload(owner.client, 'sky.png', png, { parentId: root.id });
    const viewer = await seed.owner(t);
    const stranger = await seed.owner(t);
    await addMember(owner.client, root.id, viewer.email, 'viewer');
    const res = await viewer.client.get(`/api/files/${picture.id}/thumbnail?size=small`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/webp');
    expect((await sharp(Buffer.from(await res.arrayBuffer())).metadata()).width).toBe(40);
    const blind = await seed.subUser(t, viewer, []);
    expect(await status(blind.client.get(`/api/files/${picture.id}/thumbnail`))).toBe(403);
    expect(await status(stranger.client.get(`/api/files/${picture.id}/thumbnail`))).toBe(404);
    await owner.client.delete(`/api/files/${root.id}/members/${viewer.id}`);
    expect(await status(viewer.client.get(`/api/files/${picture.id}/thumbnail`))).toBe(404);
  });

  test("upload check: a shared folder checks the sharing owner's quota, as the upload spends it; viewers 403, strangers 404", async () => {
    const { owner, root, editor, viewer, stranger } = await sharedWithEditorAndViewer();
    const used = (await json(await owner.client.get('/api/user/storage'))).used;
    setLimit(owner.id, used + 10);
    setLimit(editor.id, 0);
    const check = (c: TestClient, fileSize: number, parentId?: string) => c.post('/api/files/upload/check', { fileSize, parentId });
    expect(await json(await check(editor.client, 10, root.id))).toEqual({ allowed: true });
    expect(await status(check(editor.client, 11, root.id))).toBe(413);
    expect(await status(check(editor.client, 1))).toBe(413);
    expect(await status(check(viewer.client, 1, root.id))).toBe(403);
    expect(await status(check(stranger.client, 1, root.id))).toBe(404);
  });

  test('starring a shared item is 403 saying why (a star marks the owner\u2019s item); strangers 404', async () => {
    const { owner, root, file } = await sharedFolder();
    const member = await seed.owner(t);
    const stranger = await seed.owner(t);
    await addMember(owner.client, root.id, member.email, 'editor');
    const res = await member.client.post('/api/files/star', { ids: [file.id], starred: true });
    expect(res.status).toBe(403);
    expect((await json(res)).message).toMatch(/cannot be starred/);
    expect(await status(stranger.client.post('/api/files/star', { ids: [file.id], starred: true }))).toBe(404);
    expect(await listAll(owner.client, '/api/files/starred')).toEqual([]);
  });

  test('the matrix, other doors: outside the share 404; a removed member 404; a member\u2019s sub-user without the permission 403', async () => {
    const { owner, root, file, outside, secret } = await sharedFolder();
    const png = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#000' } })
      .png()
      .toBuffer();
    const hidden = await upload(owner.client, 'hidden.png', png, { parentId: outside.id });
    const replaced = new FormData();
    replaced.append('file', new File(['second'], 'secret.txt'));
    expect((await owner.client.request(`/api/files/${secret.id}/replace`, { method: 'POST', body: replaced })).status).toBe(200);
    const member = await seed.owner(t);
    await addMember(owner.client, root.id, member.email, 'editor');
    const c = member.client;

    // Reaching outside: the owner's other items are not there for tus, versions, thumbnails or members.
    expect((await createUpload(c, 1, { filename: 'x.txt', parentId: outside.id })).status).toBe(404);
    expect(await status(c.get(`/api/files/${secret.id}/versions`))).toBe(404);
    expect(await status(c.get(`/api/files/${hidden.id}/thumbnail`))).toBe(404);
    expect(await status(c.get(`/api/files/${outside.id}/members`))).toBe(404);
    expect(await status(c.post(`/api/files/${outside.id}/members`, { email: admin.email, role: 'viewer' }))).toBe(404);

    // A sub-user of the member's account without the permission the door needs.
    const blind = await seed.subUser(t, member, []);
    for (const res of [
      blind.client.post('/api/files/copy', { ids: [file.id], parentId: root.id }),
      createUpload(blind.client, 1, { filename: 'x.txt', parentId: root.id }),
      blind.client.get(`/api/files/${file.id}/versions/none/download`),
      blind.client.post(`/api/files/${file.id}/versions/none/restore`),
    ])
      expect(await status(res)).toBe(403);

    const own = await folder(c, 'Own');
    expect(await status(c.get(`/api/files/${root.id}/members`))).toBe(200);
    await owner.client.delete(`/api/files/${root.id}/members/${member.id}`);
    // A removed member: copy out, the member list and the shared-with-me list forget the item at once.
    expect(await status(c.post('/api/files/copy', { ids: [file.id], parentId: own.id }))).toBe(404);
    expect(await status(c.get(`/api/files/${root.id}/members`))).toBe(404);
    expect(await status(c.post(`/api/files/${root.id}/members`, { email: admin.email, role: 'viewer' }))).toBe(404);
  });

  test("the sharing owner's account disabled or deleted ends every door: changes, copy, members, search, tus, versions, thumbnails", async () => {
    const { owner, root, file } = await sharedFolder();
    const png = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#000' } })
      .png()
      .toBuffer();
    const picture = await upload(owner.client, 'needle.png', png, { parentId: root.id });
    const member = await seed.owner(t);
    await addMember(owner.client, root.id, member.email, 'editor');
    const c = member.client;
    const own = await folder(c, 'Own');
    const search = async () => (await json(await c.get('/api/files/search?q=needle&includeShared=true'))).map((i: any) => i.name);
    expect(await search()).toEqual(['needle.png']);
    const doors = () => [
      c.post('/api/files/folder', { name: 'New', parentId: root.id }),
      c.post('/api/files/rename', { id: file.id, name: 'renamed.txt' }),
      c.post('/api/files/delete', { ids: [file.id] }),
      c.post('/api/files/copy', { ids: [file.id], parentId: own.id }),
      c.get(`/api/files/${root.id}/members`),
      createUpload(c, 1, { filename: 'x.txt', parentId: root.id }),
      c.get(`/api/files/${file.id}/versions`),
      c.get(`/api/files/${picture.id}/thumbnail`),
      uploadRaw(c, 'x.txt', 'x', { parentId: root.id }),
    ];

    expect((await admin.client.send('PATCH', `/api/user/${owner.id}`, { disabled: true })).status).toBe(200);
    for (const res of doors()) expect(await status(res)).toBe(404);
    expect(await search()).toEqual([]);
    expect((await admin.client.delete(`/api/user/${owner.id}`)).status).toBeLessThan(300);
    for (const res of doors()) expect(await status(res)).toBe(404);
  });

  test('search finds items inside shares with includeShared=true, never outside them, and only then', async () => {
    const { owner, root, sub } = await sharedFolder();
    const member = await seed.owner(t);
    await addMember(owner.client, sub.id, member.email, 'viewer');
    await upload(owner.client, 'needle-inside.txt', 'x', { parentId: sub.id });
    await upload(owner.client, 'needle-above.txt', 'x', { parentId: root.id });
    await upload(member.client, 'needle-mine.txt', 'x');
    const found = async (q: string) => (await json(await member.client.get(q))).map((i: any) => i.name).sort();
    expect(await found('/api/files/search?q=needle')).toEqual(['needle-mine.txt']);
    expect(await found('/api/files/search?q=needle&includeShared=true')).toEqual(['needle-inside.txt', 'needle-mine.txt']);
    const stranger = await seed.owner(t);
    expect(await json(await stranger.client.get('/api/files/search?q=needle&includeShared=true'))).toEqual([]);
    expect((await json(await stranger.client.get('/api/files/shared-with-me'))).items).toEqual([]);
  });

  test('Admin → Users counts the items each account shares with people; `coffer users shares` lists them', async () => {
    const { owner, root, file } = await sharedFolder();
    const a = await seed.owner(t);
    const b = await seed.owner(t);
    await addMember(owner.client, root.id, a.email, 'viewer');
    await addMember(owner.client, root.id, b.email, 'editor');
    await addMember(owner.client, file.id, a.email, 'viewer');
    const all: any[] = [];
    let cursor = '';
    for (;;) {
      const page = await json(await admin.client.get(`/api/user/all?limit=100${cursor ? `&cursor=${cursor}` : ''}`));
      all.push(...page.users);
      if (!page.nextCursor) break;
      cursor = page.nextCursor;
    }
    expect(all.find((u) => u.id === owner.id).sharedWithPeople).toBe(2);
    expect(all.find((u) => u.id === a.id).sharedWithPeople).toBe(0);

    const r = await runCli(['users', 'shares', owner.email, '--json', '--data-dir', t.dataDir]);
    expect(r.code).toBe(0);
    const rows = parseJson(r).shares.map((s: any) => [s.itemName, s.email, s.role]);
    expect(rows).toHaveLength(3);
    expect(rows).toContainEqual(['Family', b.email, 'editor']);
    expect(rows).toContainEqual(['photo.txt', a.email, 'viewer']);
    const text = await runCli(['users', 'shares', a.email, '--data-dir', t.dataDir]);
    expect(text.stdout).toContain('shares nothing');
  });
});
