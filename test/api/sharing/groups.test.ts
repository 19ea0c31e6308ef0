import { describe, expect, test } from 'bun:test';
import sharp from 'sharp';
import { json, type TestClient } from '../../helpers/client.ts';
import { parseJson, runCli } from '../../helpers/cli.ts';
import { davLogin } from '../../helpers/dav.ts';
import type { DocserverDouble } from '../../helpers/docserver-double.ts';
import { documents } from '../../helpers/documents.ts';
import { eventually } from '../../helpers/eventually.ts';
import { downloaded, folder, listAll, SseReader, upload, uploadRaw } from '../../helpers/files.ts';
import * as seed from '../../helpers/seed.ts';
import type { TestServer } from '../../helpers/server.ts';
import { serverWithDocserver } from '../../helpers/suite.ts';
import { createUpload, patchUpload } from '../../helpers/tus.ts';

let t: TestServer;
let admin: seed.SeededLogin;
let double: DocserverDouble;

serverWithDocserver((s) => ({ t, admin, double } = s));

const status = async (res: Promise<Response>) => (await res).status;
let groupCounter = 0;

async function newGroup(...members: seed.SeededLogin[]): Promise<{ id: string; name: string }> {
  const name = `Design ${++groupCounter}`;
  const res = await admin.client.post('/api/admin/groups', { name });
  expect(res.status).toBe(201);
  const group = await json(res);
  for (const m of members) expect(await status(admin.client.post(`/api/admin/groups/${group.id}/members`, { email: m.email }))).toBe(201);
  return group;
}

async function shareWithGroup(owner: TestClient, itemId: string, groupId: string, role: 'viewer' | 'editor') {
  const res = await owner.post(`/api/files/${itemId}/members`, { groupId, role });
  expect(res.status).toBe(201);
  return (await json(res)).group;
}

