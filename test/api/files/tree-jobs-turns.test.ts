import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { json, type TestClient } from '../../helpers/client.ts';
import { folder, rowCount, seedRows, uploadRaw } from '../../helpers/files.ts';
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
  test('restore and permanent delete of a 5,000-item folder (its trash is one tree at a time: see below)', async () => {
    const o = await seed.owner(t);
    const root = await bigTree(o, 'big');
    const trashed = () => count('account_id = ? AND deleted_at IS NOT NULL', o.id);

    expect((await o.client.post('/api/files/delete', { ids: [root] })).status).toBe(202);
    while (trashed() < ITEMS) await Bun.sleep(20);

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

  test('the Nextcloud trashbin emptied of a 5,000-item folder WebDAV deleted', async () => {
    const o = await seed.owner(t);
    await bigTree(o, 'big');
    const dav = await davLogin(t, o);
    const trashed = () => count('account_id = ? AND deleted_at IS NOT NULL', o.id);
    expect((await dav.request('DELETE', 'big/')).status).toBe(204);
    expect(trashed()).toBe(ITEMS);

    const rows = () => count('account_id = ?', o.id);
    let answered = false;
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

  test('a file put into a folder of a tree while the tree goes to the trash is never left live under a trashed folder', async () => {
    const o = await seed.owner(t);
    const root = await folder(o.client, 'big');
    const sub = await folder(o.client, 'sub', root.id);
    // Twice the others' tree: were it trashed in turns, uploads would land during it even on a loaded machine.
    const items = 2 * ITEMS;
    seedRows(t, o.id, sub.id, items - 2, (i) => ({ name: `f-${i}`, size: 10 }));
    const trashed = () => count('account_id = ? AND deleted_at IS NOT NULL', o.id);
    const dav = await davLogin(t, o);
    let answered = false;
    const deleting = dav.request('DELETE', 'big/').then((res) => {
      answered = true;
      return res;
    });
    // While the deletion runs, new files are sent to the folder being trashed and to the tree's top folder.
    let made = 0;
    while (!answered) {
      if (trashed() > 0) {
        for (const parentId of [sub.id, root.id]) {
          const res = await uploadRaw(o.client, `late-${made}.txt`, 'late', { parentId });
          if (res.status === 200) made++;
          else expect(res.status).toBe(404);
          await res.arrayBuffer();
        }
      } else await Bun.sleep(1);
    }
    expect((await deleting).status).toBe(204);
    const outOfReach = count(
      'account_id = ? AND deleted_at IS NULL AND parent_id IN (SELECT id FROM items WHERE deleted_at IS NOT NULL)',
      o.id,
    );
    expect(outOfReach).toBe(0);
    expect(count('account_id = ? AND deleted_at IS NULL', o.id)).toBe(0);
    // Restored whole, the late files come back with the tree.
    expect((await o.client.post('/api/files/trash/restore', { ids: [root.id] })).status).toBe(202);
    while (count('account_id = ? AND deleted_at IS NOT NULL', o.id) > 0) await Bun.sleep(20);
    expect(count('account_id = ? AND deleted_at IS NULL', o.id)).toBe(items + made);
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
