import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { json, type TestClient } from '../../helpers/client.ts';
import { errors, orphanErrors } from '../../helpers/errors.ts';
import * as seed from '../../helpers/seed.ts';
import { ageObject, DAY, folder, HOUR, rowWithoutObject, storeFile, strayObject, strayObjectsFast } from '../../helpers/stored-files.ts';
import { suiteStorage } from '../../helpers/s3.ts';
import { Jobs } from '../../../src/jobs/catalog.ts';

let t: TestServer;
let admin: seed.SeededLogin;
let owner: seed.SeededLogin;

beforeAll(async () => {
  t = await startTestServer({ startWorker: false });
  admin = await seed.admin(t);
  owner = await seed.owner(t);
});
afterAll(() => t.stop());

const ctx = () => t.server.ctx;

/** Starts a scan, checks it is pending, runs the worker, returns the report. */
async function scan(client: TestClient, query = ''): Promise<any> {
  const start = await client.get(`/api/user/orphans${query}`);
  expect(start.status).toBe(202);
  const { jobId, status } = await json(start);
  expect(status).toBe('created');
  const pending = await client.get(`/api/user/orphans?jobId=${jobId}`);
  expect(pending.status).toBe(202);
  expect(await json(pending)).toEqual({ jobId, status: 'created' });
  await t.server.worker.drain();
  const done = await client.get(`/api/user/orphans?jobId=${jobId}`);
  expect(done.status).toBe(200);
  return json(done);
}

async function remove(client: TestClient, body: unknown): Promise<any> {
  const start = await client.post('/api/user/orphans/delete', body);
  expect(start.status).toBe(202);
  const { jobId, status } = await json(start);
  expect(status).toBe('created');
  expect((await client.post('/api/user/orphans/delete', { jobId })).status).toBe(202);
  await t.server.worker.drain();
  const done = await client.post('/api/user/orphans/delete', { jobId });
  expect(done.status).toBe(200);
  return json(done);
}

describe('orphan review is for the admin only', () => {
  test("an owner and a sub-user get 403 with the contract's message on both endpoints, and each attempt is audited", async () => {
    const sub = await seed.subUser(t, owner, ['files.upload', 'files.trash', 'files.delete']);
    for (const login of [owner, sub]) {
      let res = await login.client.get('/api/user/orphans');
      expect(res.status).toBe(403);
      expect(await json(res)).toEqual(errors.orphansAdminOnly);
      res = await login.client.post('/api/user/orphans/delete', { storageKeys: ['x'.repeat(32)] });
      expect(res.status).toBe(403);
      expect(await json(res)).toEqual(errors.orphansAdminOnly);
    }
    ctx().services.audit.flush();
    const denied = ctx().services.audit.list({ action: 'access.denied', user: sub.id });
    expect(denied.map((e) => e.targetId).sort()).toEqual(['GET /api/user/orphans', 'POST /api/user/orphans/delete']);
    expect(denied[0]).toMatchObject({ status: 'denied', email: sub.email, details: { reason: errors.orphansAdminOnly.message } });
    expect(ctx().queue.countByStatus().created).toBe(0);
  });

  test('without a session → 401', async () => {
    expect((await t.client().get('/api/user/orphans')).status).toBe(401);
    expect((await t.client().post('/api/user/orphans/delete', { storageKeys: [] })).status).toBe(401);
  });
});

