import { describe, expect, test } from 'bun:test';
import { runCli } from '../../helpers/cli.ts';
import { json } from '../../helpers/client.ts';
import { folder, upload } from '../../helpers/files.ts';
import { newGroup } from '../../helpers/groups.ts';
import * as seed from '../../helpers/seed.ts';
import type { TestServer } from '../../helpers/server.ts';
import { serverWithAdmin } from '../../helpers/suite.ts';

let t: TestServer;
let admin: seed.SeededLogin;

serverWithAdmin((s) => ({ t, admin } = s));

const status = async (res: Promise<Response>) => (await res).status;
let counter = 0;

/** `coffer groups …` on the server's data directory, from its own process and database connection. */
async function groupsCli(...args: string[]): Promise<void> {
  const r = await runCli(['groups', ...args, '--data-dir', t.dataDir]);
  expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: '' });
}

const groupOf = (...members: seed.SeededLogin[]) => newGroup(admin, 'Cache group', ...members);

/**
 * An owner's folder with a folder and a file inside, and a member who is given it by each test. `read`
 * and `write` are the member's requests at the inner folder: every one of them runs the access check, so
 * each change below lands while the check's cache holds the member's answer from the request before.
 */
async function scene() {
  const owner = await seed.owner(t);
  const member = await seed.owner(t);
  const root = await folder(owner.client, 'Root');
  const inner = await folder(owner.client, 'Inner', root.id);
  const file = await upload(owner.client, 'note.txt', 'note', { parentId: inner.id });
  const read = () => status(member.client.get(`/api/files?parentId=${inner.id}`));
  const write = () => status(member.client.post('/api/files/folder', { name: `f${++counter}`, parentId: inner.id }));
  return { owner, member, root, inner, file, read, write };
}