describe('groups (admin)', () => {
  test('create, list, rename, add and remove members, delete; names are unique whatever their case and 1 to 64 characters', async () => {
    const a = await seed.owner(t);
    const b = await seed.owner(t);
    let res = await admin.client.post('/api/admin/groups', { name: '  Family  ', description: 'Us' });
    expect(res.status).toBe(201);
    const group = await json(res);
    expect(group).toMatchObject({ name: 'Family', description: 'Us', source: 'admin', size: 0, items: 0, members: [] });
    expect(await status(admin.client.post('/api/admin/groups', { name: 'FAMILY' }))).toBe(409);
    expect(await status(admin.client.post('/api/admin/groups', { name: '' }))).toBe(422);
    expect(await status(admin.client.post('/api/admin/groups', { name: 'x'.repeat(65) }))).toBe(422);
    expect(await status(admin.client.post('/api/admin/groups', { name: 'bell\u0007' }))).toBe(400);

    res = await admin.client.post(`/api/admin/groups/${group.id}/members`, { email: a.email.toUpperCase() });
    expect(res.status).toBe(201);
    expect((await json(res)).member).toEqual({ accountId: a.id, email: a.email, name: 'Owner', admin: false, addedAt: expect.any(String) });
    expect(await status(admin.client.post(`/api/admin/groups/${group.id}/members`, { email: a.email }))).toBe(409);
    expect(await status(admin.client.post(`/api/admin/groups/${group.id}/members`, { email: seed.uniqueEmail('nobody') }))).toBe(404);
    expect(await status(admin.client.post(`/api/admin/groups/${group.id}/members`, { email: b.email, admin: true }))).toBe(201);

    const listed = (await json(await admin.client.get('/api/admin/groups'))).groups.find((g: any) => g.id === group.id);
    expect(listed).toMatchObject({ name: 'Family', size: 2 });
    res = await admin.client.send('PATCH', `/api/admin/groups/${group.id}`, { name: 'Household' });
    expect((await json(res)).name).toBe('Household');
    expect(await status(admin.client.send('PATCH', `/api/admin/groups/${group.id}`, {}))).toBe(422);

    res = await admin.client.delete(`/api/admin/groups/${group.id}/members/${a.id}`);
    expect(res.status).toBe(200);
    expect(await status(admin.client.delete(`/api/admin/groups/${group.id}/members/${a.id}`))).toBe(404);
    res = await admin.client.delete(`/api/admin/groups/${group.id}`);
    expect((await json(res)).message).toContain('Household');
    expect(await status(admin.client.get(`/api/admin/groups/${group.id}`))).toBe(404);
    expect(await status(admin.client.delete(`/api/admin/groups/${group.id}`))).toBe(404);
  });

  test('only the admin reaches /api/admin/groups; a group administrator adds and removes members of that group only', async () => {
    const lead = await seed.owner(t);
    const plain = await seed.owner(t);
    const newcomer = await seed.owner(t);
    const otherLead = await seed.owner(t);
    const group = await newGroup(plain);
    const other = await newGroup();
    expect(await status(admin.client.post(`/api/admin/groups/${group.id}/members`, { email: lead.email, admin: true }))).toBe(201);
    expect(await status(admin.client.post(`/api/admin/groups/${other.id}/members`, { email: otherLead.email, admin: true }))).toBe(201);

    for (const c of [lead.client, plain.client]) {
      expect(await status(c.get('/api/admin/groups'))).toBe(403);
      expect(await status(c.post('/api/admin/groups', { name: 'Mine' }))).toBe(403);
      expect(await status(c.delete(`/api/admin/groups/${group.id}`))).toBe(403);
    }
    let res = await lead.client.post(`/api/groups/${group.id}/members`, { email: newcomer.email });
    expect(res.status).toBe(201);
    expect((await json(await lead.client.get(`/api/groups/${group.id}`))).members.map((m: any) => m.email).sort()).toEqual(
      [lead.email, plain.email, newcomer.email].sort(),
    );
    // A group administrator never makes another one, nor removes one.
    expect(await status(lead.client.post(`/api/groups/${group.id}/members`, { email: otherLead.email, admin: true }))).toBe(403);
    expect(await status(lead.client.delete(`/api/groups/${group.id}/members/${lead.id}`))).toBe(403);
    expect(await status(lead.client.delete(`/api/groups/${group.id}/members/${newcomer.id}`))).toBe(200);
    // A plain member 403; an administrator of another group and a stranger 404.
    expect(await status(plain.client.post(`/api/groups/${group.id}/members`, { email: newcomer.email }))).toBe(403);
    expect(await status(plain.client.get(`/api/groups/${group.id}`))).toBe(403);
    expect(await status(otherLead.client.post(`/api/groups/${group.id}/members`, { email: newcomer.email }))).toBe(404);
    expect(await status(otherLead.client.delete(`/api/groups/${group.id}/members/${plain.id}`))).toBe(404);
    expect(await status(newcomer.client.get(`/api/groups/${group.id}`))).toBe(404);
    // A sub-user of the group administrator's account is not the owner.
    const sub = await seed.subUser(t, lead, ['files.share']);
    expect(await status(sub.client.post(`/api/groups/${group.id}/members`, { email: newcomer.email }))).toBe(403);
    res = await lead.client.get('/api/groups?q=design');
    expect((await json(res)).groups.find((g: any) => g.id === group.id)).toEqual({
      id: group.id,
      name: group.name,
      size: 2,
      member: true,
      admin: true,
      teamFolderBytes: null,
    });
  });

  test('GET /api/groups?q= completes a name typed in another Unicode form (an accent decomposed, as macOS keyboards send it)', async () => {
    const owner = await seed.owner(t);
    const name = `Caf\u00e9 ${++groupCounter}`;
    const created = await json(await admin.client.post('/api/admin/groups', { name }));
    const res = await owner.client.get(`/api/groups?q=${encodeURIComponent('cafe\u0301')}`);
    expect(res.status).toBe(200);
    expect((await json(res)).groups.map((g: { id: string }) => g.id)).toContain(created.id);
  });

  test('GET /api/groups/:id: someone outside the group gets the 404 of a made-up id on every id route; a plain member a 403 saying whom to ask', async () => {
    const plain = await seed.owner(t);
    const outsider = await seed.owner(t);
    const group = await newGroup(plain);
    const madeUp = 'no-such-group-id-000000';
    for (const id of [group.id, madeUp]) {
      for (const res of [
        await outsider.client.get(`/api/groups/${id}`),
        await outsider.client.post(`/api/groups/${id}/members`, { email: outsider.email }),
        await outsider.client.delete(`/api/groups/${id}/members/${plain.id}`),
        await outsider.client.post(`/api/groups/${id}/team-folders`, { name: 'Ours', quota: 1024 }),
      ]) {
        expect({ status: res.status, body: await json(res) }).toEqual({ status: 404, body: { message: 'Group not found' } });
      }
    }
    const refused = await plain.client.get(`/api/groups/${group.id}`);
    expect(refused.status).toBe(403);
    expect(await json(refused)).toEqual({
      message:
        'Only an administrator of this group can see or change its members: ask the admin of this Coffer to make the change, or to make you an administrator of the group.',
    });
  });

  test('a group administrator adding a disabled account gets the answer an unknown email gets; the admin still adds it', async () => {
    const lead = await seed.owner(t);
    const disabled = await seed.owner(t);
    const group = await newGroup();
    expect(await status(admin.client.post(`/api/admin/groups/${group.id}/members`, { email: lead.email, admin: true }))).toBe(201);
    expect((await admin.client.send('PATCH', `/api/user/${disabled.id}`, { disabled: true })).status).toBe(200);

    const unknown = await lead.client.post(`/api/groups/${group.id}/members`, { email: seed.uniqueEmail('nobody') });
    const hidden = await lead.client.post(`/api/groups/${group.id}/members`, { email: disabled.email });
    expect({ status: hidden.status, body: await json(hidden) }).toEqual({ status: unknown.status, body: await json(unknown) });
    expect(unknown.status).toBe(404);
    expect((await json(await lead.client.get(`/api/groups/${group.id}`))).members.map((m: any) => m.email)).toEqual([lead.email]);

    const added = await admin.client.post(`/api/admin/groups/${group.id}/members`, { email: disabled.email });
    expect(added.status).toBe(201);
    expect((await json(added)).member.accountId).toBe(disabled.id);
  });

  test('a group administrator adding members spends the member-lookup allowance (each answer tells whether an email has an account): 429 past 30', async () => {
    const lead = await seed.owner(t);
    const newcomer = await seed.owner(t);
    const group = await newGroup();
    expect(await status(admin.client.post(`/api/admin/groups/${group.id}/members`, { email: lead.email, admin: true }))).toBe(201);
    const guesses = [];
    for (let i = 0; i < 30; i++)
      guesses.push(await status(lead.client.post(`/api/groups/${group.id}/members`, { email: seed.uniqueEmail('guess') })));
    expect(new Set(guesses)).toEqual(new Set([404]));
    const limited = await lead.client.post(`/api/groups/${group.id}/members`, { email: newcomer.email });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    // Sharing with a person spends the same allowance; the admin's console has none.
    const box = await folder(lead.client, 'Box');
    expect(await status(lead.client.post(`/api/files/${box.id}/members`, { email: newcomer.email, role: 'viewer' }))).toBe(429);
    expect(await status(admin.client.post(`/api/admin/groups/${group.id}/members`, { email: newcomer.email }))).toBe(201);
  });

  test('`coffer groups` lists, creates, adds, removes and deletes, and the server sees it at the next request', async () => {
    const owner = await seed.owner(t);
    const a = await seed.owner(t);
    const root = await folder(owner.client, 'Cli');
    const cli = (...args: string[]) => runCli(['groups', ...args, '--data-dir', t.dataDir]);
    let r = await cli('create', 'Night shift', '--description', 'After 22:00', '--json');
    expect(r.code).toBe(0);
    const group = parseJson(r);
    expect(group).toMatchObject({ name: 'Night shift', description: 'After 22:00', size: 0 });
    expect((await cli('create', 'night SHIFT')).code).toBe(1);
    await shareWithGroup(owner.client, root.id, group.id, 'viewer');
    r = await cli('add', 'night shift', a.email, '--admin');
    expect(r.stdout).toContain(`added ${a.email} to Night shift as group administrator`);
    expect(await status(a.client.get(`/api/files?parentId=${root.id}`))).toBe(200);
    r = await cli('list', '--json');
    expect(parseJson(r).groups.find((g: any) => g.id === group.id)).toMatchObject({ size: 1, items: 1 });
    expect((await cli('list', 'Night shift')).stdout).toContain('group admin');
    expect((await cli('add', 'No such group', a.email)).stderr).toContain('no group named No such group');
    r = await cli('remove', group.id, a.email);
    expect(r.stdout).toContain(`Removed ${a.email} from Night shift`);
    expect(await status(a.client.get(`/api/files?parentId=${root.id}`))).toBe(404);
    r = await cli('delete', 'Night shift');
    expect(r.code).toBe(0);
    expect((await json(await owner.client.get(`/api/files/${root.id}/members`))).groups).toEqual([]);
  });

  test('the audit names who did what to a group', async () => {
    const a = await seed.owner(t);
    const group = await newGroup(a);
    await eventually(async () => {
      const rows = t.server.ctx.db.$client
        .query<{ action: string; email: string }, [string]>(
          "SELECT action, email FROM audit_log WHERE target_type = 'group' AND target_id = ? ORDER BY id",
        )
        .all(group.id);
      expect(rows.map((r) => r.action)).toEqual(['group.create', 'group.member_add']);
      expect(rows.every((r) => r.email === admin.email)).toBe(true);
    });
  });
});