describe('GET /api/user/orphans', () => {
  test('finds an object with no row and a row with no object, honours the grace window on both sides, and leaves intact files alone', async () => {
    const docs = folder(ctx(), owner.id, 'Docs');
    const sub = folder(ctx(), owner.id, 'Deep', docs);
    const intact = await storeFile(ctx(), owner.id, { createdAt: ctx().clock.now() - 3 * DAY });
    const oldStray = await strayObject(ctx(), { ageMs: 2 * DAY, size: 300 });
    const newStray = await strayObject(ctx(), { ageMs: 10 * 60_000 });
    const lostRow = rowWithoutObject(ctx(), owner.id, {
      name: 'lost.pdf',
      parentId: sub,
      size: 4096,
      createdAt: ctx().clock.now() - 2 * DAY,
    });
    const trashedLost = rowWithoutObject(ctx(), owner.id, {
      name: 'gone.txt',
      createdAt: ctx().clock.now() - 2 * DAY,
      deletedAt: ctx().clock.now() - DAY,
    });
    const newRow = rowWithoutObject(ctx(), owner.id, { createdAt: ctx().clock.now() - 10 * 60_000 });

    const report = await scan(admin.client);
    expect(report.driver).toBe(suiteStorage);
    expect(report.graceMinutes).toBe(1440);
    expect(Date.parse(report.scannedAt)).toBeGreaterThan(0);
    const keys = report.storageOrphans.items.map((o: { key: string }) => o.key);
    expect(keys).toContain(oldStray);
    expect(keys).not.toContain(newStray);
    expect(keys).not.toContain(intact.storageKey);
    const strayItem = report.storageOrphans.items.find((o: { key: string }) => o.key === oldStray);
    expect(strayItem.size).toBe(300);
    expect(Date.parse(strayItem.lastModified)).toBeLessThan(Date.now() - DAY);

    const ids = report.databaseOrphans.items.map((o: { id: string }) => o.id);
    expect(ids).toContain(lostRow.id);
    expect(ids).toContain(trashedLost.id);
    expect(ids).not.toContain(newRow.id);
    expect(ids).not.toContain(intact.id);
    expect(report.databaseOrphans.items.find((o: { id: string }) => o.id === lostRow.id)).toEqual({
      id: lostRow.id,
      name: 'lost.pdf',
      path: '/Docs/Deep/lost.pdf',
      size: 4096,
      mimeType: 'application/octet-stream',
      modified: expect.any(String),
      createdAt: expect.any(String),
      trashed: false,
      ownerEmail: owner.email,
      ownerName: 'Owner',
    });
    expect(report.databaseOrphans.items.find((o: { id: string }) => o.id === trashedLost.id).trashed).toBe(true);
    expect(report.totals.skippedTooRecent).toBeGreaterThanOrEqual(2);
    expect(report.totals.storedObjects).toBeGreaterThanOrEqual(3);
    expect(report.totals.databaseRows).toBeGreaterThanOrEqual(4);
    expect(report.storageOrphans.count).toBe(report.storageOrphans.items.length);
    expect(report.storageOrphans.totalBytes).toBe(report.storageOrphans.items.reduce((n: number, o: { size: number }) => n + o.size, 0));
    expect(report.storageOrphans.truncated).toBe(false);
    expect(report.databaseOrphans.truncated).toBe(false);
    // Nothing was deleted by the scan.
    expect(await ctx().driver.head(oldStray)).not.toBeNull();
    expect(ctx().db.$client.query('SELECT 1 FROM items WHERE id = ?').get(lostRow.id)).not.toBeNull();

    // A narrower window reports what the default one held back once it is older than the window.
    ageObject(ctx(), newStray, 2 * HOUR);
    const narrow = await scan(admin.client, '?graceMinutes=60');
    expect(narrow.graceMinutes).toBe(60);
    expect(narrow.storageOrphans.items.map((o: { key: string }) => o.key)).toContain(newStray);
    expect(narrow.databaseOrphans.items.map((o: { id: string }) => o.id)).not.toContain(newRow.id);

    ctx().services.audit.flush();
    expect(ctx().services.audit.list({ action: 'orphans.scan', user: admin.id }).length).toBeGreaterThanOrEqual(2);
  });

  test.each([
    ['graceMinutes=59'],
    ['graceMinutes=525601'],
    ['graceMinutes=abc'],
    ['graceMinutes=90.5'],
    ['graceMinutes=60&jobId=3b241101-e2bb-4255-8caf-4136c566a962'],
  ])('?%s → 422 naming the field', async (query) => {
    const res = await admin.client.get(`/api/user/orphans?${query}`);
    expect(res.status).toBe(422);
    const body = await json(res);
    expect(body.message).toBe(orphanErrors.validationFailed);
    expect(body.details.map((d: { field: string }) => d.field).join()).toMatch(/graceMinutes|jobId/);
  });

  test('polling: a malformed job id → 400, an unknown one → 404, a job of another kind → 404', async () => {
    let res = await admin.client.get('/api/user/orphans?jobId=nope');
    expect(res.status).toBe(400);
    expect(await json(res)).toEqual(errors.invalidJobId);
    res = await admin.client.get('/api/user/orphans?jobId=3b241101-e2bb-4255-8caf-4136c566a962');
    expect(res.status).toBe(404);
    expect(await json(res)).toEqual(errors.jobNotFound);
    const del = await json(await admin.client.post('/api/user/orphans/delete', { storageKeys: ['not/a/key'] }));
    res = await admin.client.get(`/api/user/orphans?jobId=${del.jobId}`);
    expect(res.status).toBe(404);
    await t.server.worker.drain();
  });

  test('repeated calls and other tabs join the scan queued or running (same grace window): one scan job, not one per call', async () => {
    const scans = () => (ctx().db.$client.query("SELECT COUNT(*) AS n FROM jobs WHERE kind = 'orphans.scan'").get() as { n: number }).n;
    const before = scans();
    const ids = new Set<string>();
    for (let i = 0; i < 5; i++) {
      const res = await admin.client.get('/api/user/orphans');
      expect(res.status).toBe(202);
      const body = await json(res);
      expect(body.status).toBe('created');
      ids.add(body.jobId);
    }
    expect(ids.size).toBe(1);
    expect(scans()).toBe(before + 1);
    // Another window is another scan; one asked for after the scan finished is a new one too.
    const other = await json(await admin.client.get('/api/user/orphans?graceMinutes=60'));
    expect(ids.has(other.jobId)).toBe(false);
    expect(scans()).toBe(before + 2);
    await t.server.worker.drain();
    const after = await json(await admin.client.get('/api/user/orphans'));
    expect(ids.has(after.jobId)).toBe(false);
    expect(scans()).toBe(before + 3);
    await t.server.worker.drain();
  });

  test('a failed scan job is reported as 500', async () => {
    const jobId = ctx().queue.enqueue(Jobs.orphansScan, { graceMinutes: 1 });
    await t.server.worker.drain();
    const res = await admin.client.get(`/api/user/orphans?jobId=${jobId}`);
    expect(res.status).toBe(500);
    expect(await json(res)).toEqual(errors.jobFailed);
  });
});