describe('the access check sees every write that changes access at the very next request', () => {
  test('a person share: added, its role lowered, removed', async () => {
    const s = await scene();
    expect(await s.read()).toBe(404);
    expect(await status(s.owner.client.post(`/api/files/${s.root.id}/members`, { email: s.member.email, role: 'editor' }))).toBe(201);
    expect(await s.read()).toBe(200);
    expect(await s.write()).toBe(200);
    expect(await status(s.owner.client.send('PATCH', `/api/files/${s.root.id}/members/${s.member.id}`, { role: 'viewer' }))).toBe(200);
    expect(await s.write()).toBe(403);
    expect(await s.read()).toBe(200);
    expect(await status(s.owner.client.delete(`/api/files/${s.root.id}/members/${s.member.id}`))).toBe(200);
    expect(await s.read()).toBe(404);
  });

  test('a group share: added, its role lowered, removed', async () => {
    const s = await scene();
    const group = await groupOf(s.member);
    expect(await s.read()).toBe(404);
    expect(await status(s.owner.client.post(`/api/files/${s.root.id}/members`, { groupId: group, role: 'editor' }))).toBe(201);
    expect(await s.read()).toBe(200);
    expect(await s.write()).toBe(200);
    expect(await status(s.owner.client.send('PATCH', `/api/files/${s.root.id}/groups/${group}`, { role: 'viewer' }))).toBe(200);
    expect(await s.write()).toBe(403);
    expect(await s.read()).toBe(200);
    expect(await status(s.owner.client.delete(`/api/files/${s.root.id}/groups/${group}`))).toBe(200);
    expect(await s.read()).toBe(404);
  });

  test('a group’s members: joining and leaving through the API, by its administrator, and through the CLI’s own connection', async () => {
    const s = await scene();
    const lead = await seed.owner(t);
    const group = await groupOf();
    expect(await status(admin.client.post(`/api/admin/groups/${group}/members`, { email: lead.email, admin: true }))).toBe(201);
    expect(await status(s.owner.client.post(`/api/files/${s.root.id}/members`, { groupId: group, role: 'editor' }))).toBe(201);
    expect(await s.read()).toBe(404);
    expect(await status(admin.client.post(`/api/admin/groups/${group}/members`, { email: s.member.email }))).toBe(201);
    expect(await s.read()).toBe(200);
    expect(await status(lead.client.delete(`/api/groups/${group}/members/${s.member.id}`))).toBe(200);
    expect(await s.read()).toBe(404);
    expect(await status(lead.client.post(`/api/groups/${group}/members`, { email: s.member.email }))).toBe(201);
    expect(await s.read()).toBe(200);
    await groupsCli('remove', group, s.member.email);
    expect(await s.read()).toBe(404);
    await groupsCli('add', group, s.member.email);
    expect(await s.read()).toBe(200);
  });

  test('a group deleted, by the admin and through the CLI', async () => {
    const s = await scene();
    const first = await groupOf(s.member);
    const second = await groupOf(s.member);
    expect(await status(s.owner.client.post(`/api/files/${s.root.id}/members`, { groupId: first, role: 'viewer' }))).toBe(201);
    expect(await status(s.owner.client.post(`/api/files/${s.inner.id}/members`, { groupId: second, role: 'editor' }))).toBe(201);
    expect(await s.write()).toBe(200);
    expect(await status(admin.client.delete(`/api/admin/groups/${second}`))).toBe(200);
    expect(await s.write()).toBe(403);
    expect(await s.read()).toBe(200);
    await groupsCli('delete', first);
    expect(await s.read()).toBe(404);
  });

  test('an item moved out of and back into a shared folder, trashed and restored, deleted for good; a folder moved in from outside', async () => {
    const s = await scene();
    expect(await status(s.owner.client.post(`/api/files/${s.root.id}/members`, { email: s.member.email, role: 'viewer' }))).toBe(201);
    const fileInfo = () => status(s.member.client.get(`/api/files/${s.file.id}/info`));
    expect(await s.read()).toBe(200);
    expect(await fileInfo()).toBe(200);
    expect(await status(s.owner.client.post('/api/files/move', { ids: [s.inner.id], parentId: null }))).toBe(200);
    expect(await s.read()).toBe(404);
    expect(await fileInfo()).toBe(404);
    expect(await status(s.owner.client.post('/api/files/move', { ids: [s.inner.id], parentId: s.root.id }))).toBe(200);
    expect(await s.read()).toBe(200);
    expect(await fileInfo()).toBe(200);
    // The file alone moved out of the inner folder to the owner's root.
    expect(await status(s.owner.client.post('/api/files/move', { ids: [s.file.id], parentId: null }))).toBe(200);
    expect(await fileInfo()).toBe(404);
    expect(await s.read()).toBe(200);
    expect(await status(s.owner.client.post('/api/files/move', { ids: [s.file.id], parentId: s.inner.id }))).toBe(200);
    expect(await fileInfo()).toBe(200);
    expect(await status(s.owner.client.post('/api/files/delete', { ids: [s.inner.id] }))).toBe(200);
    expect(await s.read()).toBe(404);
    expect(await status(s.owner.client.post('/api/files/trash/restore', { ids: [s.inner.id] }))).toBe(200);
    expect(await s.read()).toBe(200);
    expect(await status(s.owner.client.post('/api/files/delete', { ids: [s.inner.id] }))).toBe(200);
    expect((await s.owner.client.post('/api/files/trash/delete', { ids: [s.inner.id] })).status).toBeLessThan(300);
    expect(await s.read()).toBe(404);
    // A folder from outside the share moved into it: reached at the next request.
    const outside = await folder(s.owner.client, 'Outside');
    const outsidePage = () => status(s.member.client.get(`/api/files?parentId=${outside.id}`));
    expect(await outsidePage()).toBe(404);
    expect(await status(s.owner.client.post('/api/files/move', { ids: [outside.id], parentId: s.root.id }))).toBe(200);
    expect(await outsidePage()).toBe(200);
  });

  test('the sharing owner’s account disabled, enabled again, then being deleted', async () => {
    const s = await scene();
    expect(await status(s.owner.client.post(`/api/files/${s.root.id}/members`, { groupId: await groupOf(s.member), role: 'viewer' }))).toBe(
      201,
    );
    expect(await s.read()).toBe(200);
    expect(await status(admin.client.send('PATCH', `/api/user/${s.owner.id}`, { disabled: true }))).toBe(200);
    expect(await s.read()).toBe(404);
    expect(await status(admin.client.send('PATCH', `/api/user/${s.owner.id}`, { disabled: false }))).toBe(200);
    expect(await s.read()).toBe(200);
    expect(await status(admin.client.delete(`/api/user/${s.owner.id}`))).toBe(202);
    expect(await s.read()).toBe(404);
  });

  test('sharing with people turned off by the admin, and on again', async () => {
    const s = await scene();
    expect(await status(s.owner.client.post(`/api/files/${s.root.id}/members`, { email: s.member.email, role: 'editor' }))).toBe(201);
    expect(await s.read()).toBe(200);
    try {
      expect(await status(admin.client.put('/api/user/people-sharing-config', { enabled: false }))).toBe(200);
      expect(await s.read()).toBe(403);
      expect(await s.write()).toBe(403);
    } finally {
      expect(await status(admin.client.put('/api/user/people-sharing-config', { enabled: true }))).toBe(200);
    }
    expect(await s.write()).toBe(200);
  });

  test('a sub-user of the member: its permission taken away and given back', async () => {
    const s = await scene();
    expect(await status(s.owner.client.post(`/api/files/${s.root.id}/members`, { groupId: await groupOf(s.member), role: 'editor' }))).toBe(
      201,
    );
    const sub = await seed.subUser(t, s.member, ['files.upload', 'files.download']);
    const download = () => status(sub.client.get(`/api/files/${s.file.id}/download`));
    const create = () => status(sub.client.post('/api/files/folder', { name: `s${++counter}`, parentId: s.inner.id }));
    expect(await download()).toBe(200);
    expect(await create()).toBe(200);
    expect(await status(s.member.client.put(`/api/user/sub-users/${sub.id}`, { permissions: ['files.download'] }))).toBe(200);
    expect(await create()).toBe(403);
    expect(await download()).toBe(200);
    expect(await status(s.member.client.put(`/api/user/sub-users/${sub.id}`, { permissions: [] }))).toBe(200);
    expect(await download()).toBe(403);
  });

  test('a team folder: a group’s role lowered, the group taken off it, the folder deleted', async () => {
    const member = await seed.owner(t);
    const other = await seed.owner(t);
    const group = await groupOf(member);
    const otherGroup = await groupOf(other);
    const res = await admin.client.post('/api/admin/team-folders', {
      name: `Cache team ${++counter}`,
      quota: null,
      groups: [
        { groupId: group, role: 'editor' },
        { groupId: otherGroup, role: 'editor' },
      ],
    });
    expect(res.status).toBe(201);
    const team = await json(res);
    const read = (c = member.client) => status(c.get(`/api/files?parentId=${team.folderId}`));
    const write = () => status(member.client.post('/api/files/folder', { name: `t${++counter}`, parentId: team.folderId }));
    expect(await write()).toBe(200);
    const groups = (role: string, ...ids: string[]) => ({ groups: ids.map((groupId) => ({ groupId, role })) });
    expect(await status(admin.client.put(`/api/admin/team-folders/${team.id}/groups`, groups('viewer', group, otherGroup)))).toBe(200);
    expect(await write()).toBe(403);
    expect(await read()).toBe(200);
    expect(await status(admin.client.put(`/api/admin/team-folders/${team.id}/groups`, groups('viewer', otherGroup)))).toBe(200);
    expect(await read()).toBe(404);
    expect(await read(other.client)).toBe(200);
    expect(await status(admin.client.delete(`/api/admin/team-folders/${team.id}`))).toBe(202);
    expect(await read(other.client)).toBe(404);
  });
});
