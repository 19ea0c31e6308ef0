import { describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import { runCli } from '../../helpers/cli.ts';
import { json, type TestClient } from '../../helpers/client.ts';
import { davLogin } from '../../helpers/dav.ts';
import { eventually } from '../../helpers/eventually.ts';
import { downloaded, folder, listAll, upload, uploadRaw } from '../../helpers/files.ts';
import { newGroup } from '../../helpers/groups.ts';
import * as seed from '../../helpers/seed.ts';
import { type TestServer, tempDir } from '../../helpers/server.ts';
import { serverWithAdmin } from '../../helpers/suite.ts';
import { createUpload, patchUpload } from '../../helpers/tus.ts';

let t: TestServer;
let admin: seed.SeededLogin;

serverWithAdmin((s) => ({ t, admin } = s));

const status = async (res: Promise<Response>) => (await res).status;
let counter = 0;

const groupOf = (...members: seed.SeededLogin[]) => newGroup(admin, 'Team group', ...members);

/** A team folder with an editor group and a viewer group, each of one person. */
async function scene(quota: number | null = null) {
  const editor = await seed.owner(t);
  const viewer = await seed.owner(t);
  const stranger = await seed.owner(t);
  const editors = await groupOf(editor);
  const viewers = await groupOf(viewer);
  const name = `Design ${++counter}`;
  const res = await admin.client.post('/api/admin/team-folders', {
    name,
    quota,
    groups: [
      { groupId: editors, role: 'editor' },
      { groupId: viewers, role: 'viewer' },
    ],
  });
  expect(res.status).toBe(201);
  const team = await json(res);
  return { editor, viewer, stranger, editors, viewers, team, name };
}

const used = async (c: TestClient) => (await json(await c.get('/api/user/storage'))).used as number;
const teamOf = async (id: string) =>
  (await json(await admin.client.get('/api/admin/team-folders'))).teamFolders.find((f: any) => f.id === id);

describe('team folders', () => {
  test('the admin creates one with groups and a quota; members find it at the top of My files and in Shared with me, marked', async () => {
    const s = await scene(1000);
    expect(s.team).toMatchObject({ name: s.name, size: 0, quota: 1000, ownQuota: true });
    expect(s.team.groups.map((g: any) => g.role).sort()).toEqual(['editor', 'viewer']);
    const top = await json(await s.editor.client.get('/api/files'));
    expect(top[0]).toMatchObject({ id: s.team.folderId, name: s.name, type: 'folder', teamFolder: true, parentId: null });
    const shared = (await json(await s.viewer.client.get('/api/files/shared-with-me'))).items;
    expect(shared).toMatchObject([{ id: s.team.folderId, teamFolder: true, role: 'viewer', owner: { name: s.name, email: '' } }]);
    expect((await json(await s.stranger.client.get('/api/files'))).some((i: any) => i.id === s.team.folderId)).toBe(false);
    // A page after the first holds no team folder again.
    const res = await s.editor.client.get('/api/files?limit=1');
    expect(res.headers.get('x-next-cursor')).toBeNull();

    for (const c of [s.editor.client, s.viewer.client]) {
      expect(await status(c.get('/api/admin/team-folders'))).toBe(403);
      expect(await status(c.post('/api/admin/team-folders', { name: 'Mine' }))).toBe(403);
    }
    expect(await status(admin.client.post('/api/admin/team-folders', { name: 'a/b' }))).toBe(400);
    expect(await status(admin.client.post('/api/admin/team-folders', { name: 'X', groups: [{ groupId: 'nope', role: 'viewer' }] }))).toBe(
      404,
    );
    expect(
      await status(
        admin.client.post('/api/admin/team-folders', {
          name: 'X',
          groups: [
            { groupId: s.editors, role: 'viewer' },
            { groupId: s.editors, role: 'editor' },
          ],
        }),
      ),
    ).toBe(400);
  });

  test('its bytes count against its own quota: 413 on the API and 507 over WebDAV at its limit, members\u2019 own quotas untouched', async () => {
    const s = await scene(100);
    // The editor's own limit is smaller than what it writes into the team folder.
    t.server.ctx.db.$client.query('UPDATE users SET storage_limit = 10 WHERE id = ?').run(s.editor.id);
    const before = await used(s.editor.client);
    await upload(s.editor.client, 'a.bin', 'x'.repeat(60), { parentId: s.team.folderId });
    expect((await teamOf(s.team.id)).size).toBe(60);
    expect(await used(s.editor.client)).toBe(before);
    const res = await uploadRaw(s.editor.client, 'b.bin', 'x'.repeat(60), { parentId: s.team.folderId });
    expect(res.status).toBe(413);
    const dav = await davLogin(t, s.editor);
    const put = await dav.put(`${encodeURIComponent(s.name)}/c.bin`, 'x'.repeat(60));
    expect(put.status).toBe(507);
    expect(await status(s.editor.client.post('/api/files/upload/check', { fileSize: 41, parentId: s.team.folderId }))).toBe(413);
    expect(await status(s.editor.client.post('/api/files/upload/check', { fileSize: 40, parentId: s.team.folderId }))).toBe(200);
    // The admin gives it more room.
    const patched = await json(await admin.client.send('PATCH', `/api/admin/team-folders/${s.team.id}`, { quota: 1000 }));
    expect(patched.quota).toBe(1000);
    expect(await status(uploadRaw(s.editor.client, 'b.bin', 'x'.repeat(60), { parentId: s.team.folderId }))).toBe(200);
    expect(await used(s.editor.client)).toBe(before);
  });

  test('deleting the account of whoever wrote into it deletes nothing in it; the team account is no one\u2019s to manage as a user', async () => {
    const s = await scene();
    const file = await upload(s.editor.client, 'plan.txt', 'the plan', { parentId: s.team.folderId });
    expect(await status(admin.client.delete(`/api/user/${s.editor.id}`))).toBe(202);
    await eventually(() => expect(t.server.ctx.services.accounts.findById(s.editor.id)).toBeNull());
    expect((await downloaded(s.viewer.client, file.id)).toString()).toBe('the plan');
    expect((await teamOf(s.team.id)).size).toBe(8);

    const all = (await json(await admin.client.get('/api/user/all?limit=100'))).users;
    expect(all.some((u: any) => u.id === s.team.id || u.email.startsWith('team:'))).toBe(false);
    expect(await status(admin.client.send('PATCH', `/api/user/${s.team.id}`, { disabled: true }))).toBe(404);
    expect(await status(admin.client.delete(`/api/user/${s.team.id}`))).toBe(404);
    expect(await status(admin.client.put('/api/user/storage-limit', { targetUserId: s.team.id, storageLimit: 5 }))).toBe(404);
    // No email names it, not even at the command line: nobody can be given its sign-in.
    const r = await runCli(['users', 'reset-password', `team:${s.team.id}`, '--data-dir', t.dataDir], { stdin: 'a long new password\n' });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('no user with email');
  });

  test('the door matrix: viewers read and 403 on writes, strangers and another group\u2019s administrator 404, a sub-user without the permission 403', async () => {
    const s = await scene();
    const file = await upload(s.editor.client, 'doc.txt', 'doc', { parentId: s.team.folderId });
    const otherLead = await seed.owner(t);
    const other = await groupOf();
    expect(await status(admin.client.post(`/api/admin/groups/${other}/members`, { email: otherLead.email, admin: true }))).toBe(201);
    const writes = (c: TestClient) => [
      c.post('/api/files/folder', { name: `f${Math.random()}`, parentId: s.team.folderId }),
      uploadRaw(c, `u${Math.random()}.txt`, 'x', { parentId: s.team.folderId }),
      createUpload(c, 1, { filename: `t${Math.random()}.txt`, parentId: s.team.folderId }),
      c.post('/api/files/rename', { id: file.id, name: `r${Math.random()}.txt` }),
      c.post('/api/files/delete', { ids: [file.id] }),
    ];
    const reads = (c: TestClient) => [
      c.get(`/api/files?parentId=${s.team.folderId}`),
      c.get(`/api/files/${file.id}/download`),
      c.get(`/api/files/${file.id}/info`),
      c.get(`/api/files/${file.id}/versions`),
      c.get(`/api/files/${s.team.folderId}/members`),
    ];
    for (const res of reads(s.viewer.client)) expect(await status(res)).toBe(200);
    for (const res of writes(s.viewer.client)) expect(await status(res)).toBe(403);
    // The team folder itself is the team's: no member renames, trashes or shares it.
    for (const res of [
      s.editor.client.post('/api/files/rename', { id: s.team.folderId, name: 'Mine' }),
      s.editor.client.post('/api/files/delete', { ids: [s.team.folderId] }),
      s.editor.client.post('/api/files/share', { ids: [s.team.folderId], shared: true }),
      s.editor.client.post(`/api/files/${s.team.folderId}/members`, { email: s.stranger.email, role: 'viewer' }),
    ])
      expect(await status(res)).toBe(403);
    for (const outsider of [s.stranger, otherLead]) {
      for (const res of [...reads(outsider.client), ...writes(outsider.client)]) expect(await status(res)).toBe(404);
    }
    const blind = await seed.subUser(t, s.editor, []);
    for (const res of [
      blind.client.get(`/api/files/${file.id}/download`),
      uploadRaw(blind.client, 'x.txt', 'x', { parentId: s.team.folderId }),
      blind.client.post('/api/files/folder', { name: 'x', parentId: s.team.folderId }),
    ])
      expect(await status(res)).toBe(403);
  });

  test('groups changed, a member removed while uploading, the folder deleted: access ends at the next request', async () => {
    const s = await scene();
    const res = await createUpload(s.editor.client, 4, { filename: 'half.txt', parentId: s.team.folderId });
    expect(res.status).toBe(201);
    const location = new URL(res.headers.get('location')!, t.url).pathname;
    expect(await status(patchUpload(s.editor.client, location, 0, new TextEncoder().encode('ha')))).toBe(204);
    expect(await status(admin.client.delete(`/api/admin/groups/${s.editors}/members/${s.editor.id}`))).toBe(200);
    expect(await status(patchUpload(s.editor.client, location, 2, new TextEncoder().encode('lf')))).toBe(404);

    // The viewer group made editor, then taken off the folder.
    let team = await json(
      await admin.client.put(`/api/admin/team-folders/${s.team.id}/groups`, { groups: [{ groupId: s.viewers, role: 'editor' }] }),
    );
    expect(team.groups.map((g: any) => [g.groupId, g.role])).toEqual([[s.viewers, 'editor']]);
    expect(await status(s.viewer.client.post('/api/files/folder', { name: 'Now', parentId: s.team.folderId }))).toBe(200);
    team = await json(await admin.client.send('PATCH', `/api/admin/team-folders/${s.team.id}`, { name: 'Renamed team' }));
    expect(team.name).toBe('Renamed team');
    expect((await json(await s.viewer.client.get('/api/files')))[0]).toMatchObject({ name: 'Renamed team', teamFolder: true });

    const removed = await admin.client.delete(`/api/admin/team-folders/${s.team.id}`);
    expect(removed.status).toBe(202);
    expect(await status(s.viewer.client.get(`/api/files?parentId=${s.team.folderId}`))).toBe(404);
    expect((await json(await s.viewer.client.get('/api/files'))).some((i: any) => i.teamFolder)).toBe(false);
    expect(await teamOf(s.team.id)).toBeUndefined();
    expect(await status(admin.client.delete(`/api/admin/team-folders/${s.team.id}`))).toBe(404);
    await eventually(() => expect(t.server.ctx.services.accounts.findById(s.team.id)).toBeNull());
    expect((await json(await s.viewer.client.get('/api/files/shared-with-me'))).items).toEqual([]);
  });

  test('its trash is kept by its administrators (group administrators of an editor group): list, restore, delete forever', async () => {
    const s = await scene();
    const lead = await seed.owner(t);
    const viewerLead = await seed.owner(t);
    expect(await status(admin.client.post(`/api/admin/groups/${s.editors}/members`, { email: lead.email, admin: true }))).toBe(201);
    expect(await status(admin.client.post(`/api/admin/groups/${s.viewers}/members`, { email: viewerLead.email, admin: true }))).toBe(201);
    const file = await upload(s.editor.client, 'draft.txt', 'draft bytes', { parentId: s.team.folderId });
    expect(await status(s.editor.client.post('/api/files/delete', { ids: [file.id] }))).toBe(200);
    const trash = `/api/team-folders/${s.team.id}/trash`;
    const mine = async (c: TestClient) => (await json(await c.get('/api/team-folders'))).teamFolders;
    expect(await mine(lead.client)).toEqual([{ id: s.team.id, name: s.name, folderId: s.team.folderId, administrator: true }]);
    expect((await mine(s.editor.client))[0].administrator).toBe(false);
    expect((await mine(viewerLead.client))[0].administrator).toBe(false);
    expect(await mine(s.stranger.client)).toEqual([]);

    expect((await json(await lead.client.get(trash))).map((i: any) => i.name)).toEqual(['draft.txt']);
    for (const c of [s.editor.client, viewerLead.client]) {
      expect(await status(c.get(trash))).toBe(403);
      expect(await status(c.post(`${trash}/restore`, { ids: [file.id] }))).toBe(403);
    }
    for (const c of [s.stranger.client, admin.client]) {
      expect(await status(c.get(trash))).toBe(404);
      expect(await status(c.post(`${trash}/delete`, { ids: [file.id] }))).toBe(404);
    }
    const blind = await seed.subUser(t, lead, []);
    expect(await status(blind.client.post(`${trash}/restore`, { ids: [file.id] }))).toBe(403);

    expect(await status(lead.client.post(`${trash}/restore`, { ids: [file.id] }))).toBe(200);
    expect((await downloaded(s.viewer.client, file.id)).toString()).toBe('draft bytes');
    expect(await status(s.editor.client.post('/api/files/delete', { ids: [file.id] }))).toBe(200);
    const res = await lead.client.post(`${trash}/delete`, { ids: [file.id] });
    expect(res.status).toBe(202);
    const { jobId } = await json(res);
    await eventually(async () => expect((await json(await lead.client.get(`/api/files/jobs/${jobId}`))).status).toBe('completed'));
    expect(await json(await lead.client.get(trash))).toEqual([]);
    expect((await teamOf(s.team.id)).size).toBe(0);
    t.server.ctx.services.audit.flush();
    const restored = t.server.ctx.db.$client
      .query<{ email: string }, [string]>("SELECT email FROM audit_log WHERE action = 'file.restore' AND account_id = ?")
      .all(s.team.id);
    expect(restored).toEqual([{ email: lead.email }]);
  });

  test('a group administrator makes team folders for its group out of the allowance the admin gives it, never more', async () => {
    const lead = await seed.owner(t);
    const member = await seed.owner(t);
    const otherLead = await seed.owner(t);
    const group = await groupOf(member);
    const other = await groupOf();
    expect(await status(admin.client.post(`/api/admin/groups/${group}/members`, { email: lead.email, admin: true }))).toBe(201);
    expect(await status(admin.client.post(`/api/admin/groups/${other}/members`, { email: otherLead.email, admin: true }))).toBe(201);
    const make = (c: TestClient, name: string, quota: number) => c.post(`/api/groups/${group}/team-folders`, { name, quota });

    let res = await make(lead.client, 'Not yet', 100);
    expect(res.status).toBe(403);
    expect((await json(res)).message).toContain('has not let the administrators');
    res = await admin.client.send('PATCH', `/api/admin/groups/${group}`, { teamFolderBytes: 150 });
    expect((await json(res)).teamFolderBytes).toBe(150);

    res = await make(lead.client, 'Sprint', 100);
    expect(res.status).toBe(201);
    const sprint = await json(res);
    expect(sprint).toMatchObject({ name: 'Sprint', quota: 100, ownQuota: true, groups: [{ groupId: group, role: 'editor' }] });
    res = await make(lead.client, 'Too big', 60);
    expect(res.status).toBe(403);
    expect((await json(res)).message).toContain('50 B more');
    expect(await status(make(lead.client, 'Fits', 50))).toBe(201);
    expect(await status(make(member.client, 'Member', 1))).toBe(403);
    expect(await status(make(otherLead.client, 'Other', 1))).toBe(404);
    const sub = await seed.subUser(t, lead, ['files.upload']);
    expect(await status(make(sub.client, 'Sub', 1))).toBe(403);
    expect(await status(make(lead.client, 'Zero', 0))).toBe(422);
    // Its quota and groups are the admin's to change.
    expect(await status(lead.client.send('PATCH', `/api/admin/team-folders/${sprint.id}`, { quota: 10_000 }))).toBe(403);
    expect(await status(member.client.post('/api/files/folder', { name: 'In', parentId: sprint.folderId }))).toBe(200);
    // Deleting one gives its quota back to the allowance.
    expect(await status(admin.client.delete(`/api/admin/team-folders/${sprint.id}`))).toBe(202);
    expect(await status(make(lead.client, 'Again', 100))).toBe(201);
  });

  test('WebDAV: two team folders of one name are both at the root, the newer numbered past the names the account has there', async () => {
    const member = await seed.owner(t);
    const name = `Projects ${++counter}`;
    const ids: string[] = [];
    for (const prefix of ['First team', 'Second team']) {
      const res = await admin.client.post('/api/admin/team-folders', {
        name,
        groups: [{ groupId: await newGroup(admin, prefix, member), role: 'editor' }],
      });
      expect(res.status).toBe(201);
      ids.push((await json(res)).folderId);
    }
    await folder(member.client, `${name} (1)`);
    const dav = await davLogin(t, member);
    expect((await dav.list('')).filter((h) => h.startsWith(`/dav/${name}`)).sort()).toEqual(
      [`/dav/${name}/`, `/dav/${name} (1)/`, `/dav/${name} (2)/`].sort(),
    );
    expect(await status(dav.put(`${encodeURIComponent(name)}/a.txt`, 'first'))).toBe(201);
    expect(await status(dav.put(`${encodeURIComponent(`${name} (2)`)}/b.txt`, 'second'))).toBe(201);
    const names = async (folderId: string) =>
      (await json(await member.client.get(`/api/files?parentId=${folderId}`))).map((i: any) => i.name);
    expect([await names(ids[0]!), await names(ids[1]!)]).toEqual([['a.txt'], ['b.txt']]);
  });

  test('WebDAV: a team folder named Shared with me is numbered past the names at the root, shared or not, and read and written there', async () => {
    const member = await seed.owner(t);
    const other = await seed.owner(t);
    const res = await admin.client.post('/api/admin/team-folders', {
      name: 'Shared with me',
      groups: [{ groupId: await groupOf(member), role: 'editor' }],
    });
    expect(res.status).toBe(201);
    const team = await json(res);
    await folder(member.client, 'Shared with me (1)');
    const dav = await davLogin(t, member);
    const ALIAS = 'Shared%20with%20me%20(2)';
    const atRoot = async () => (await dav.list('')).filter((h) => h.startsWith('/dav/Shared with me')).sort();

    // Nothing shared yet: the team folder is already at the path it keeps once something is.
    expect(await atRoot()).toEqual(['/dav/Shared with me (1)/', '/dav/Shared with me (2)/']);
    expect(await status(dav.put(`${ALIAS}/a.txt`, 'before'))).toBe(201);
    const theirs = await folder(other.client, 'Holiday');
    expect(await status(other.client.post(`/api/files/${theirs.id}/members`, { email: member.email, role: 'viewer' }))).toBe(201);
    expect(await atRoot()).toEqual(['/dav/Shared with me (1)/', '/dav/Shared with me (2)/', '/dav/Shared with me/'].sort());
    expect(await dav.list('Shared%20with%20me/')).toEqual(['/dav/Shared with me/', '/dav/Shared with me/Holiday/']);

    expect(await status(dav.put(`${ALIAS}/b.txt`, 'after'))).toBe(201);
    expect((await dav.list(`${ALIAS}/`)).sort()).toEqual([
      '/dav/Shared with me (2)/',
      '/dav/Shared with me (2)/a.txt',
      '/dav/Shared with me (2)/b.txt',
    ]);
    expect(await (await dav.request('GET', `${ALIAS}/a.txt`)).text()).toBe('before');
    expect(await (await dav.request('GET', `${ALIAS}/b.txt`)).text()).toBe('after');
    // Its displayname is the numbered name, at the root's depth 1 and on itself; the share list's is its own.
    const rootAnswer = await (await dav.propfind('', '1')).text();
    const named = [...rootAnswer.matchAll(/<D:href>([^<]*)<\/D:href>.*?<D:displayname(?:\/>|>([^<]*)<)/g)].map((m) => [m[1], m[2] ?? '']);
    expect(named.sort()).toEqual(
      [
        ['/dav/', ''],
        ['/dav/Shared%20with%20me/', 'Shared with me'],
        ['/dav/Shared%20with%20me%20%281%29/', 'Shared with me (1)'],
        ['/dav/Shared%20with%20me%20%282%29/', 'Shared with me (2)'],
      ].sort(),
    );
    expect(await (await dav.propfind(`${ALIAS}/`, '0')).text()).toContain('<D:displayname>Shared with me (2)</D:displayname>');
    const inTeam = (await json(await member.client.get(`/api/files?parentId=${team.folderId}`))).map((i: any) => i.name).sort();
    expect(inTeam).toEqual(['a.txt', 'b.txt']);
  });

  test('WebDAV: a team folder is at the root as /dav/<name>/ (an own item of that name hides it); viewers read, strangers 404', async () => {
    const s = await scene();
    const dav = await davLogin(t, s.editor);
    const viewerDav = await davLogin(t, s.viewer);
    const strangerDav = await davLogin(t, s.stranger);
    const at = encodeURIComponent(s.name);
    expect(await dav.list('')).toContain(`/dav/${s.name}/`);
    // A sync client stops at an unchanged root ETag, so a change inside the team folder must move the viewer's root.
    const rootEtag = async () => /<d:getetag>([^<]*)<\/d:getetag>/i.exec(await (await viewerDav.propfind('', '0')).text())?.[1];
    const before = await rootEtag();
    expect(await status(dav.put(`${at}/plan.txt`, 'via dav'))).toBe(201);
    expect(await rootEtag()).not.toBe(before);
    expect(await status(dav.request('MKCOL', `${at}/Sub`))).toBe(201);
    expect((await dav.list(`${at}/`)).sort()).toEqual([`/dav/${s.name}/`, `/dav/${s.name}/Sub/`, `/dav/${s.name}/plan.txt`]);
    let res = await dav.request('MOVE', `${at}/plan.txt`, { headers: { destination: `${t.url}/dav/${at}/Sub/plan.txt` } });
    expect(res.status).toBe(201);
    // Out of the team folder into the member's own files: the boundary of a share.
    res = await dav.request('MOVE', `${at}/Sub/plan.txt`, { headers: { destination: `${t.url}/dav/plan.txt` } });
    expect(res.status).toBe(403);
    expect(await (await viewerDav.request('GET', `${at}/Sub/plan.txt`)).text()).toBe('via dav');
    expect(await status(viewerDav.put(`${at}/no.txt`, 'x'))).toBe(403);
    expect(await status(strangerDav.request('GET', `${at}/Sub/plan.txt`))).toBe(404);
    expect(await strangerDav.list('')).not.toContain(`/dav/${s.name}/`);
    expect((await teamOf(s.team.id)).size).toBe(7);
    // Added to the team's group, the stranger reaches it at the next request: what was known of their team folders is dropped.
    expect(await status(admin.client.post(`/api/admin/groups/${s.editors}/members`, { email: s.stranger.email }))).toBe(201);
    expect(await (await strangerDav.request('GET', `${at}/Sub/plan.txt`)).text()).toBe('via dav');

    // Listed once, at the root: Shared with me leaves it out, or a sync client would sync it twice.
    expect(await viewerDav.list('')).not.toContain('/dav/Shared with me/');
    expect(await status(viewerDav.request('GET', `Shared%20with%20me/${at}/Sub/plan.txt`))).toBe(404);
    // The viewer's own folder of the same name takes the root path; the team folder is then under Shared with me.
    await folder(s.viewer.client, s.name);
    expect(await viewerDav.list(`${at}/`)).toEqual([`/dav/${s.name}/`]);
    expect(await status(viewerDav.request('GET', `Shared%20with%20me/${at}/Sub/plan.txt`))).toBe(200);
  });

  test('its administrators make and remove public links of what is in it; members 403, others 404, nothing outside it', async () => {
    const s = await scene();
    const lead = await seed.owner(t);
    expect(await status(admin.client.post(`/api/admin/groups/${s.editors}/members`, { email: lead.email, admin: true }))).toBe(201);
    const file = await upload(s.editor.client, 'flyer.txt', 'public flyer', { parentId: s.team.folderId });
    const mine = await upload(lead.client, 'mine.txt', 'mine');
    const share = (c: TestClient, ids: string[], shared = true) =>
      c.post(`/api/team-folders/${s.team.id}/share`, { ids, shared, expiry: '7d' });

    const res = await share(lead.client, [file.id]);
    expect(res.status).toBe(200);
    const link = new URL((await json(res)).links[file.id]);
    const visitor = await fetch(`${t.url}${link.pathname}`);
    expect(visitor.status).toBe(200);
    expect(await status(share(s.editor.client, [file.id]))).toBe(403);
    expect(await status(share(s.stranger.client, [file.id]))).toBe(404);
    expect(await status(share(lead.client, [mine.id]))).toBe(404);
    expect(await status(share(lead.client, [file.id], false))).toBe(200);
    expect((await fetch(`${t.url}${link.pathname}`)).status).toBe(404);
  });

  test('its administrators list, look up, change and remove its links; members 403, outsiders and another team\u2019s administrators 404', async () => {
    const s = await scene();
    const lead = await seed.owner(t);
    expect(await status(admin.client.post(`/api/admin/groups/${s.editors}/members`, { email: lead.email, admin: true }))).toBe(201);
    const sub = await folder(s.editor.client, 'Flyers', s.team.folderId);
    const file = await upload(s.editor.client, 'flyer.txt', 'public flyer', { parentId: sub.id });
    const mine = await upload(lead.client, 'mine.txt', 'mine');
    const base = `/api/team-folders/${s.team.id}/share`;
    let res = await lead.client.post(base, { ids: [file.id, sub.id], shared: true, expiry: '7d' });
    expect(res.status).toBe(200);
    const made = (await json(res)).links;
    expect(await status(lead.client.post('/api/files/share', { ids: [mine.id], shared: true }))).toBe(200);

    // Look up: the existing links, none made; an item outside the team folder is 404.
    res = await lead.client.post(`${base}/links`, { ids: [file.id, sub.id] });
    expect(await json(res)).toEqual({ links: made });
    expect(await status(lead.client.post(`${base}/links`, { ids: [mine.id] }))).toBe(404);

    // The list: the team's links only, with their options; the lead's own list keeps only the lead's link.
    res = await lead.client.get(`${base}/links`);
    expect(res.status).toBe(200);
    const page = await json(res);
    expect(page.links.map((l: any) => l.itemId).sort()).toEqual([file.id, sub.id].sort());
    expect(page.links[0]).not.toHaveProperty('accountId');
    const fileLink = page.links.find((l: any) => l.itemId === file.id);
    expect(fileLink).toMatchObject({ itemName: 'flyer.txt', mode: 'view', hasPassword: false, url: made[file.id] });
    expect((await json(await lead.client.get(`${base}/links?itemId=${sub.id}`))).links.map((l: any) => l.itemId)).toEqual([sub.id]);
    expect((await json(await lead.client.get('/api/files/share/links'))).links.map((l: any) => l.itemId)).toEqual([mine.id]);
    expect(await status(lead.client.get(`${base}/links?limit=0`))).toBe(422);

    // Change: a password and a download limit; a file cannot take an upload mode (400); another account's token 404.
    res = await lead.client.send('PATCH', `${base}/links/${fileLink.token}`, { password: 'secret-words', maxDownloads: 3 });
    expect(res.status).toBe(200);
    expect(await json(res)).toMatchObject({ token: fileLink.token, hasPassword: true, maxDownloads: 3 });
    expect(await status(lead.client.send('PATCH', `${base}/links/${fileLink.token}`, { mode: 'upload' }))).toBe(400);
    const subLink = page.links.find((l: any) => l.itemId === sub.id);
    expect((await json(await lead.client.send('PATCH', `${base}/links/${subLink.token}`, { mode: 'view_upload' }))).mode).toBe(
      'view_upload',
    );
    const ownToken = (await json(await lead.client.get('/api/files/share/links'))).links[0].token;
    expect(await status(lead.client.send('PATCH', `${base}/links/${ownToken}`, { maxDownloads: 1 }))).toBe(404);
    expect(await status(lead.client.send('PATCH', `/api/files/share/links/${fileLink.token}`, { maxDownloads: 1 }))).toBe(404);

    // Who may not: a member 403, a stranger and an administrator of another team folder 404, a sub-user without Share 403.
    const otherLead = await seed.owner(t);
    const otherGroup = await groupOf();
    expect(await status(admin.client.post(`/api/admin/groups/${otherGroup}/members`, { email: otherLead.email, admin: true }))).toBe(201);
    const other = await json(
      await admin.client.post('/api/admin/team-folders', {
        name: `Other ${++counter}`,
        quota: null,
        groups: [{ groupId: otherGroup, role: 'editor' }],
      }),
    );
    const doors = (c: TestClient, teamId = s.team.id) => [
      c.post(`/api/team-folders/${teamId}/share/links`, { ids: [file.id] }),
      c.get(`/api/team-folders/${teamId}/share/links`),
      c.send('PATCH', `/api/team-folders/${teamId}/share/links/${fileLink.token}`, { maxDownloads: 9 }),
      c.delete(`/api/team-folders/${teamId}/share/links/${fileLink.token}`),
    ];
    for (const c of [s.editor.client, s.viewer.client]) for (const r of doors(c)) expect(await status(r)).toBe(403);
    for (const c of [s.stranger.client, otherLead.client]) for (const r of doors(c)) expect(await status(r)).toBe(404);
    // Through its own team folder, another team's administrator finds neither the items nor the token.
    const [lookup, , patch, remove] = doors(otherLead.client, other.id);
    expect(await status(lookup!)).toBe(404);
    expect(await status(patch!)).toBe(404);
    expect(await status(remove!)).toBe(404);
    const blind = await seed.subUser(t, lead, ['files.download']);
    for (const r of doors(blind.client)) expect(await status(r)).toBe(403);
    expect(await status(lead.client.get('/api/team-folders/nope/share/links'))).toBe(404);
    expect((await json(await lead.client.get(`${base}/links`))).links.find((l: any) => l.itemId === file.id).maxDownloads).toBe(3);

    // Remove: the link stops answering at once; a second time 404.
    res = await lead.client.delete(`${base}/links/${fileLink.token}`);
    expect(res.status).toBe(200);
    expect((await json(res)).message).toBe('Item is no longer shared');
    expect((await fetch(`${t.url}${new URL(made[file.id]).pathname}`)).status).toBe(404);
    expect(await status(lead.client.delete(`${base}/links/${fileLink.token}`))).toBe(404);
    expect((await json(await lead.client.get(`${base}/links`))).links.map((l: any) => l.itemId)).toEqual([sub.id]);
    // The team folder itself is the team's to share by link, as a folder.
    res = await lead.client.post(base, { ids: [s.team.folderId], shared: true, expiry: 'never', mode: 'upload' });
    expect(res.status).toBe(200);
    expect((await json(await lead.client.get(`${base}/links?itemId=${s.team.folderId}`))).links[0]).toMatchObject({
      mode: 'upload',
      expiresAt: null,
    });
    // Leaving the editor group's administrators ends it: the former lead is then a stranger to the team folder.
    expect(await status(admin.client.delete(`/api/admin/groups/${s.editors}/members/${lead.id}`))).toBe(200);
    expect(await status(lead.client.get(`${base}/links`))).toBe(404);
  });

  test('versions of its files: members list and download them, editors restore, its administrators delete, viewers 403, outsiders 404', async () => {
    const s = await scene();
    const file = await upload(s.editor.client, 'plan.txt', 'first', { parentId: s.team.folderId });
    const form = new FormData();
    form.append('file', new File(['second'], 'plan.txt'));
    expect(await status(s.viewer.client.request(`/api/files/${file.id}/replace`, { method: 'POST', body: form }))).toBe(403);
    expect(await status(s.editor.client.request(`/api/files/${file.id}/replace`, { method: 'POST', body: form }))).toBe(200);
    const list = async (c: TestClient) => (await json(await c.get(`/api/files/${file.id}/versions`))).versions as any[];
    const versions = await list(s.viewer.client);
    expect(versions).toHaveLength(1);
    expect(versions[0].author).toMatchObject({ id: s.editor.id });
    const versionId = versions[0].id as string;
    expect(await (await s.viewer.client.get(`/api/files/${file.id}/versions/${versionId}/download`)).text()).toBe('first');
    expect(await status(s.viewer.client.post(`/api/files/${file.id}/versions/${versionId}/restore`))).toBe(403);
    expect(await status(s.viewer.client.delete(`/api/files/${file.id}/versions/${versionId}`))).toBe(403);
    for (const r of [
      s.stranger.client.get(`/api/files/${file.id}/versions`),
      s.stranger.client.get(`/api/files/${file.id}/versions/${versionId}/download`),
      s.stranger.client.post(`/api/files/${file.id}/versions/${versionId}/restore`),
    ])
      expect(await status(r)).toBe(404);
    expect(await status(s.editor.client.post(`/api/files/${file.id}/versions/${versionId}/restore`))).toBe(200);
    expect((await downloaded(s.editor.client, file.id)).toString()).toBe('first');
    // The content replaced by the restore is kept as a version, counted against the team's quota, not the editor's.
    const [kept] = await list(s.editor.client);
    expect(kept).toMatchObject({ source: 'replace', size: 6 });
    expect(await used(s.editor.client)).toBe(0);
    expect((await teamOf(s.team.id)).size).toBe(11);
    // Deleting a version is the team's: its administrators do it; an editor who is not one, and the administrator of the viewer group only, 403.
    const lead = await seed.owner(t);
    const viewerLead = await seed.owner(t);
    expect(await status(admin.client.post(`/api/admin/groups/${s.editors}/members`, { email: lead.email, admin: true }))).toBe(201);
    expect(await status(admin.client.post(`/api/admin/groups/${s.viewers}/members`, { email: viewerLead.email, admin: true }))).toBe(201);
    expect(await status(s.editor.client.delete(`/api/files/${file.id}/versions/${kept.id}`))).toBe(403);
    expect(await status(viewerLead.client.delete(`/api/files/${file.id}/versions/${kept.id}`))).toBe(403);
    expect(await status(s.stranger.client.delete(`/api/files/${file.id}/versions/${kept.id}`))).toBe(404);
    expect(await status(lead.client.delete(`/api/files/${file.id}/versions/${kept.id}`))).toBe(200);
    expect(await list(s.viewer.client)).toEqual([]);
    expect((await teamOf(s.team.id)).size).toBe(5);
  });

  test('`coffer export` writes each team folder under its account, team:<id>', async () => {
    const s = await scene();
    const sub = await folder(s.editor.client, 'Sub', s.team.folderId);
    await upload(s.editor.client, 'inside.txt', 'team bytes', { parentId: sub.id });
    const out = tempDir('coffer-team-export-');
    try {
      const r = await runCli(['export', '--to', out, '--data-dir', t.dataDir, '--json'], { timeoutMs: 60_000 });
      expect(r.code).toBe(0);
      expect(fs.readFileSync(path.join(out, `team:${s.team.id}`, s.name, 'Sub', 'inside.txt'), 'utf8')).toBe('team bytes');
    } finally {
      fs.rmSync(out, { recursive: true, force: true });
    }
  });

  test('the audit names the admin for the folder and the member for what they wrote', async () => {
    const s = await scene();
    await upload(s.editor.client, 'audited.txt', 'x', { parentId: s.team.folderId });
    await folder(s.editor.client, 'Sub', s.team.folderId);
    t.server.ctx.services.audit.flush();
    const rows = t.server.ctx.db.$client
      .query<{ action: string; email: string }, [string, string]>(
        "SELECT action, email FROM audit_log WHERE (target_type = 'team_folder' AND target_id = ?) OR (action = 'file.upload' AND account_id = ?) ORDER BY id",
      )
      .all(s.team.id, s.team.id);
    expect(rows).toContainEqual({ action: 'team_folder.create', email: admin.email });
    expect(rows).toContainEqual({ action: 'file.upload', email: s.editor.email });
  });

  test('an item restored from its trash after its folder was trashed comes back at the top of the team folder, where its members reach it', async () => {
    const s = await scene();
    const lead = await seed.owner(t);
    expect(await status(admin.client.post(`/api/admin/groups/${s.editors}/members`, { email: lead.email, admin: true }))).toBe(201);
    const sub = await folder(s.editor.client, 'Sub', s.team.folderId);
    const file = await upload(s.editor.client, 'inner.txt', 'inner bytes', { parentId: sub.id });
    expect(await status(s.editor.client.post('/api/files/delete', { ids: [file.id] }))).toBe(200);
    expect(await status(s.editor.client.post('/api/files/delete', { ids: [sub.id] }))).toBe(200);
    expect(await status(lead.client.post(`/api/team-folders/${s.team.id}/trash/restore`, { ids: [file.id] }))).toBe(200);
    // Not at the root of the team's account, which no one reaches: in the team folder itself.
    const top = await listAll(s.viewer.client, `/api/files?parentId=${s.team.folderId}`);
    expect(top.map((i) => [i.id, i.name])).toEqual([[file.id, 'inner.txt']]);
    expect((await downloaded(s.viewer.client, file.id)).toString()).toBe('inner bytes');
    expect((await json(await lead.client.get(`/api/team-folders/${s.team.id}/trash`))).map((i: any) => i.name)).toEqual(['Sub']);
  });

  test('a member taken out while its resumable upload into the team folder is unfinished: the room that upload reserved is the team\u2019s again at once', async () => {
    const s = await scene(100);
    const other = await seed.owner(t);
    expect(await status(admin.client.post(`/api/admin/groups/${s.editors}/members`, { email: other.email }))).toBe(201);
    const res = await createUpload(s.editor.client, 80, { filename: 'big.bin', parentId: s.team.folderId });
    expect(res.status).toBe(201);
    const location = new URL(res.headers.get('location')!, t.url).pathname;
    expect(await status(patchUpload(s.editor.client, location, 0, new TextEncoder().encode('x'.repeat(30))))).toBe(204);
    expect(await status(admin.client.delete(`/api/admin/groups/${s.editors}/members/${s.editor.id}`))).toBe(200);
    // The upload can never be finished: it no longer holds 80 of the team folder's 100 bytes.
    await eventually(
      async () => expect(await status(uploadRaw(other.client, 'fits.bin', 'y'.repeat(50), { parentId: s.team.folderId }))).toBe(200),
      { timeoutMs: 10_000 },
    );
    expect(await status(patchUpload(s.editor.client, location, 30, new TextEncoder().encode('x')))).toBe(404);
    expect((await teamOf(s.team.id)).size).toBe(50);
  });

  test('while sharing with people is off, making a team folder with groups or changing its groups is refused and changes nothing', async () => {
    const s = await scene();
    const later = await groupOf(s.stranger);
    const before = (await json(await admin.client.get('/api/admin/team-folders'))).teamFolders.length;
    t.server.ctx.services.settings.set('peopleSharing', false);
    try {
      const made = await admin.client.post('/api/admin/team-folders', {
        name: 'Made while off',
        groups: [{ groupId: later, role: 'viewer' }],
      });
      expect(made.status).toBe(403);
      expect((await json(made)).message).toContain('Sharing with people is turned off');
      const regrouped = await admin.client.put(`/api/admin/team-folders/${s.team.id}/groups`, {
        groups: [{ groupId: later, role: 'viewer' }],
      });
      expect(regrouped.status).toBe(403);
    } finally {
      t.server.ctx.services.settings.set('peopleSharing', true);
    }
    const after = (await json(await admin.client.get('/api/admin/team-folders'))).teamFolders;
    expect(after.length).toBe(before);
    expect(after.some((f: any) => f.name === 'Made while off')).toBe(false);
    expect((await teamOf(s.team.id)).groups.map((g: any) => [g.groupId, g.role]).sort()).toEqual(
      [
        [s.editors, 'editor'],
        [s.viewers, 'viewer'],
      ].sort(),
    );
  });

  test('a member whose account is deleted while its resumable upload into the team folder is unfinished: the room that upload reserved is the team\u2019s again', async () => {
    const s = await scene(100);
    const other = await seed.owner(t);
    expect(await status(admin.client.post(`/api/admin/groups/${s.editors}/members`, { email: other.email }))).toBe(201);
    const res = await createUpload(s.editor.client, 80, { filename: 'big.bin', parentId: s.team.folderId });
    expect(res.status).toBe(201);
    expect(await status(admin.client.delete(`/api/user/${s.editor.id}`))).toBe(202);
    await eventually(() => expect(t.server.ctx.services.accounts.findById(s.editor.id)).toBeNull());
    await eventually(
      async () => expect(await status(uploadRaw(other.client, 'fits.bin', 'y'.repeat(50), { parentId: s.team.folderId }))).toBe(200),
      {
        timeoutMs: 10_000,
      },
    );
    expect((await teamOf(s.team.id)).size).toBe(50);
  });

  test('an item\u2019s details name the team folder as its owner with no email, as Shared with me does: its account\u2019s team:<id> is no address', async () => {
    const s = await scene();
    const file = await upload(s.editor.client, 'facts.txt', 'x', { parentId: s.team.folderId });
    for (const id of [file.id, s.team.folderId]) {
      const info = await json(await s.viewer.client.get(`/api/files/${id}/info`));
      expect(info.sharedWithMe.owner).toEqual({ id: s.team.id, name: s.name, email: '' });
    }
  });

  test('a resumable upload whose folder in the team folder is trashed before its last byte lands at the top of the team folder, where its members reach it', async () => {
    const s = await scene();
    const sub = await folder(s.editor.client, 'Drafts', s.team.folderId);
    const res = await createUpload(s.editor.client, 4, { filename: 'late.txt', parentId: sub.id });
    expect(res.status).toBe(201);
    const location = new URL(res.headers.get('location')!, t.url).pathname;
    expect(await status(patchUpload(s.editor.client, location, 0, new TextEncoder().encode('la')))).toBe(204);
    expect(await status(s.editor.client.post('/api/files/delete', { ids: [sub.id] }))).toBe(200);
    expect(await status(patchUpload(s.editor.client, location, 2, new TextEncoder().encode('te')))).toBe(204);
    const top = await listAll(s.viewer.client, `/api/files?parentId=${s.team.folderId}`);
    const landed = top.find((i) => i.name === 'late.txt');
    expect(landed).toBeDefined();
    expect((await downloaded(s.viewer.client, landed.id)).toString()).toBe('late');
  });
});
