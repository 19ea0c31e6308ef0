import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { ManualClock } from '../../../src/clock.ts';
import { json, TestClient } from '../../helpers/client.ts';
import { DavClient, davLogin } from '../../helpers/dav.ts';
import { eventually } from '../../helpers/eventually.ts';
import { uploadRaw } from '../../helpers/files.ts';
import { skipWithout } from '../../helpers/prerequisites.ts';
import * as seed from '../../helpers/seed.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { ServerProcess } from '../../helpers/server-process.ts';
import { type FailingDisk, mountFailingDisk, mountSmallDisk, type SmallDisk } from '../../helpers/small-disk.ts';

const MiB = 1024 * 1024;
const diskFailing = {
  message:
    "The server's disk is read-only or failing, so nothing can be saved right now. " +
    'Files already stored can still be read; the administrator finds the cause in the server log.',
};

/** Fills the disk under `dir` to its last block, as another program would. */
function fillUp(dir: string): string {
  const ballast = path.join(dir, 'ballast');
  const fd = fs.openSync(ballast, 'w');
  try {
    for (const size of [MiB, 4096]) {
      try {
        for (;;) fs.writeSync(fd, Buffer.alloc(size));
      } catch {
        // full at this size; the smaller one takes the rest
      }
    }
  } finally {
    fs.closeSync(fd);
  }
  return ballast;
}

const full: SmallDisk | string = mountSmallDisk(64);
describe.skipIf(skipWithout(typeof full === 'string' ? full : null, 'reads on a full disk'))(
  'reads on a disk another program filled',
  () => {
    const clock = new ManualClock();
    let t: TestServer;
    beforeAll(async () => {
      t = await startTestServer({ dataDir: path.join((full as SmallDisk).dir, 'data'), env: { COFFER_MIN_FREE_BYTES: '8M' }, clock });
    });
    afterAll(async () => {
      await t?.server.stop();
      (full as SmallDisk).unmount();
    });

    test('a browser session past its minute and an app password used for the first time still read; writes get 507; space freed, writes work again', async () => {
      const a = await seed.admin(t);
      const content = randomBytes(200_000);
      const file = await json(await uploadRaw(a.client, 'kept.bin', content));
      const dav = await davLogin(t, a);
      const ballast = fillUp((full as SmallDisk).dir);
      try {
        // Both record when they were last used at most once a minute: that write finds no room.
        clock.advance(2 * 60_000);
        expect((await a.client.get('/api/files')).status).toBe(200);
        const download = await a.client.get(`/api/files/${file.id}/download`);
        expect(Buffer.from(await download.arrayBuffer()).equals(content)).toBe(true);
        expect((await dav.propfind('')).status).toBe(207);
        const got = await dav.request('GET', 'kept.bin');
        expect(Buffer.from(await got.arrayBuffer()).equals(content)).toBe(true);
        expect((await a.client.post('/api/files/folder', { name: 'refused' })).status).toBe(507);
      } finally {
        fs.rmSync(ballast);
      }
      expect((await a.client.post('/api/files/folder', { name: 'after' })).status).toBe(200);
      expect((await dav.put('after.bin', randomBytes(1000))).status).toBe(201);
    });
  },
);

const failing: FailingDisk | string = mountFailingDisk(64);
describe.skipIf(skipWithout(typeof failing === 'string' ? failing : null, 'a disk that fails'))(
  'a disk that turns read-only after an error (a USB disk on a Raspberry Pi; the server in its own process)',
  () => {
    const disk = failing as FailingDisk;
    const server = new ServerProcess(path.join(disk.dir, 'data'), undefined, { COFFER_MIN_FREE_BYTES: '8M' });
    afterAll(async () => {
      await server.kill();
      disk.unmount();
    });

    test('reads go on; every write answers 503 saying the disk refused it (never 500), one error line each; repaired and restarted, everything is there', async () => {
      await server.start();
      const client = new TestClient(server.url);
      const email = 'failing-disk@example.test';
      expect((await client.post('/api/signup', { email, password: 'correct horse battery' })).status).toBe(200);
      const content = randomBytes(300_000);
      const file = await json(await uploadRaw(client, 'kept.bin', content));
      const app = await json(await client.post('/api/user/app-passwords', { name: 'sync' }));
      const dav = new DavClient(server.url, email, app.password);
      // The kernel's write-back, which comes within 30 s: commits still in memory when the disk fails are lost as in a power cut (docs/reliability.md).
      spawnSync('sync', ['-f', disk.dir]);
      disk.fail();

      expect((await client.get('/api/files')).status).toBe(200);
      const download = await client.get(`/api/files/${file.id}/download`);
      expect(Buffer.from(await download.arrayBuffer()).equals(content)).toBe(true);
      expect((await dav.propfind('')).status).toBe(207);
      const got = await dav.request('GET', 'kept.bin');
      expect(Buffer.from(await got.arrayBuffer()).equals(content)).toBe(true);

      const writes = [
        await uploadRaw(client, 'refused.bin', randomBytes(100_000)),
        await client.post('/api/files/folder', { name: 'refused' }),
        await client.post('/api/files/delete', { ids: [file.id] }),
        await dav.put('refused.bin', randomBytes(1000)),
      ];
      for (const res of writes) {
        expect(res.status).toBe(503);
        expect(res.headers.get('retry-after')).toBe('60');
        expect(await json(res)).toEqual(diskFailing);
      }
      expect((await fetch(`${server.url}/health`)).status).toBe(200);
      await eventually(() => server.stderr.split('the data disk refused a write').length - 1 === writes.length, {
        message: `one error line per refused write; stderr: ${server.stderr}`,
      });
      expect(server.stderr).not.toContain('unhandled error');

      await server.stop();
      disk.repair();
      await server.start();
      const again = new TestClient(server.url);
      expect((await again.post('/api/login', { email, password: 'correct horse battery' })).status).toBe(200);
      const after = await again.get(`/api/files/${file.id}/download`);
      expect(Buffer.from(await after.arrayBuffer()).equals(content)).toBe(true);
      expect((await uploadRaw(again, 'after.bin', randomBytes(100_000))).status).toBe(200);
    }, 60_000);
  },
);
