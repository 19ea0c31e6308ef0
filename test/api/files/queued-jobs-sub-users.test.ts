import { describe, expect, test } from 'bun:test';
import type { Permission } from '../../../src/contract/permissions.ts';
import { json } from '../../helpers/client.ts';
import { folder, listAll, seedRows, upload } from '../../helpers/files.ts';
import { newGroup } from '../../helpers/groups.ts';
import * as seed from '../../helpers/seed.ts';
import type { TestServer } from '../../helpers/server.ts';
import { serverWithAdmin } from '../../helpers/suite.ts';

let t: TestServer;
let admin: seed.SeededLogin;

// The worker runs only when a test drains it: a job waits in the queue as it may behind others.
serverWithAdmin((s) => ({ t, admin } = s), { startWorker: false });

/** Runs the queued jobs; the job's status as the account's owner polls it. */
async function ran(client: seed.SeededLogin['client'], jobId: string) {
  await t.server.worker.drain();
  return (await client.get(`/api/files/jobs/${jobId}`)).status;
}

const jobOf = async (res: Response) => {
  expect(res.status).toBe(202);
  return (await json(res)).jobId as string;
};

const names = async (client: seed.SeededLogin['client'], path: string) => (await listAll(client, path)).map((i) => i.name).sort();

describe('a queued job a sub-user started runs only while the sub-user still holds the permission it needed', () => {
  test('empty trash, delete for good, restore, trash and copy: the permission taken away or the sub-user deleted before the job runs, nothing happens', async () => {
    const o = await seed.owner(t);
    const all: Permission[] = ['files.upload', 'files.delete', 'files.trash'];
    const sub = await seed.subUser(t, o, all);
    const setPermissions = async (id: string, permissions: Permission[]) =>
      expect((await o.client.send('PUT', `/api/user/sub-users/${id}`, { permissions })).status).toBe(200);
    const gone = await upload(o.client, 'gone.txt', 'trashed bytes');
    expect((await o.client.post('/api/files/delete', { ids: [gone.id] })).status).toBe(200);

    // Emptying the trash and deleting for good are always queued.
    let job = await jobOf(await sub.client.post('/api/files/trash/empty', {}));
    await setPermissions(sub.id, ['files.upload', 'files.delete']);
    expect(await ran(o.client, job)).toBe(500);
    await setPermissions(sub.id, all);
    job = await jobOf(await sub.client.post('/api/files/trash/delete', { ids: [gone.id] }));
    await setPermissions(sub.id, ['files.upload', 'files.delete']);
    expect(await ran(o.client, job)).toBe(500);
    expect(await names(o.client, '/api/files/trash')).toEqual(['gone.txt']);

    // A trash and a restore of over 1,000 items are queued.
    const big = await folder(o.client, 'Big');
    seedRows(t, o.id, big.id, 1001);
    await setPermissions(sub.id, all);
    job = await jobOf(await sub.client.post('/api/files/delete', { ids: [big.id] }));
    await setPermissions(sub.id, ['files.upload', 'files.trash']);
    expect(await ran(o.client, job)).toBe(500);
    expect(await names(o.client, '/api/files')).toEqual(['Big']);
    expect((await o.client.post('/api/files/delete', { ids: [big.id] })).status).toBe(202);
    await t.server.worker.drain();
    job = await jobOf(await sub.client.post('/api/files/trash/restore', { ids: [big.id] }));
    await setPermissions(sub.id, ['files.upload', 'files.delete']);
    expect(await ran(o.client, job)).toBe(500);
    expect(await names(o.client, '/api/files/trash')).toEqual(['Big', 'gone.txt']);

    // A copy of over 1,000 items is queued; the sub-user deleted before it runs.
    const small = await folder(o.client, 'Small');
    seedRows(t, o.id, small.id, 1001);
    await setPermissions(sub.id, all);
    job = await jobOf(await sub.client.post('/api/files/copy', { ids: [small.id] }));
    expect((await o.client.delete(`/api/user/sub-users/${sub.id}`)).status).toBe(200);
    expect(await ran(o.client, job)).toBe(500);
    expect(await names(o.client, '/api/files')).toEqual(['Small']);

    // Still holding it when the job runs: the trash is emptied.
    const other = await seed.subUser(t, o, all);
    job = await jobOf(await other.client.post('/api/files/trash/empty', {}));
    expect(await ran(o.client, job)).toBe(200);
    expect(await listAll(o.client, '/api/files/trash')).toEqual([]);
  });

  test("an account disabled before its own queued jobs run (the owner's and its sub-user's): they do nothing and fail", async () => {
    const o = await seed.owner(t);
    const sub = await seed.subUser(t, o, ['files.upload', 'files.trash']);
    const gone = await upload(o.client, 'gone.txt', 'trashed bytes');
    expect((await o.client.post('/api/files/delete', { ids: [gone.id] })).status).toBe(200);
    const small = await folder(o.client, 'Small');
    seedRows(t, o.id, small.id, 1001);
    const emptying = await jobOf(await o.client.post('/api/files/trash/empty', {}));
    const copying = await jobOf(await sub.client.post('/api/files/copy', { ids: [small.id] }));
    const setDisabled = async (disabled: boolean) =>
      expect((await admin.client.send('PATCH', `/api/user/${o.id}`, { disabled })).status).toBe(200);
    await setDisabled(true);
    await t.server.worker.drain();
    await setDisabled(false);
    const again = await seed.login(t, o.email);
    expect((await again.get(`/api/files/jobs/${emptying}`)).status).toBe(500);
    expect((await again.get(`/api/files/jobs/${copying}`)).status).toBe(500);
    expect(await names(again, '/api/files/trash')).toEqual(['gone.txt']);
    expect(await names(again, '/api/files')).toEqual(['Small']);
  });

  test("a team folder's trash deleted for good by its administrator: no longer its administrator when the job runs, nothing is deleted", async () => {
    const lead = await seed.owner(t);
    const other = await seed.owner(t);
    const editors = await newGroup(admin, 'Editors');
    for (const a of [lead, other]) {
      expect((await admin.client.post(`/api/admin/groups/${editors}/members`, { email: a.email, admin: true })).status).toBe(201);
    }
    const res = await admin.client.post('/api/admin/team-folders', {
      name: 'Queued team',
      quota: null,
      groups: [{ groupId: editors, role: 'editor' }],
    });
    expect(res.status).toBe(201);
    const team = await json(res);
    const file = await upload(lead.client, 'draft.txt', 'draft bytes', { parentId: team.folderId });
    expect((await lead.client.post('/api/files/delete', { ids: [file.id] })).status).toBe(200);
    const trash = `/api/team-folders/${team.id}/trash`;
    const job = await jobOf(await lead.client.post(`${trash}/delete`, { ids: [file.id] }));
    expect((await admin.client.delete(`/api/admin/groups/${editors}/members/${lead.id}`)).status).toBe(200);
    expect(await ran(lead.client, job)).toBe(500);
    expect((await json(await other.client.get(trash))).map((i: { name: string }) => i.name)).toEqual(['draft.txt']);
  });
});
