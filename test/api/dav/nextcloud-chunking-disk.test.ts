import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import path from 'node:path';
import { davLogin } from '../../helpers/dav.ts';
import { skipWithout } from '../../helpers/prerequisites.ts';
import { admin, type SeededLogin } from '../../helpers/seed.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { mountSmallDisk, type SmallDisk } from '../../helpers/small-disk.ts';
import { createUpload } from '../../helpers/tus.ts';

const MiB = 1024 * 1024;
const disk: SmallDisk | string = mountSmallDisk(64);
const noDisk = skipWithout(typeof disk === 'string' ? disk : null, 'the chunked-upload disk reservation test');

describe.skipIf(noDisk)('chunked uploads reserve room on the disk beside tus uploads: 64 MiB tmpfs, 8 MiB reserve', () => {
  let t: TestServer;
  let a: SeededLogin;
  let authorization: string;
  const uploads = (method: string, rel: string, headers: Record<string, string> = {}) =>
    fetch(`${t.url}/remote.php/dav/uploads/${a.id}/${rel}`, { method, headers: { authorization, ...headers } });
  beforeAll(async () => {
    t = await startTestServer({ dataDir: path.join((disk as SmallDisk).dir, 'data'), env: { COFFER_MIN_FREE_BYTES: '8M' } });
    a = await admin(t);
    authorization = (await davLogin(t, a, 'Nextcloud')).authorization;
  });
  afterAll(async () => {
    await t?.server.stop();
    (disk as SmallDisk).unmount();
  });

  test('an announced OC-Total-Length holds its room until the upload ends, for chunked and tus uploads alike', async () => {
    expect((await uploads('MKCOL', 'first', { 'oc-total-length': String(30 * MiB) })).status).toBe(201);
    // 30 MiB fit on their own, not beside the first upload's 30 MiB still to come.
    expect((await uploads('MKCOL', 'second', { 'oc-total-length': String(30 * MiB) })).status).toBe(507);
    expect((await createUpload(a.client, 30 * MiB, { filename: 'tus.bin' })).status).toBe(507);
    expect((await uploads('DELETE', 'first')).status).toBe(204);
    expect((await uploads('MKCOL', 'second', { 'oc-total-length': String(30 * MiB) })).status).toBe(201);
  });
});
