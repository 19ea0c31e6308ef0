import { afterAll, describe, expect, test } from 'bun:test';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { skipWithout } from '../../helpers/prerequisites.ts';
import { ServerProcess } from '../../helpers/server-process.ts';
import { mountSmallDisk } from '../../helpers/small-disk.ts';

const MiB = 1024 * 1024;
const disk = mountSmallDisk(24);
const dataDir = typeof disk === 'string' ? '' : path.join(disk.dir, 'data');
const ballast = typeof disk === 'string' ? '' : path.join(disk.dir, 'ballast');
const server = new ServerProcess(dataDir, undefined, { COFFER_MIN_FREE_BYTES: '2M' });

afterAll(async () => {
  await server.kill();
  if (typeof disk !== 'string') {
    fs.rmSync(ballast, { force: true });
    disk.unmount();
  }
});

/** Another program fills the disk to its last block. */
function fill(): void {
  const fd = fs.openSync(ballast, 'a');
  try {
    for (;;) fs.writeSync(fd, Buffer.alloc(MiB));
  } catch {
    try {
      for (;;) fs.writeSync(fd, Buffer.alloc(4096));
    } catch {
      // full
    }
  }
  fs.closeSync(fd);
}

describe.skipIf(skipWithout(typeof disk === 'string' ? disk : null, 'the full-disk restart tests'))(
  'the server process restarted on a disk another program filled (systemd restarting it after a crash)',
  () => {
    let cookie = '';
    let kept = '';
    const call = (method: string, p: string, body?: FormData) => fetch(server.url + p, { method, headers: { cookie }, body });
    const upload = (name: string, content: Uint8Array | string) => {
      const form = new FormData();
      form.append('file', new File([content], name));
      return call('POST', '/api/files/upload', form);
    };

    test('after kill -9 it starts (the database opens), serves reads, answers writes 507; once there is room, uploads work', async () => {
      await server.start();
      const signup = await fetch(`${server.url}/api/signup`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'full@example.test', password: 'chaos password', name: 'Full' }),
      });
      cookie = /token=[^;]+/.exec(signup.headers.get('set-cookie') ?? '')![0];
      const res = await upload('kept.txt', 'readable on a full disk');
      expect(res.status).toBe(200);
      kept = ((await res.json()) as { id: string }).id;
      await server.kill();
      fill();
      await server.start();
      expect(await (await call('GET', `/api/files/${kept}/download`)).text()).toBe('readable on a full disk');
      expect((await upload('no-room.bin', randomBytes(MiB))).status).toBe(507);
      expect(server.stderr).not.toContain('unexpected error');

      fs.rmSync(ballast);
      expect((await upload('room.bin', randomBytes(MiB))).status).toBe(200);
      // The next start with room keeps the space for the next time again.
      await server.stop();
      await server.start();
      expect(fs.statSync(path.join(dataDir, 'coffer.reserve')).size).toBe(MiB);
    }, 60_000);

    test('with nothing to give back, it says in one line that the disk is full and what to do', async () => {
      // Stopped cleanly, the database's -shm index is gone and must be made anew.
      await server.stop();
      fs.rmSync(path.join(dataDir, 'coffer.reserve'));
      fill();
      try {
        const failed = await server.start().then(
          () => null,
          (err: unknown) => String(err),
        );
        expect(failed).toContain(
          `coffer: the disk of ${dataDir} is full: the database cannot be opened without a little free space (for ${dataDir}/coffer.db-shm); free some space on it, then start again`,
        );
        expect(failed).not.toContain('unexpected error');
      } finally {
        fs.rmSync(ballast);
      }
      await server.start();
      expect(await (await call('GET', `/api/files/${kept}/download`)).text()).toBe('readable on a full disk');
    }, 60_000);
  },
);
