import { afterAll, describe, expect, test } from 'bun:test';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { eventually } from '../../helpers/eventually.ts';
import { skipWithout } from '../../helpers/prerequisites.ts';
import { ServerProcess } from '../../helpers/server-process.ts';
import { mountSmallDisk, type SmallDisk } from '../../helpers/small-disk.ts';

const MiB = 1024 * 1024;
const dataDisk = mountSmallDisk(40);
const otherDisk = mountSmallDisk(8);
const reason = [dataDisk, otherDisk].find((d): d is string => typeof d === 'string') ?? null;

const servers: ServerProcess[] = [];
afterAll(async () => {
  for (const s of servers) await s.kill();
  for (const d of [dataDisk, otherDisk]) if (typeof d !== 'string') d.unmount();
});

const free = (dir: string) => {
  const s = fs.statfsSync(dir);
  return s.bavail * s.bsize;
};

/** A server on `dataDir` whose scheduled backups go to `backupDir`, signed up and holding 20 MiB of files. */
async function serverWithFiles(dataDir: string, backupDir: string) {
  const server = new ServerProcess(dataDir, undefined, { COFFER_MIN_FREE_BYTES: '4M', BACKUP_DIR: backupDir });
  servers.push(server);
  await server.start();
  const signup = await fetch(`${server.url}/api/signup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'backup@example.test', password: 'chaos password', name: 'Backup' }),
  });
  const cookie = /token=[^;]+/.exec(signup.headers.get('set-cookie') ?? '')![0];
  const call = (method: string, p: string, body?: FormData) => fetch(server.url + p, { method, headers: { cookie }, body });
  const upload = (name: string, size: number) => {
    const form = new FormData();
    form.append('file', new File([randomBytes(size)], name));
    return call('POST', '/api/files/upload', form);
  };
  for (let i = 0; i < 4; i++) expect((await upload(`f${i}.bin`, 5 * MiB)).status).toBe(200);
  /** "Back up now" and its finished run; the least free space on `watch` seen meanwhile. */
  const backUp = async (watch: string) => {
    expect((await call('POST', '/api/user/backups/run')).status).toBe(202);
    let least = free(watch);
    const run = await eventually(
      async () => {
        least = Math.min(least, free(watch));
        const status = (await (await call('GET', '/api/user/backups')).json()) as {
          running: boolean;
          lastRun: { status: string; error: string };
        };
        least = Math.min(least, free(watch));
        return !status.running && status.lastRun && status.lastRun.status !== 'running' ? status.lastRun : false;
      },
      { timeoutMs: 30_000, intervalMs: 1 },
    );
    return { run, least };
  };
  return { server, upload, backUp };
}

describe.skipIf(skipWithout(reason, 'the backup disk-full tests'))('a scheduled backup that does not fit on its disk', () => {
  test('on the data disk: it stops before taking the database reserve, says so, leaves no partial archive; uploads go on', async () => {
    const disk = dataDisk as SmallDisk;
    const backups = path.join(disk.dir, 'backups');
    const s = await serverWithFiles(path.join(disk.dir, 'first'), backups);
    const { run, least } = await s.backUp(disk.dir);
    expect(run.status).toBe('failed');
    expect(run.error).toBe(
      `The backup does not fit on the disk of ${backups} while keeping the 4.00 MiB the database needs on it (COFFER_MIN_FREE_BYTES). Free some space there (BACKUP_KEEP keeps fewer scheduled backups) or write backups to another disk (BACKUP_DIR).`,
    );
    expect(least).toBeGreaterThanOrEqual(4 * MiB);
    expect(fs.readdirSync(backups)).toEqual([]);
    expect((await s.upload('after.bin', MiB)).status).toBe(200);
    await s.server.stop();
  }, 90_000);

  test('on a disk of its own: the disk filling up is named with what to do, not as ENOSPC', async () => {
    const disk = dataDisk as SmallDisk;
    const backups = (otherDisk as SmallDisk).dir;
    fs.rmSync(path.join(disk.dir, 'first'), { recursive: true, force: true });
    const s = await serverWithFiles(path.join(disk.dir, 'second'), backups);
    const { run } = await s.backUp(backups);
    expect(run.status).toBe('failed');
    expect(run.error).toBe(
      `The backup does not fit on the disk of ${backups}. Free some space there (BACKUP_KEEP keeps fewer scheduled backups) or write backups to another disk (BACKUP_DIR).`,
    );
    expect(fs.readdirSync(backups)).toEqual([]);
    await s.server.stop();
  }, 90_000);
});
