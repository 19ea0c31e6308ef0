import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { randomBytes } from 'node:crypto';
import { ManualClock } from '../../../src/clock.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import * as seed from '../../helpers/seed.ts';
import { createUpload, headUpload, patchUpload, stagedFiles, tusUpload } from '../../helpers/tus.ts';

// 0.001 hours: an upload expires 3.6 s after its last bytes.
const EXPIRY_MS = 3600;

// Time is moved on by hand, so the test waits for no expiry.
const clock = new ManualClock();
let t: TestServer;
let owner: seed.SeededLogin;
beforeAll(async () => {
  t = await startTestServer({ startWorker: false, clock, env: { TUS_EXPIRY_HOURS: '0.001' } });
  await seed.admin(t);
  owner = await seed.owner(t);
  t.server.ctx.db.$client.query('UPDATE users SET storage_limit = ? WHERE id = ?').run(10_000_000, owner.id);
});
afterAll(() => t.stop());

/** Runs the scheduled maintenance jobs that are due, as the server's worker does. */
async function runMaintenance() {
  await t.server.worker.drain();
}

describe('expiry (TUS_EXPIRY_HOURS)', () => {
  test('each PATCH moves the expiry on; past it the upload is 410, then the maintenance job deletes it and frees its reservation', async () => {
    const created = await createUpload(owner.client, 3_000_000, { filename: 'abandoned.bin' });
    const location = created.headers.get('location')!;
    const firstExpiry = Date.parse(created.headers.get('upload-expires')!);
    expect(firstExpiry - Date.now()).toBeLessThanOrEqual(EXPIRY_MS + 1000);
    clock.advance(1200);
    const patched = await patchUpload(owner.client, location, 0, randomBytes(100_000));
    expect(patched.status).toBe(204);
    expect(Date.parse(patched.headers.get('upload-expires')!)).toBeGreaterThan(firstExpiry);
    const key = t.server.ctx.repos.tusUploads.get(location.split('/').at(-1)!)!.storageKey;
    expect(stagedFiles(t.dataDir)).toContain(key);
    expect(t.server.ctx.services.quota.usage(owner.id).free).toBe(7_000_000);

    // A finished upload's record outlives nothing but its expiry; its file stays.
    const finished = await tusUpload(t.url, owner.client, randomBytes(1000), { metadata: { filename: 'kept.bin' } }).done;

    clock.advance(EXPIRY_MS + 300);
    const expired = await headUpload(owner.client, location);
    expect(expired.status).toBe(410);
    expect((await patchUpload(owner.client, location, 100_000, randomBytes(10))).status).toBe(410);
    const doctor = await t.server.ctx.services.doctor.check();
    expect(doctor.uploads.expired.map((e) => e.name)).toEqual(['abandoned.bin']);

    await runMaintenance();
    expect((await headUpload(owner.client, location)).status).toBe(404);
    expect(stagedFiles(t.dataDir)).not.toContain(key);
    expect(t.server.ctx.services.quota.usage(owner.id).free).toBe(10_000_000 - 1000);
    expect((await owner.client.get(new URL(finished.url).pathname)).status).toBe(404);
    expect((await owner.client.get(`/api/files/${finished.itemId}/info`)).status).toBe(200);
    expect((await t.server.ctx.services.doctor.check()).uploads).toMatchObject({ unfinished: 0, expired: [], strayStaged: [] });
  });

  test('a PATCH not recorded on its own still moves the expiry on: the sweep keeps the upload past its recorded expiry', async () => {
    const S = 64 * 1024;
    const data = randomBytes(3 * S);
    const location = (await createUpload(owner.client, data.length, { filename: 'moving.bin' })).headers.get('location')!;
    const id = location.split('/').at(-1)!;
    expect((await patchUpload(owner.client, location, 0, data.subarray(0, S))).status).toBe(204);
    const recorded = t.server.ctx.repos.tusUploads.get(id)!.expiresAt;
    clock.advance(2000);
    const second = await patchUpload(owner.client, location, S, data.subarray(S, 2 * S));
    expect(second.status).toBe(204);
    // It ended at a segment boundary with no sync finished: acknowledged, not recorded.
    expect(t.server.ctx.repos.tusUploads.get(id)!).toMatchObject({ offset: S, expiresAt: recorded });
    expect(Date.parse(second.headers.get('upload-expires')!)).toBeGreaterThan(recorded);
    clock.advance(2000);
    expect((await t.server.ctx.services.tusUploads.sweep()).expired).toBe(0);
    const head = await headUpload(owner.client, location);
    expect([head.status, head.headers.get('upload-offset')]).toEqual([200, String(2 * S)]);
    const done = await patchUpload(owner.client, location, 2 * S, data.subarray(2 * S));
    expect(done.status).toBe(204);
    expect(done.headers.get('upload-item-id')).toBeTruthy();
  });
  test('the clock set a day ahead while an upload runs expires nothing: the upload goes on, and expires in real time after its last bytes', async () => {
    const DAY = 24 * 3_600_000;
    const created = await createUpload(owner.client, 2000, { filename: 'jumped.bin' });
    const location = created.headers.get('location')!;
    expect((await patchUpload(owner.client, location, 0, randomBytes(1000))).status).toBe(204);
    clock.jump(DAY);
    expect((await t.server.ctx.services.tusUploads.sweep()).expired).toBe(0);
    const head = await headUpload(owner.client, location);
    expect(head.status).toBe(200);
    expect(head.headers.get('upload-offset')).toBe('1000');
    expect((await patchUpload(owner.client, location, 1000, randomBytes(500))).status).toBe(204);

    clock.jump(-DAY);
    clock.advance(EXPIRY_MS + 1000);
    expect((await t.server.ctx.services.tusUploads.sweep()).expired).toBe(1);
    expect((await headUpload(owner.client, location)).status).toBe(404);
  });
  test('an upload kept to finish once there is room (the limit lowered as it completed) outlives the sweeps within its expiry, finishes at a HEAD, and goes after it', async () => {
    const limit = (bytes: number) => t.server.ctx.db.$client.query('UPDATE users SET storage_limit = ? WHERE id = ?').run(bytes, owner.id);
    const sweep = () => t.server.ctx.services.tusUploads.sweep();
    const data = randomBytes(50_000);
    const send = async (name: string) => {
      const location = (await createUpload(owner.client, data.length, { filename: name })).headers.get('location')!;
      limit(1000);
      expect((await patchUpload(owner.client, location, 0, data)).status).toBe(413);
      return location;
    };
    try {
      const kept = await send('kept-for-room.bin');
      clock.advance(EXPIRY_MS - 1000);
      await sweep();
      await sweep();
      limit(10_000_000);
      const head = await headUpload(owner.client, kept);
      expect([head.status, head.headers.get('upload-offset')]).toEqual([200, String(data.length)]);
      expect(head.headers.get('upload-item-id')).toBeTruthy();

      const abandoned = await send('never-room.bin');
      const reserved = t.server.ctx.repos.tusUploads.reserved(owner.id);
      expect(reserved).toBe(data.length);
      clock.advance(EXPIRY_MS + 1000);
      expect((await sweep()).expired).toBe(1);
      expect((await headUpload(owner.client, abandoned)).status).toBe(404);
      expect(t.server.ctx.repos.tusUploads.reserved(owner.id)).toBe(0);
    } finally {
      limit(10_000_000);
    }
  });
});
