import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { ManualClock } from '../../../src/clock.ts';
import { DROP_UPLOADS_PER_ADDRESS, DROP_UPLOADS_PER_LINK } from '../../../src/services/resumable-uploads/tus-uploads.ts';
import { json } from '../../helpers/client.ts';
import { folder } from '../../helpers/files.ts';
import * as seed from '../../helpers/seed.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { createUpload, headUpload, patchUpload, TUS } from '../../helpers/tus.ts';

const MINUTE = 60_000;
// Time is moved on by hand, so the test waits for no expiry.
const clock = new ManualClock();
let t: TestServer;
let owner: seed.SeededLogin;
let addresses = 0;

beforeAll(async () => {
  t = await startTestServer({ clock, startWorker: false });
  const admin = await seed.admin(t);
  // Loopback is a known proxy, so each visitor can come from an address of its own (X-Forwarded-For).
  expect((await admin.client.put('/api/user/known-proxies-config', { knownProxies: ['127.0.0.1'] })).status).toBe(200);
  await t.restart({ samePort: true });
  owner = await seed.owner(t);
});
afterAll(() => t.stop());

/** A client address no other test has used. */
const newAddress = () => `10.30.${++addresses}.1`;

async function dropLink(): Promise<string> {
  const drop = await folder(owner.client, `Drop ${addresses}-${Math.random().toString(36).slice(2)}`);
  const res = await owner.client.post('/api/files/share', { ids: [drop.id], shared: true, mode: 'upload' });
  expect(res.status).toBe(200);
  return /\/s\/([A-Za-z0-9_-]+)/.exec((await json(res)).links[drop.id])![1]!;
}

/** POST /s/<token>/tus from `address`, sending no bytes. */
function visitorCreate(token: string, address: string, length = 1_000_000): Promise<Response> {
  return fetch(`${t.url}/s/${token}/tus`, {
    method: 'POST',
    headers: {
      ...TUS,
      'x-forwarded-for': address,
      'Upload-Length': String(length),
      'Upload-Metadata': `filename ${Buffer.from('big.bin').toString('base64')}`,
    },
  });
}

const promised = () => t.server.ctx.repos.tusUploads.promised(clock.now());

describe('reservations that receive nothing', () => {
  test('an address holds at most a few unfinished uploads through share links, any link; a link at most a few more', async () => {
    const [first, second] = [await dropLink(), await dropLink()];
    const address = newAddress();
    const held: string[] = [];
    for (let i = 0; i < DROP_UPLOADS_PER_ADDRESS; i++) {
      const res = await visitorCreate(i % 2 ? second : first, address);
      expect(res.status).toBe(201);
      held.push(res.headers.get('location')!);
    }
    for (const token of [first, second]) {
      const refused = await visitorCreate(token, address);
      expect(refused.status).toBe(429);
      expect((await json(refused)).message).toBe(
        'You have too many unfinished uploads through share links; finish or cancel one, then try again',
      );
    }
    // Cancelling one gives its place back.
    expect((await fetch(t.url + held.pop()!, { method: 'DELETE', headers: TUS })).status).toBe(204);
    expect((await visitorCreate(first, address)).status).toBe(201);

    // Many addresses together fill one link, and no more; another link still takes uploads.
    const busy = await dropLink();
    for (let i = 0; i < DROP_UPLOADS_PER_LINK; i++) expect((await visitorCreate(busy, newAddress())).status).toBe(201);
    const full = await visitorCreate(busy, newAddress());
    expect(full.status).toBe(429);
    expect((await json(full)).message).toBe('This link has too many unfinished uploads at the moment; try again once some have finished');
    expect((await visitorCreate(await dropLink(), newAddress())).status).toBe(201);
    // The owner's own resumable uploads are not held back by the visitors'.
    expect((await createUpload(owner.client, 1000, { filename: 'mine.bin' })).status).toBe(201);
  });

  test('an IPv6 visitor is its /64, as for the rate limits: new addresses of its block share its few unfinished uploads; the next block has its own', async () => {
    const [first, second] = [await dropLink(), await dropLink()];
    const block = (++addresses).toString(16);
    for (let i = 1; i <= DROP_UPLOADS_PER_ADDRESS; i++)
      expect((await visitorCreate(i % 2 ? second : first, `2001:db8:${block}:1:${i}::1`)).status).toBe(201);
    expect((await visitorCreate(first, `2001:db8:${block}:1:ffff::1`)).status).toBe(429);
    expect((await visitorCreate(second, `2001:db8:${block}:2::1`)).status).toBe(201);
  });

  test('an upload that received no byte expires 15 minutes after its creation, its reservation with it; one that did keeps TUS_EXPIRY_HOURS', async () => {
    // The uploads of the test before have expired by now.
    clock.advance(20 * MINUTE);
    const token = await dropLink();
    const idle = await visitorCreate(token, newAddress(), 5_000_000);
    expect(idle.status).toBe(201);
    const idleAt = idle.headers.get('location')!;
    expect(Date.parse(idle.headers.get('upload-expires')!) - clock.now()).toBeLessThanOrEqual(15 * MINUTE);
    const startedAt = (await visitorCreate(token, newAddress(), 5_000_000)).headers.get('location')!;
    const patched = await patchUpload(t.client(), startedAt, 0, new Uint8Array(10));
    expect(patched.status).toBe(204);
    expect(Date.parse(patched.headers.get('upload-expires')!) - clock.now()).toBeGreaterThan(23 * 60 * MINUTE);
    expect(promised()).toBe(2 * 5_000_000 - 10);

    clock.advance(15 * MINUTE + 1000);
    expect((await headUpload(t.client(), idleAt)).status).toBe(410);
    expect((await headUpload(t.client(), startedAt)).status).toBe(200);
    // Its bytes are no longer promised on the disk, and the sweep deletes it with its reservation.
    expect(promised()).toBe(5_000_000 - 10);
    await t.server.ctx.services.tusUploads.sweep();
    expect((await headUpload(t.client(), idleAt)).status).toBe(404);
    expect(t.server.ctx.repos.tusUploads.reserved(owner.id)).toBe(5_000_000);
  });
});