describe('POST /api/user/orphans/delete', () => {
  test.each([[{}], [{ storageKeys: [], fileIds: [] }], [{ storageKeys: [], graceMinutes: 120 }]])(
    '%p → 400 Select at least one orphan to delete',
    async (body) => {
      const res = await admin.client.post('/api/user/orphans/delete', body);
      expect(res.status).toBe(400);
      expect(await json(res)).toEqual(orphanErrors.nothingSelected);
    },
  );

  test.each([
    ['501 storage keys', { storageKeys: Array.from({ length: 501 }, (_, i) => `k${i}`) }, 'storageKeys'],
    ['501 file ids', { fileIds: Array.from({ length: 501 }, (_, i) => `f${i}`) }, 'fileIds'],
    ['a non-string entry', { storageKeys: ['ok', 42] }, 'storageKeys.1'],
    ['fileIds not an array', { fileIds: 'abc' }, 'fileIds'],
    ['graceMinutes 59', { storageKeys: ['a'], graceMinutes: 59 }, 'graceMinutes'],
    ['graceMinutes 525601', { storageKeys: ['a'], graceMinutes: 525601 }, 'graceMinutes'],
    ['a jobId with a selection', { jobId: 'x', storageKeys: ['a'] }, ''],
  ])('%s → 422 naming the field', async (_label, body, field) => {
    const res = await admin.client.post('/api/user/orphans/delete', body);
    expect(res.status).toBe(422);
    const details = (await json(res)).details as Array<{ field: string }>;
    if (field) expect(details.map((d) => d.field)).toContain(field);
  });

  test("re-verifies every entry: deletes what still qualifies and skips the rest with each of the contract's reasons", async () => {
    const before = ctx().services.quota.usage(owner.id).used;
    const oldStray = await strayObject(ctx(), { ageMs: 2 * DAY });
    const referencedAgain = await strayObject(ctx(), { ageMs: 2 * DAY });
    const freshStray = await strayObject(ctx());
    const neverStored = 'A'.repeat(32);
    const lost = rowWithoutObject(ctx(), owner.id, { size: 1000, createdAt: ctx().clock.now() - 2 * DAY });
    const back = rowWithoutObject(ctx(), owner.id, { createdAt: ctx().clock.now() - 2 * DAY });
    const fresh = rowWithoutObject(ctx(), owner.id);
    const aFolder = folder(ctx(), owner.id, `folder-${Date.now()}`);

    // Between review and deletion: a row now points at one object, and one missing object reappears.
    const row = rowWithoutObject(ctx(), owner.id, { createdAt: ctx().clock.now() - 2 * DAY });
    ctx().db.$client.query('UPDATE items SET storage_key = ? WHERE id = ?').run(referencedAgain, row.id);
    await ctx().driver.put(
      back.storageKey,
      (async function* () {
        yield new Uint8Array([1, 2, 3]);
      })(),
    );

    const result = await remove(admin.client, {
      storageKeys: [oldStray, referencedAgain, freshStray, neverStored, '../../etc/passwd'],
      fileIds: [lost.id, back.id, fresh.id, aFolder, 'no-such-row-id-000000'],
    });
    expect(result.graceMinutes).toBe(1440);
    expect(result.storage).toEqual({
      results: [
        { key: oldStray, deleted: true },
        { key: referencedAgain, deleted: false, reason: 'A file now references this object' },
        { key: freshStray, deleted: false, reason: 'Object was written too recently' },
        { key: neverStored, deleted: false, reason: 'Object no longer exists' },
        { key: '../../etc/passwd', deleted: false, reason: 'Not a valid storage key' },
      ],
      deleted: 1,
      skipped: 4,
    });
    expect(result.database).toEqual({
      results: [
        { id: lost.id, deleted: true },
        { id: back.id, deleted: false, reason: 'Stored object exists again' },
        { id: fresh.id, deleted: false, reason: 'Row was created too recently' },
        { id: aFolder, deleted: false, reason: 'Row does not map to a storage key' },
        { id: 'no-such-row-id-000000', deleted: false, reason: 'Row no longer exists' },
      ],
      deleted: 1,
      skipped: 4,
    });
    expect(await ctx().driver.head(oldStray)).toBeNull();
    expect(await ctx().driver.head(referencedAgain)).not.toBeNull();
    expect(ctx().db.$client.query('SELECT 1 FROM items WHERE id = ?').get(lost.id)).toBeNull();
    // The deleted row's bytes leave the usage counter; the others stay counted.
    const added = back.size + fresh.size + row.size + lost.size;
    expect(ctx().services.quota.usage(owner.id).used).toBe(before + added - lost.size);

    ctx().services.audit.flush();
    const [entry] = ctx().services.audit.list({ action: 'orphans.delete', limit: 1 });
    expect(entry).toMatchObject({
      actor: 'login',
      loginId: admin.id,
      details: { deletedStorageKeys: [oldStray], deletedFileIds: [lost.id], skipped: 8 },
    });
  });

  test('a narrower grace window lets younger entries go', async () => {
    const stray = await strayObject(ctx(), { ageMs: 2 * HOUR });
    const lost = rowWithoutObject(ctx(), owner.id, { createdAt: ctx().clock.now() - 2 * HOUR });
    const result = await remove(admin.client, { storageKeys: [stray], fileIds: [lost.id], graceMinutes: 60 });
    expect(result.graceMinutes).toBe(60);
    expect(result.storage.deleted).toBe(1);
    expect(result.database.deleted).toBe(1);
  });

  test('polling with a malformed or unknown job id → 400 / 404', async () => {
    expect((await admin.client.post('/api/user/orphans/delete', { jobId: 'nope' })).status).toBe(400);
    expect((await admin.client.post('/api/user/orphans/delete', { jobId: '3b241101-e2bb-4255-8caf-4136c566a962' })).status).toBe(404);
  });
});

