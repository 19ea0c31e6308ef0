import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { json, type TestClient } from '../../helpers/client.ts';
import { folder, rowCount, seedRows } from '../../helpers/files.ts';
import * as seed from '../../helpers/seed.ts';
import { davLogin } from '../../helpers/dav.ts';

// A tree job of 5,000 items runs in 10 batches: another account's listing is answered between two of them.
const ITEMS = 5000;

let t: TestServer;
let admin: seed.SeededLogin;
let other: seed.SeededLogin;

beforeAll(async () => {
  t = await startTestServer();
  admin = await seed.admin(t);
  other = await seed.owner(t);
  await folder(other.client, 'elsewhere');
});
afterAll(() => t.stop());

async function bigTree(o: seed.SeededLogin, name: string): Promise<string> {
  const dir = await folder(o.client, name);
  seedRows(t, o.id, dir.id, ITEMS - 1, (i) => ({ name: `${name}-${i}`, size: 10 }));
  return dir.id;
}

/**
 * Lists another account's files until `finished`; returns how many of those listings were answered while the job had done
 * part of its work (`partial`).
 */
async function listingsUntil(finished: () => Promise<boolean>, partial: () => boolean): Promise<number> {
  let midway = 0;
  for (;;) {
    const listing = await other.client.get('/api/files');
    expect(listing.status).toBe(200);
    await listing.arrayBuffer();
    if (partial()) midway++;
    if (await finished()) return midway;
  }
}

/** Starts a file job with `start` and lists meanwhile (listingsUntil); the job's result too. */
async function listingsMidway(
  client: TestClient,
  start: () => Promise<Response>,
  partial: () => boolean,
): Promise<{ midway: number; result: any }> {
  const res = await start();
  expect(res.status).toBe(202);
  const { jobId } = await json(res);
  let result: any;
  const midway = await listingsUntil(async () => {
    const job = await client.get(`/api/files/jobs/${jobId}`);
    if (job.status === 200) result = (await json(job)).result;
    else expect(job.status).toBe(202);
    return result !== undefined;
  }, partial);
  return { midway, result };
}

const count = (where: string, ...params: string[]) => rowCount(t, where, ...params);

describe('tree operations answer other requests between their batches', () => {
  test('trash, restore and permanent delete of a 5,000-item folder', async () => {
    const o = await seed.owner(t);
    const root = await bigTree(o, 'big');
    const trashed = () => count('account_id = ? AND deleted_at IS NOT NULL', o.id);

    const trash = await listingsMidway(
      o.client,
      () => o.client.post('/api/files/delete', { ids: [root] }),
      () => trashed() > 0 && trashed() < ITEMS,
    );
    expect(trash.result.count).toBe(ITEMS);
    expect(trashed()).toBe(ITEMS);
    expect(trash.midway).toBeGreaterThan(0);

    const restore = await listingsMidway(
      o.client,
      () => o.client.post('/api/files/trash/restore', { ids: [root] }),
      () => trashed() > 0 && trashed() < ITEMS,
    );
    expect(restore.result.count).toBe(ITEMS);
    expect(trashed()).toBe(0);
    expect(restore.midway).toBeGreaterThan(0);

    expect((await o.client.post('/api/files/delete', { ids: [root] })).status).toBe(202);
    while (trashed() < ITEMS) await Bun.sleep(20);
    const rows = () => count('account_id = ?', o.id);
    const purge = await listingsMidway(
      o.client,
      () => o.client.post('/api/files/trash/empty'),
      () => rows() > 0 && rows() < ITEMS,
    );
    expect(purge.result.count).toBe(ITEMS);
    expect(rows()).toBe(0);
    expect(purge.midway).toBeGreaterThan(0);
  });

  test('emptying a trash of 3,000 files trashed one by one', async () => {
    const o = await seed.owner(t);
    const ids = seedRows(t, o.id, null, 3000, (i) => ({ name: `loose-${i}`, size: 10 }));
    for (let i = 0; i < ids.length; i += 500)
      expect((await o.client.post('/api/files/delete', { ids: ids.slice(i, i + 500) })).status).toBe(200);
    const rows = () => count('account_id = ?', o.id);
    const purge = await listingsMidway(
      o.client,
      () => o.client.post('/api/files/trash/empty'),
      () => rows() > 0 && rows() < ids.length,
    );
    expect(purge.result.count).toBe(ids.length);
    expect(rows()).toBe(0);
    expect(purge.midway).toBeGreaterThan(0);
  });

  test('WebDAV DELETE of a 5,000-item folder, then the Nextcloud trashbin emptied', async () => {
    const o = await seed.owner(t);
    await bigTree(o, 'big');
    const dav = await davLogin(t, o);
    const trashed = () => count('account_id = ? AND deleted_at IS NOT NULL', o.id);
    let answered = false;
    const deleting = dav.request('DELETE', 'big/').then((res) => {
      answered = true;
      return res;
    });
    const midway = await listingsUntil(
      async () => answered,
      () => trashed() > 0 && trashed() < ITEMS,
    );
    expect((await deleting).status).toBe(204);
    expect(trashed()).toBe(ITEMS);
    expect(midway).toBeGreaterThan(0);

    const rows = () => count('account_id = ?', o.id);
    answered = false;
    const emptying = fetch(`${t.url}/remote.php/dav/trashbin/${o.id}/trash/`, {
      method: 'DELETE',
      headers: { authorization: dav.authorization },
    }).then((res) => {
      answered = true;
      return res;
    });
    const midwayEmpty = await listingsUntil(
      async () => answered,
      () => rows() > 0 && rows() < ITEMS,
    );
    expect((await emptying).status).toBe(204);
    expect(rows()).toBe(0);
    expect(midwayEmpty).toBeGreaterThan(0);
  });

  test("an account's deletion", async () => {
    const o = await seed.owner(t);
    await bigTree(o, 'big');
    const rows = () => count('account_id = ?', o.id);
    const changed = () => rows() < ITEMS || count('account_id = ? AND deleted_at IS NOT NULL', o.id) > 0;
    expect((await admin.client.delete(`/api/user/${o.id}`)).status).toBe(202);
    const midway = await listingsUntil(
      async () => t.server.ctx.repos.users.byId(o.id) === null,
      () => changed() && rows() > 0,
    );
    expect(rows()).toBe(0);
    expect(midway).toBeGreaterThan(0);
  });
});
