import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import { json } from '../../helpers/client.ts';
import { admin, type SeededLogin } from '../../helpers/seed.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { mountSmallDisk, type SmallDisk } from '../../helpers/small-disk.ts';
import { skipWithout } from '../../helpers/prerequisites.ts';
import { createUpload, patchUpload, TUS } from '../../helpers/tus.ts';

const MiB = 1024 * 1024;
const disk: SmallDisk | string = mountSmallDisk(64);
const noDisk = skipWithout(typeof disk === 'string' ? disk : null, 'the resumable-upload disk reservation tests');

describe.skipIf(noDisk)('resumable uploads reserve room on the disk, without a quota: 64 MiB tmpfs, 8 MiB reserve', () => {
  let t: TestServer;
  let a: SeededLogin;
  const free = () => {
    const s = fs.statfsSync((disk as SmallDisk).dir);
    return s.bavail * s.bsize;
  };
  beforeAll(async () => {
    t = await startTestServer({ dataDir: path.join((disk as SmallDisk).dir, 'data'), env: { COFFER_MIN_FREE_BYTES: '8M' } });
    a = await admin(t);
  });
  afterAll(async () => {
    await t?.server.stop();
    (disk as SmallDisk).unmount();
  });

  test('a creation that cannot fit beside the bytes other uploads are still to send gets 507; bytes sent count once, and an ended upload frees its room', async () => {
    const first = await createUpload(a.client, 30 * MiB, { filename: 'first.bin' });
    expect(first.status).toBe(201);
    const location = first.headers.get('location')!;

    // 30 MiB fit on their own, not beside the first upload's 30 MiB still to come.
    const second = await createUpload(a.client, 30 * MiB, { filename: 'second.bin' });
    expect(second.status).toBe(507);
    expect((await json(second)).message).toContain('running out of disk space');

    // Received bytes take disk space and leave the promise: what is left above the reserve fits, to 1 MiB.
    expect((await patchUpload(a.client, location, 0, new Uint8Array(4 * MiB))).status).toBe(204);
    const room = free() - 8 * MiB - 26 * MiB;
    expect((await createUpload(a.client, room - MiB, { filename: 'fits.bin' })).status).toBe(201);
    expect((await createUpload(a.client, 2 * MiB, { filename: 'over.bin' })).status).toBe(507);

    expect((await a.client.request(location, { method: 'DELETE', headers: TUS })).status).toBe(204);
    expect((await createUpload(a.client, 20 * MiB, { filename: 'after.bin' })).status).toBe(201);
  });
});