describe('orphan reports are bounded', () => {
  test('more than 2000 orphans on each side: 2000 listed, the full count given, truncated true', async () => {
    const s = await startTestServer({ startWorker: false });
    try {
      const a = await seed.admin(s);
      const c = s.server.ctx;
      strayObjectsFast(c, 2001, 2 * DAY);
      const created = c.clock.now() - 2 * DAY;
      c.db.$client.transaction(() => {
        for (let i = 0; i < 2001; i++) rowWithoutObject(c, a.id, { name: `ghost-${i}`, size: 10, createdAt: created });
      })();
      const start = await json(await a.client.get('/api/user/orphans'));
      await s.server.worker.drain();
      const report = await json(await a.client.get(`/api/user/orphans?jobId=${start.jobId}`));
      for (const side of [report.storageOrphans, report.databaseOrphans]) {
        expect(side.items.length).toBe(2000);
        expect(side.count).toBe(2001);
        expect(side.truncated).toBe(true);
      }
      expect(report.databaseOrphans.totalBytes).toBe(20010);
      expect(report.storageOrphans.totalBytes).toBe(2001);
    } finally {
      await s.stop();
    }
  });
});

describe('orphan jobs need the worker queue', () => {
  test('queue stopped → 503 on scan and delete', async () => {
    const s = await startTestServer();
    try {
      const a = await seed.admin(s);
      await s.server.worker.stop();
      let res = await a.client.get('/api/user/orphans');
      expect(res.status).toBe(503);
      expect(await json(res)).toEqual(errors.queueUnavailable);
      res = await a.client.post('/api/user/orphans/delete', { storageKeys: ['A'.repeat(32)] });
      expect(res.status).toBe(503);
      expect(await json(res)).toEqual(errors.queueUnavailable);
    } finally {
      await s.stop();
    }
  });
});