describe('sharing with a group', () => {
  test('members reach the item with the group role; the members list shows the group and its size; strongest role wins', async () => {
    const owner = await seed.owner(t);
    const viewer = await seed.owner(t);
    const both = await seed.owner(t);
    const group = await newGroup(viewer, both);
    const root = await folder(owner.client, 'Design');
    const file = await upload(owner.client, 'logo.txt', 'logo', { parentId: root.id });
    const shared = await shareWithGroup(owner.client, root.id, group.id, 'viewer');
    expect(shared).toEqual({ groupId: group.id, name: group.name, size: 2, role: 'viewer', addedAt: expect.any(String) });
    expect(await status(owner.client.post(`/api/files/${root.id}/members`, { groupId: group.id, role: 'editor' }))).toBe(409);
    expect(await status(owner.client.post(`/api/files/${root.id}/members`, { groupId: 'nope', role: 'editor' }))).toBe(404);
    expect(await status(owner.client.post(`/api/files/${root.id}/members`, { role: 'editor' }))).toBe(422);
    expect(await status(owner.client.post(`/api/files/${root.id}/members`, { groupId: group.id, email: both.email, role: 'editor' }))).toBe(
      422,
    );
    expect((await owner.client.post(`/api/files/${root.id}/members`, { email: both.email, role: 'editor' })).status).toBe(201);

    const members = await json(await viewer.client.get(`/api/files/${root.id}/members`));
    expect(members.groups).toEqual([shared]);
    expect(members.members.map((m: any) => m.email)).toEqual([both.email]);
    expect((await downloaded(viewer.client, file.id)).toString()).toBe('logo');
    expect(await status(viewer.client.post('/api/files/folder', { name: 'No', parentId: root.id }))).toBe(403);
    expect(await status(both.client.post('/api/files/folder', { name: 'Yes', parentId: root.id }))).toBe(200);

    const mine = (await json(await both.client.get('/api/files/shared-with-me'))).items;
    expect(mine.map((i: any) => [i.name, i.role])).toEqual([['Design', 'editor']]);
    expect((await json(await viewer.client.get('/api/files/shared-with-me'))).items.map((i: any) => [i.name, i.role])).toEqual([
      ['Design', 'viewer'],
    ]);

    // The person share gone, the group's viewer role is what is left.
    expect(await status(owner.client.delete(`/api/files/${root.id}/members/${both.id}`))).toBe(200);
    expect(await status(both.client.post('/api/files/folder', { name: 'No', parentId: root.id }))).toBe(403);
    expect(await status(both.client.get(`/api/files?parentId=${root.id}`))).toBe(200);
    // The group made editor: every member writes at once.
    const res = await owner.client.send('PATCH', `/api/files/${root.id}/groups/${group.id}`, { role: 'editor' });
    expect((await json(res)).group.role).toBe('editor');
    expect(await status(viewer.client.post('/api/files/folder', { name: 'Now', parentId: root.id }))).toBe(200);
    expect(await status(viewer.client.send('PATCH', `/api/files/${root.id}/groups/${group.id}`, { role: 'viewer' }))).toBe(403);
    expect(await status(owner.client.delete(`/api/files/${root.id}/groups/${group.id}`))).toBe(200);
    expect(await status(viewer.client.get(`/api/files?parentId=${root.id}`))).toBe(404);
    expect(await status(owner.client.delete(`/api/files/${root.id}/groups/${group.id}`))).toBe(404);
  });

  test('shared-with-me: an item shared in person and through groups shows once, at its newest share, with the strongest role; pages skip trashed items', async () => {
    const owner = await seed.owner(t);
    const member = await seed.owner(t);
    const one = await newGroup(member);
    const two = await newGroup(member);
    const folders = [];
    for (let i = 0; i < 24; i++) folders.push(await folder(owner.client, `F${String(i).padStart(2, '0')}`));
    for (const f of folders) await shareWithGroup(owner.client, f.id, one.id, 'viewer');
    // F00 again through the second group as editor, then in person as viewer: newest now, editor still.
    await shareWithGroup(owner.client, folders[0].id, two.id, 'editor');
    expect((await owner.client.post(`/api/files/${folders[0].id}/members`, { email: member.email, role: 'viewer' })).status).toBe(201);
    // The 20 newest group shares after F00's first go to the trash: a page must reach past them.
    expect((await owner.client.post('/api/files/delete', { ids: folders.slice(4).map((f) => f.id) })).status).toBe(200);

    const seen: Array<[string, string]> = [];
    let cursor = '';
    for (let page = 0; page < 10; page++) {
      const body = await json(await member.client.get(`/api/files/shared-with-me?limit=2${cursor ? `&cursor=${cursor}` : ''}`));
      seen.push(...body.items.map((i: any) => [i.name, i.role] as [string, string]));
      if (!body.nextCursor) break;
      cursor = body.nextCursor;
    }
    expect(seen).toEqual([
      ['F00', 'editor'],
      ['F03', 'viewer'],
      ['F02', 'viewer'],
      ['F01', 'viewer'],
    ]);
  });

  test('joining grants at once and notifies; leaving revokes at once, and open streams learn it', async () => {
    const owner = await seed.owner(t);
    const member = await seed.owner(t);
    const group = await newGroup();
    const root = await folder(owner.client, 'Team');
    await shareWithGroup(owner.client, root.id, group.id, 'editor');
    expect(await status(member.client.get(`/api/files?parentId=${root.id}`))).toBe(404);
    expect(await status(admin.client.post(`/api/admin/groups/${group.id}/members`, { email: member.email }))).toBe(201);
    expect(await status(member.client.get(`/api/files?parentId=${root.id}`))).toBe(200);
    const notes = (await json(await member.client.get('/api/notifications'))).notifications;
    expect(notes[0]).toMatchObject({ type: 'group.joined', text: `You are now in the group "${group.name}": 1 item is shared with it.` });

    const events = await member.client.get('/api/files/events');
    const reader = new SseReader(events);
    expect(await reader.nextData()).toEqual({ type: 'connected' });
    expect(await status(admin.client.delete(`/api/admin/groups/${group.id}/members/${member.id}`))).toBe(200);
    for (;;) {
      const event = await reader.nextData(10_000);
      if (event.type === 'share.removed') {
        expect(event.data).toEqual({ id: root.id, name: 'Team' });
        break;
      }
    }
    await reader.close();
    expect(await status(member.client.get(`/api/files?parentId=${root.id}`))).toBe(404);
    expect((await json(await member.client.get('/api/files/shared-with-me'))).items).toEqual([]);
  });

  test('a member removed from the group while uploading into the shared folder: the rest of the upload is refused', async () => {
    const owner = await seed.owner(t);
    const member = await seed.owner(t);
    const group = await newGroup(member);
    const root = await folder(owner.client, 'Uploads');
    await shareWithGroup(owner.client, root.id, group.id, 'editor');
    const res = await createUpload(member.client, 4, { filename: 'half.txt', parentId: root.id });
    expect(res.status).toBe(201);
    const location = new URL(res.headers.get('location')!, t.url).pathname;
    expect(await status(patchUpload(member.client, location, 0, new TextEncoder().encode('ha')))).toBe(204);
    expect(await status(admin.client.delete(`/api/admin/groups/${group.id}/members/${member.id}`))).toBe(200);
    expect(await status(patchUpload(member.client, location, 2, new TextEncoder().encode('lf')))).toBe(404);
    expect((await listAll(owner.client, `/api/files?parentId=${root.id}`)).map((i) => i.name)).toEqual([]);
  });
});

