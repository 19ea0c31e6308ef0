import { describe, expect, test } from 'bun:test';
import { json } from '../../helpers/client.ts';
import { folder, listAll, seedRows, upload } from '../../helpers/files.ts';
import * as seed from '../../helpers/seed.ts';
import type { TestServer } from '../../helpers/server.ts';
import { serverWithAdmin } from '../../helpers/suite.ts';
import { holdCalls } from '../../helpers/hold-calls.ts';

let t: TestServer;

// The worker runs only when a test drains it: a job waits in the queue as it may behind others.
serverWithAdmin((s) => ({ t } = s), { startWorker: false });

/** Runs the queued jobs; the job's poll as its starter sees it. */
async function ran(client: seed.SeededLogin['client'], jobId: string) {
  await t.server.worker.drain();
  const res = await client.get(`/api/files/jobs/${jobId}`);
  return { status: res.status, body: await json(res) };
}

const jobOf = async (res: Response) => {
  expect(res.status).toBe(202);
  return (await json(res)).jobId as string;
};

describe('a queued job through a share runs only while the access that started it stands', () => {
  test('a member removed, made a viewer, or the item moved out of the share before the job runs: nothing is copied, the job fails', async () => {
    const o = await seed.owner(t);
    const member = await seed.owner(t);
    const shared = await folder(o.client, 'Shared');
    const inside = await upload(o.client, 'inside.txt', 'shared bytes', { parentId: shared.id });
    const share = (role: 'viewer' | 'editor') => o.client.post(`/api/files/${shared.id}/members`, { email: member.email, role });
    expect((await share('editor')).status).toBe(201);
    const mine = await upload(member.client, 'mine.txt', 'member bytes');

    // Out of the share into the member's own tree; the member removed before it runs.
    let job = await jobOf(await member.client.post('/api/files/copy', { ids: [inside.id] }));
    expect((await o.client.delete(`/api/files/${shared.id}/members/${member.id}`)).status).toBe(200);
    expect((await ran(member.client, job)).status).toBe(500);
    expect((await listAll(member.client, '/api/files')).map((i) => i.name)).toEqual(['mine.txt']);

    // Out of the share again; the owner moves the file out of the shared folder before it runs.
    expect((await share('editor')).status).toBe(201);
    job = await jobOf(await member.client.post('/api/files/copy', { ids: [inside.id] }));
    expect((await o.client.post('/api/files/move', { ids: [inside.id] })).status).toBe(200);
    expect((await ran(member.client, job)).status).toBe(500);
    expect((await listAll(member.client, '/api/files')).map((i) => i.name)).toEqual(['mine.txt']);

    // Into the share; the member made a viewer before it runs.
    job = await jobOf(await member.client.post('/api/files/copy', { ids: [mine.id], parentId: shared.id }));
    expect((await o.client.send('PATCH', `/api/files/${shared.id}/members/${member.id}`, { role: 'viewer' })).status).toBe(200);
    expect((await ran(member.client, job)).status).toBe(500);
    expect(await listAll(o.client, `/api/files?parentId=${shared.id}`)).toEqual([]);

    // Still an editor when it runs: the copy is made.
    expect((await o.client.send('PATCH', `/api/files/${shared.id}/members/${member.id}`, { role: 'editor' })).status).toBe(200);
    job = await jobOf(await member.client.post('/api/files/copy', { ids: [mine.id], parentId: shared.id }));
    expect(await ran(member.client, job)).toMatchObject({ status: 200, body: { status: 'completed', result: { count: 1 } } });
    expect((await listAll(o.client, `/api/files?parentId=${shared.id}`)).map((i) => i.name)).toEqual(['mine.txt']);
  });

  test("a member's copy out of the share: a file the owner moves out of the shared folder while the copy runs is not copied, the job fails", async () => {
    const o = await seed.owner(t);
    const member = await seed.owner(t);
    const shared = await folder(o.client, 'Shared');
    const inside = await upload(o.client, 'inside.txt', 'shared bytes', { parentId: shared.id });
    expect((await o.client.post(`/api/files/${shared.id}/members`, { email: member.email, role: 'viewer' })).status).toBe(201);
    const job = await jobOf(await member.client.post('/api/files/copy', { ids: [shared.id] }));
    // The job copies the file's bytes, then makes its row: the owner moves it out of the share in between.
    const { held, release } = holdCalls(t.server.ctx.driver, 'copy');
    try {
      const running = ran(member.client, job);
      await held;
      expect((await o.client.post('/api/files/move', { ids: [inside.id] })).status).toBe(200);
      release();
      expect((await running).status).toBe(500);
    } finally {
      release();
    }
    const names = t.server.ctx.db.$client
      .query<{ name: string }, [string]>('SELECT name FROM items WHERE account_id = ? AND deleted_at IS NULL')
      .all(member.id)
      .map((r) => r.name);
    expect(names).not.toContain('inside.txt');
  });

  test('a trash of over 1,000 items an editor started: removed or made a viewer before it runs, nothing goes to the trash', async () => {
    const o = await seed.owner(t);
    const member = await seed.owner(t);
    const shared = await folder(o.client, 'Shared');
    const big = await folder(o.client, 'Big', shared.id);
    seedRows(t, o.id, big.id, 1001);
    expect((await o.client.post(`/api/files/${shared.id}/members`, { email: member.email, role: 'editor' })).status).toBe(201);
    let job = await jobOf(await member.client.post('/api/files/delete', { ids: [big.id] }));
    expect((await o.client.send('PATCH', `/api/files/${shared.id}/members/${member.id}`, { role: 'viewer' })).status).toBe(200);
    expect((await ran(member.client, job)).status).toBe(500);
    expect((await o.client.send('PATCH', `/api/files/${shared.id}/members/${member.id}`, { role: 'editor' })).status).toBe(200);
    job = await jobOf(await member.client.post('/api/files/delete', { ids: [big.id] }));
    expect((await o.client.delete(`/api/files/${shared.id}/members/${member.id}`)).status).toBe(200);
    expect((await ran(o.client, job)).status).toBe(500);
    expect((await listAll(o.client, `/api/files?parentId=${shared.id}`)).map((i) => i.name)).toEqual(['Big']);
    expect(await listAll(o.client, '/api/files/trash')).toEqual([]);
  });
});
