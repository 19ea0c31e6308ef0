import { afterAll, describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { seedRows, upload } from '../../helpers/files.ts';
import { admin } from '../../helpers/seed.ts';
import { runCli, serveCli } from '../../helpers/cli.ts';
import { startTestServer, tempDir } from '../../helpers/server.ts';
import { mountSmallDisk, type SmallDisk } from '../../helpers/small-disk.ts';
import { skipWithout } from '../../helpers/prerequisites.ts';
import { eventually } from '../../helpers/eventually.ts';

const disk: SmallDisk | string = mountSmallDisk(64);
const noDisk = skipWithout(typeof disk === 'string' ? disk : null, 'the replication disk-full test');
const outside = tempDir('coffer-replication-full-');
afterAll(() => {
  if (typeof disk !== 'string') disk.unmount();
  fs.rmSync(outside, { recursive: true, force: true });
});

describe.skipIf(noDisk)('replication on a full disk', () => {
  test('shipping stops and says so; the server keeps serving, and writes again once there is space', async () => {
    const dataDir = path.join((disk as SmallDisk).dir, 'data');
    const pass = path.join(outside, 'passphrase');
    fs.writeFileSync(pass, 'replica passphrase\n', { mode: 0o600 });
    const t = await startTestServer({
      dataDir,
      env: {
        COFFER_STORAGE: 'local',
        COFFER_MIN_FREE_BYTES: '1K',
        BACKUP_PASSPHRASE_FILE: pass,
        REPLICATE_TO: path.join(outside, 'replica'),
        REPLICATE_INTERVAL_MS: '100',
      },
    });
    const filler = path.join(dataDir, 'filler');
    try {
      const a = await admin(t);
      const item = await upload(a.client, 'kept.txt', 'content');
      // More than a checkpoint's worth of log: it is checkpointed and started over, so the commits below reuse
      // the log's space and can succeed on the full disk, leaving replication alone short of room.
      const wal = path.join(dataDir, 'coffer.db-wal');
      for (let i = 0; i < 400 && fs.statSync(wal).size < 6 * 1024 * 1024; i++) {
        await a.client.post('/api/files/rename', { id: item.id, name: `warm-${i}.txt` });
      }
      await eventually(() => expect(fs.readdirSync(path.join(dataDir, 'replication', 'outbox'))).toEqual([]), { timeoutMs: 15_000 });
      const fd = fs.openSync(filler, 'w');
      try {
        for (;;) fs.writeSync(fd, randomBytes(64 * 1024));
      } catch (err) {
        expect((err as NodeJS.ErrnoException).code).toBe('ENOSPC');
      } finally {
        fs.closeSync(fd);
      }
      const status = async () =>
        ((await (await a.client.get('/api/user/backups')).json()) as { replication: { warning: string | null; generation: string | null } })
          .replication;
      await eventually(
        async () => {
          // A change, so there is something to ship (it may itself fail for want of space: that is SQLite's, not replication's).
          await a.client.post('/api/files/rename', { id: item.id, name: `full-${randomBytes(3).toString('hex')}.txt` });
          expect((await status()).warning).toContain('the disk is full');
        },
        { timeoutMs: 15_000 },
      );
      expect((await status()).generation).toBeNull();
      // Still serving; and once there is space again, writing works as it did.
      expect((await a.client.get('/api/files')).status).toBe(200);
      fs.rmSync(filler);
      expect((await a.client.post('/api/files/rename', { id: item.id, name: 'after.txt' })).status).toBe(200);
      expect((await a.client.get(`/api/files/${item.id}/download`)).status).toBe(200);
    } finally {
      fs.rmSync(filler, { force: true });
      await t.server.stop();
    }
  }, 60_000);

  test('a restore from the replica, or a standby, onto a disk too small is refused with the room there and the room needed, and leaves nothing behind', async () => {
    const pass = path.join(outside, 'passphrase');
    fs.writeFileSync(pass, 'replica passphrase\n', { mode: 0o600 });
    const replica = path.join(outside, 'replica-too-big');
    const env = { BACKUP_PASSPHRASE_FILE: pass };
    const t = await startTestServer({ env: { ...env, COFFER_STORAGE: 'local', REPLICATE_TO: replica, REPLICATE_INTERVAL_MS: '100' } });
    try {
      const a = await admin(t);
      await eventually(() => expect(fs.readdirSync(replica).some((n) => n.endsWith('_snapshot'))).toBe(true));
      seedRows(t, a.id, null, 4000, (i) => ({ name: `row-${i}-${randomBytes(100).toString('hex')}`, type: 'folder' }));
      await upload(a.client, 'last.txt', 'shipped');
      await eventually(() => expect(fs.readdirSync(path.join(t.dataDir, 'replication', 'outbox'))).toEqual([]));
    } finally {
      await t.stop();
    }
    const small = mountSmallDisk(3);
    if (typeof small === 'string') throw new Error(small);
    try {
      const restored = path.join(small.dir, 'restored');
      const r = await runCli(['restore', '--from-replica', replica, '--data-dir', restored], { env });
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(
        /restored had 3\.\d\d MiB free, and the replica's database needs more than \d+\.\d\d MiB there: free some space/,
      );
      expect(fs.existsSync(restored)).toBe(false);
      const following = path.join(small.dir, 'standby');
      const standby = await serveCli(['--port', '0', '--host', '127.0.0.1', '--data-dir', following, '--standby', replica], { env }).then(
        (s) => s.stop().then(() => 'it started'),
        (err: Error) => err.message,
      );
      expect(standby).toMatch(/standby had 3\.\d\d MiB free, and the replica's database needs more than/);
      expect(fs.readdirSync(following).filter((n) => n.startsWith('.'))).toEqual([]);
    } finally {
      small.unmount();
    }
  }, 60_000);
});