describe('the door matrix for group shares', () => {
  /** An owner's folder shared with an editor group and a viewer group, with a picture, a document and a second version. */
  async function scene() {
    const owner = await seed.owner(t);
    const editor = await seed.owner(t);
    const viewer = await seed.owner(t);
    const stranger = await seed.owner(t);
    const otherLead = await seed.owner(t);
    const editors = await newGroup(editor);
    const viewers = await newGroup(viewer);
    const other = await newGroup();
    expect(await status(admin.client.post(`/api/admin/groups/${other.id}/members`, { email: otherLead.email, admin: true }))).toBe(201);
    const root = await folder(owner.client, 'Shared');
    const png = (background: string) =>
      sharp({ create: { width: 8, height: 8, channels: 3, background } })
        .png()
        .toBuffer();
    const picture = await upload(owner.client, 'needle.png', await png('#123456'), { parentId: root.id });
    const doc = await upload(owner.client, 'plan.docx', await documents.docx('plan'), { parentId: root.id });
    const form = new FormData();
    form.append('file', new File([await png('#654321')], 'needle.png'));
    expect(await status(owner.client.request(`/api/files/${picture.id}/replace`, { method: 'POST', body: form }))).toBe(200);
    const versionId = (await json(await owner.client.get(`/api/files/${picture.id}/versions`))).versions[0].id as string;
    await shareWithGroup(owner.client, root.id, editors.id, 'editor');
    await shareWithGroup(owner.client, root.id, viewers.id, 'viewer');
    return { owner, editor, viewer, stranger, otherLead, editors, viewers, root, picture, doc, versionId };
  }

  /** Every door that reads the shared folder, by name. */
  function reads(c: TestClient, s: Awaited<ReturnType<typeof scene>>) {
    return {
      list: () => c.get(`/api/files?parentId=${s.root.id}`),
      info: () => c.get(`/api/files/${s.picture.id}/info`),
      download: () => c.get(`/api/files/${s.picture.id}/download`),
      zip: () => c.post('/api/files/download/bulk', { ids: [s.picture.id] }),
      thumbnail: () => c.get(`/api/files/${s.picture.id}/thumbnail`),
      versions: () => c.get(`/api/files/${s.picture.id}/versions`),
      versionDownload: () => c.get(`/api/files/${s.picture.id}/versions/${s.versionId}/download`),
      members: () => c.get(`/api/files/${s.root.id}/members`),
      docserver: () => c.get(`/api/docserver/config/${s.doc.id}`),
    };
  }

  /** Every door that changes the shared folder, by name. */
  function writes(c: TestClient, s: Awaited<ReturnType<typeof scene>>) {
    return {
      folder: () => c.post('/api/files/folder', { name: `f-${Math.random()}`, parentId: s.root.id }),
      upload: () => uploadRaw(c, `u-${Math.random()}.txt`, 'x', { parentId: s.root.id }),
      check: () => c.post('/api/files/upload/check', { fileSize: 1, parentId: s.root.id }),
      tus: () => createUpload(c, 1, { filename: `t-${Math.random()}.txt`, parentId: s.root.id }),
      restoreVersion: () => c.post(`/api/files/${s.picture.id}/versions/${s.versionId}/restore`),
      shareMembers: () => c.post(`/api/files/${s.root.id}/members`, { email: admin.email, role: 'viewer' }),
      link: () => c.post('/api/files/share', { ids: [s.picture.id], shared: true }),
    };
  }

  async function statuses(doors: Record<string, () => Promise<Response>>): Promise<Record<string, number>> {
    const out: Record<string, number> = {};
    for (const [name, door] of Object.entries(doors)) out[name] = (await door()).status;
    return out;
  }
  const every = (doors: Record<string, unknown>, code: number) => Object.fromEntries(Object.keys(doors).map((k) => [k, code]));

  test('API, tus, thumbnails, versions, members, document server: strangers and another group\u2019s administrator 404, viewers read and 403 on writes', async () => {
    const s = await scene();
    const viewerWrites = await statuses(writes(s.viewer.client, s));
    expect(viewerWrites).toEqual({ ...every(viewerWrites, 403) });
    expect(await statuses(reads(s.viewer.client, s))).toEqual(every(reads(s.viewer.client, s), 200));
    expect((await json(await reads(s.viewer.client, s).docserver())).config.editorConfig.mode).toBe('view');
    expect((await json(await reads(s.editor.client, s).docserver())).config.editorConfig.mode).toBe('edit');
    const editorWrites = await statuses(writes(s.editor.client, s));
    // Only the owner shares it further.
    expect(editorWrites).toEqual({ folder: 200, upload: 200, check: 200, tus: 201, restoreVersion: 200, shareMembers: 403, link: 403 });
    for (const outsider of [s.stranger, s.otherLead]) {
      expect(await statuses(reads(outsider.client, s))).toEqual(every(reads(outsider.client, s), 404));
      expect(await statuses(writes(outsider.client, s))).toEqual(every(writes(outsider.client, s), 404));
    }
  });

  test('a sub-user of a member without the permission is 403 on the doors that need it', async () => {
    const s = await scene();
    const blind = await seed.subUser(t, s.editor, []);
    const c = blind.client;
    for (const res of [
      c.get(`/api/files/${s.picture.id}/download`),
      c.get(`/api/files/${s.picture.id}/thumbnail`),
      c.get(`/api/files/${s.picture.id}/versions/${s.versionId}/download`),
      c.post(`/api/files/${s.picture.id}/versions/${s.versionId}/restore`),
      c.post('/api/files/folder', { name: 'x', parentId: s.root.id }),
      uploadRaw(c, 'x.txt', 'x', { parentId: s.root.id }),
      createUpload(c, 1, { filename: 'x.txt', parentId: s.root.id }),
      c.get(`/api/docserver/config/${s.doc.id}`),
    ])
      expect(await status(res)).toBe(403);
    expect(await status(c.get(`/api/files?parentId=${s.root.id}`))).toBe(200);
  });

  test('the access check outlives writes that cannot change access, and not one that can: a move out, the owner disabled, a person share gone', async () => {
    const owner = await seed.owner(t);
    const member = await seed.owner(t);
    const group = await newGroup(member);
    const root = await folder(owner.client, 'Kept');
    const inner = await folder(owner.client, 'Inner', root.id);
    await shareWithGroup(owner.client, root.id, group.id, 'editor');
    const innerPage = () => status(member.client.get(`/api/files?parentId=${inner.id}`));
    expect(await innerPage()).toBe(200);
    // Writes elsewhere (an upload, a rename) leave the answer as it was.
    await upload(member.client, 'a.txt', 'a', { parentId: inner.id });
    expect(await status(owner.client.post('/api/files/rename', { id: inner.id, name: 'Inner 2' }))).toBe(200);
    expect(await innerPage()).toBe(200);
    // Moved out of the shared folder by its owner: gone for the member at the next request.
    expect(await status(owner.client.post('/api/files/move', { ids: [inner.id], parentId: null }))).toBe(200);
    expect(await innerPage()).toBe(404);
    expect(await status(owner.client.post('/api/files/move', { ids: [inner.id], parentId: root.id }))).toBe(200);
    expect(await innerPage()).toBe(200);
    // The group's share gone while a person share of the member stays: the person's viewer role is what is left.
    expect(await status(owner.client.post(`/api/files/${root.id}/members`, { email: member.email, role: 'viewer' }))).toBe(201);
    expect(await status(member.client.post('/api/files/folder', { name: 'Yes', parentId: inner.id }))).toBe(200);
    expect(await status(owner.client.delete(`/api/files/${root.id}/groups/${group.id}`))).toBe(200);
    expect(await status(member.client.post('/api/files/folder', { name: 'No', parentId: inner.id }))).toBe(403);
    expect(await innerPage()).toBe(200);
    expect((await admin.client.send('PATCH', `/api/user/${owner.id}`, { disabled: true })).status).toBe(200);
    expect(await innerPage()).toBe(404);
  });

  test('removed from the group, and the group deleted: every door is 404 at the next request', async () => {
    const s = await scene();
    const before = reads(s.editor.client, s);
    expect(await statuses(before)).toEqual(every(before, 200));
    const docLink = (await json(await reads(s.viewer.client, s).docserver())).config.document.url as string;
    expect((await fetch(docLink)).status).toBe(200);

    expect(await status(admin.client.delete(`/api/admin/groups/${s.editors.id}/members/${s.editor.id}`))).toBe(200);
    expect(await statuses(reads(s.editor.client, s))).toEqual(every(before, 404));
    expect(await statuses(writes(s.editor.client, s))).toEqual(every(writes(s.editor.client, s), 404));

    expect(await status(admin.client.delete(`/api/admin/groups/${s.viewers.id}`))).toBe(200);
    expect(await statuses(reads(s.viewer.client, s))).toEqual(every(before, 404));
    // The document server's link handed to the viewer stops answering with the group.
    expect((await fetch(docLink)).status).toBe(404);
    expect(await status(s.owner.client.get(`/api/files?parentId=${s.root.id}`))).toBe(200);
  });

  test('WebDAV, search and live events follow the group: in, viewer, out', async () => {
    const s = await scene();
    const davEditor = await davLogin(t, s.editor);
    const davViewer = await davLogin(t, s.viewer);
    const davStranger = await davLogin(t, s.stranger);
    const inShare = 'Shared%20with%20me/Shared';
    expect(await davEditor.list(`${inShare}/`)).toContain('/dav/Shared with me/Shared/needle.png');
    expect(await status(davEditor.put(`${inShare}/dav.txt`, 'from dav'))).toBe(201);
    expect(await status(davViewer.put(`${inShare}/no.txt`, 'x'))).toBe(403);
    expect(await (await davViewer.request('GET', `${inShare}/dav.txt`)).text()).toBe('from dav');
    expect(await status(davStranger.request('GET', `${inShare}/dav.txt`))).toBe(404);

    const search = async (c: TestClient) =>
      (await json(await c.get('/api/files/search?q=needle&includeShared=true'))).map((i: any) => i.name);
    expect(await search(s.viewer.client)).toEqual(['needle.png']);
    expect(await search(s.stranger.client)).toEqual([]);

    const res = await s.viewer.client.get('/api/files/events');
    const reader = new SseReader(res);
    expect(await reader.nextData()).toEqual({ type: 'connected' });
    await upload(s.owner.client, 'fresh.txt', 'x', { parentId: s.root.id });
    for (;;) {
      const event = await reader.nextData(10_000);
      if (event.type !== 'connected' && JSON.stringify(event).includes('fresh.txt')) break;
    }
    await reader.close();

    expect(await status(admin.client.delete(`/api/admin/groups/${s.viewers.id}/members/${s.viewer.id}`))).toBe(200);
    expect(await status(davViewer.request('GET', `${inShare}/dav.txt`))).toBe(404);
    expect(await search(s.viewer.client)).toEqual([]);
  });
});
