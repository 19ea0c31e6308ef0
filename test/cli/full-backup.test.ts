import { afterAll, describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import { Database } from 'bun:sqlite';
import { dataPaths } from '../../src/data-dir.ts';
import { holdObjectDeletions } from '../../src/storage/deletion-holds.ts';
import { TAR_END, TarReader, tarHeader, tarPadding } from '../../src/lib/tar.ts';
import { startTestServer, tempDir, type TestServer } from '../helpers/server.ts';
import * as seed from '../helpers/seed.ts';
import { MAIN, parseJson, runCli } from '../helpers/cli.ts';
import { blobFiles, upload } from '../helpers/files.ts';
import { readBack, storeFile } from '../helpers/stored-files.ts';
import { startTestS3 } from '../helpers/s3.ts';
import { eventually } from '../helpers/eventually.ts';
import { mountSmallDisk, type SmallDisk } from '../helpers/small-disk.ts';
import { skipWithout } from '../helpers/prerequisites.ts';

const dirs: string[] = [];
// A 1 MiB file system, for the backup and the restore that do not fit on it.
const smallDisk: SmallDisk | string = mountSmallDisk(1);
const noSmallDisk = skipWithout(typeof smallDisk === 'string' ? smallDisk : null, 'the full-disk backup test');
afterAll(() => {
  dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true }));
  if (typeof smallDisk !== 'string') smallDisk.unmount();
});

const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

function fileRows(dataDir: string): Array<{ id: string; size: number }> {
  const db = new Database(path.join(dataDir, 'coffer.db'), { readonly: true });
  try {
    return db.query<{ id: string; size: number }, []>(`SELECT id, size FROM items WHERE type = 'file'`).all();
  } finally {
    db.close();
  }
}

/** A backup archive with `tar` listing its entries (the format is plain POSIX tar). */
function tarList(file: string): string[] {
  const r = Bun.spawnSync(['tar', '-tf', file], { stdout: 'pipe', stderr: 'pipe' });
  expect(r.stderr.toString()).toBe('');
  return r.stdout.toString().trim().split('\n');
}

describe('coffer backup --full and coffer restore', () => {
  test('a full backup taken under load (uploads, permanent deletes, downloads) restores byte-exact', async () => {
    const t = await startTestServer();
    const out = tempDir('coffer-full-backup-');
    dirs.push(out);
    let restored: TestServer | null = null;
    try {
      const owner = await seed.owner(t);
      // The content of every file ever uploaded, by id: whatever the restore holds must match it.
      const contents = new Map<string, Buffer>();
      const uploadOne = async (size: number) => {
        const content = randomBytes(size);
        const item = await upload(owner.client, `f-${randomBytes(4).toString('hex')}.bin`, content);
        contents.set(item.id, content);
        return item.id as string;
      };
      const before: string[] = [];
      for (let i = 0; i < 12; i++) before.push(await uploadOne(200_000 + i * 50_000));
      const big = await storeFile(t.server.ctx, owner.id, { size: 24 * 1024 * 1024 });
      contents.set(big.id, big.content);

      let loading = true;
      let ops = 0;
      const doomed = [...before.slice(0, 6)];
      const load = Promise.all([
        (async () => {
          while (loading) {
            await uploadOne(1000 + (ops % 7) * 10_000);
            ops++;
          }
        })(),
        (async () => {
          // Permanent deletes once the backup holds deletions: their objects must wait for it.
          const holds = dataPaths(t.dataDir).holds;
          await eventually(() => !loading || (fs.existsSync(holds) && fs.readdirSync(holds).length > 0), {
            timeoutMs: 120_000,
            intervalMs: 5,
          });
          while (loading && doomed.length) {
            const id = doomed.shift()!;
            expect((await owner.client.post('/api/files/delete', { ids: [id] })).status).toBe(200);
            expect((await owner.client.post('/api/files/trash/delete', { ids: [id] })).status).toBe(202);
            // Deletes spread over the backup rather than all at its start.
            await Bun.sleep(20);
          }
        })(),
        (async () => {
          while (loading) {
            const res = await owner.client.get(`/api/files/${before[11]}/download`);
            expect(Buffer.from(await res.arrayBuffer()).equals(contents.get(before[11]!)!)).toBe(true);
            ops++;
          }
        })(),
      ]);
      const archive = path.join(out, 'coffer-full.tar');
      const r = await runCli(['backup', '--full', archive, '--json', '--data-dir', t.dataDir], { timeoutMs: 120_000 });
      loading = false;
      await load;
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(ops).toBeGreaterThan(0);
      const { manifest } = parseJson(r);
      expect(manifest).toMatchObject({ format: 'coffer-full-backup', formatVersion: 1, missingObjects: [], masterKeysNotInSecrets: [] });
      expect(fs.statSync(archive).mode & 0o777).toBe(0o600);
      // No hold outlives the backup: deletions go ahead again.
      expect(fs.readdirSync(dataPaths(t.dataDir).holds)).toEqual([]);

      const entries = tarList(archive);
      expect(entries.slice(0, 3)).toEqual(['coffer-backup.json', 'coffer.db', 'secrets.json']);
      expect(entries.at(-1)).toBe('manifest.json');
      expect(entries.filter((e) => e.startsWith('objects/')).length).toBe(manifest.objects);

      const target = path.join(out, 'restored');
      const rr = await runCli(['restore', archive, '--data-dir', target, '--json'], { timeoutMs: 120_000 });
      expect(rr.stderr).toBe('');
      expect(rr.code).toBe(0);
      expect(parseJson(rr).objects).toBe(manifest.objects);
      expect(fs.readFileSync(path.join(target, 'secrets.json'))).toEqual(fs.readFileSync(path.join(t.dataDir, 'secrets.json')));
      expect(fs.statSync(path.join(target, 'secrets.json')).mode & 0o777).toBe(0o600);

      // Every file the restored database holds reads back byte for byte, the ones deleted during the backup included.
      const rows = fileRows(target);
      expect(rows.length).toBe(manifest.counts.files);
      for (const id of before.slice(6)) expect(rows.some((row) => row.id === id)).toBe(true);
      restored = await startTestServer({ dataDir: target });
      for (const row of rows) {
        const content = contents.get(row.id)!;
        expect(content).toBeDefined();
        expect(sha(await readBack(restored.server.ctx, row.id))).toBe(sha(content));
      }
      const client = await seed.login(restored, owner.email, owner.password);
      // The old server may have numbered changes past the backup: a stream resuming after one of them is reset, not skipped past new ones.
      const stale = t.server.ctx.services.changes.latestSeq();
      let n = 0;
      do expect((await client.post('/api/files/folder', { name: `after-the-restore-${n++}` })).status).toBe(200);
      while (restored.server.ctx.services.changes.latestSeq() <= stale);
      const events = await client.get('/api/files/events', { 'Last-Event-ID': String(stale) });
      const reader = events.body!.getReader();
      let text = '';
      while (!text.includes('event: reset') && !text.includes('folder.created'))
        text += new TextDecoder().decode((await reader.read()).value);
      await reader.cancel();
      expect(text).toContain('event: reset');
      const res = await client.get(`/api/files/${big.id}/download`);
      expect(sha(Buffer.from(await res.arrayBuffer()))).toBe(sha(big.content));
      const doctor = await runCli(['doctor', '--json', '--data-dir', target]);
      expect(parseJson(doctor).missingObjects.count).toBe(0);
      expect(parseJson(doctor).usage.mismatches).toEqual([]);
    } finally {
      await restored?.stop();
      await t.stop();
    }
  }, 180_000);

  test('while a backup holds deletions, a permanent delete waits and its object stays; afterwards it goes', async () => {
    const t = await startTestServer({ startWorker: false });
    try {
      const owner = await seed.owner(t);
      const f = await storeFile(t.server.ctx, owner.id, { size: 4000 });
      const release = holdObjectDeletions(dataPaths(t.dataDir).holds);
      expect((await owner.client.post('/api/files/delete', { ids: [f.id] })).status).toBe(200);
      expect((await owner.client.post('/api/files/trash/delete', { ids: [f.id] })).status).toBe(202);
      await t.server.worker.drain();
      expect(blobFiles(t.dataDir).objects).toContain(f.storageKey);
      const waiting = t.server.ctx.db.$client
        .query<{ status: string; attempts: number }, []>(`SELECT status, attempts FROM jobs WHERE kind = 'storage.delete'`)
        .get()!;
      expect(waiting.status).toBe('created');

      release();
      t.server.ctx.db.$client.query(`UPDATE jobs SET run_at = 0 WHERE kind = 'storage.delete'`).run();
      await t.server.worker.drain();
      expect(blobFiles(t.dataDir).objects).not.toContain(f.storageKey);
    } finally {
      await t.stop();
    }
  });

  test('restore refuses a directory that is not empty, and a damaged or cut archive leaves the directory as it was', async () => {
    const t = await startTestServer();
    const out = tempDir('coffer-full-backup-');
    dirs.push(out);
    try {
      const owner = await seed.owner(t);
      const stored = await storeFile(t.server.ctx, owner.id, { size: 300_000 });
      const archive = path.join(out, 'b.tar');
      expect((await runCli(['backup', '--full', archive, '--data-dir', t.dataDir])).code).toBe(0);
      let r = await runCli(['backup', '--full', archive, '--data-dir', t.dataDir]);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('--force');

      // Into the live data directory (or any non-empty one): refused, nothing touched.
      r = await runCli(['restore', archive, '--data-dir', t.dataDir]);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('is not empty');

      // One flipped byte inside an object: checksum mismatch, and the empty target stays empty.
      const bytes = fs.readFileSync(archive);
      const at = bytes.indexOf(Buffer.from(`objects/${stored.storageKey}`)) + 512 + 1000;
      const damaged = Buffer.from(bytes);
      damaged[at] = damaged[at]! ^ 0xff;
      fs.writeFileSync(path.join(out, 'damaged.tar'), damaged);
      const empty = path.join(out, 'empty');
      fs.mkdirSync(empty);
      r = await runCli(['restore', path.join(out, 'damaged.tar'), '--data-dir', empty]);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('do not match their checksum');
      expect(fs.readdirSync(empty)).toEqual([]);

      // Cut short: the manifest is missing; a new directory is not left behind.
      fs.writeFileSync(path.join(out, 'cut.tar'), bytes.subarray(0, bytes.length - 4096));
      r = await runCli(['restore', path.join(out, 'cut.tar'), '--data-dir', path.join(out, 'new')]);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('not usable');
      expect(fs.existsSync(path.join(out, 'new'))).toBe(false);

      // Rewritten without one object (a well-formed archive that lacks what its manifest lists).
      const reader = new TarReader(Bun.file(archive).stream());
      const parts: Uint8Array[] = [];
      for (let entry = await reader.next(); entry; entry = await reader.next()) {
        const body = await reader.readAll();
        if (entry.name === `objects/${stored.storageKey}`) continue;
        parts.push(tarHeader(entry), body, tarPadding(entry.size));
      }
      fs.writeFileSync(path.join(out, 'lacking.tar'), Buffer.concat([...parts, TAR_END]));
      r = await runCli(['restore', path.join(out, 'lacking.tar'), '--data-dir', empty]);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('1 object(s) do not match their checksum or are missing');
      expect(fs.readdirSync(empty)).toEqual([]);

      // Not a backup at all.
      fs.writeFileSync(path.join(out, 'junk.tar'), randomBytes(4096));
      r = await runCli(['restore', path.join(out, 'junk.tar'), '--data-dir', path.join(out, 'new')]);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('not usable');

      // The good archive restores.
      r = await runCli(['restore', archive, '--data-dir', empty]);
      expect(r.code).toBe(0);
      expect(r.stdout).toContain('all checked');
    } finally {
      await t.stop();
    }
  }, 60_000);

  test("restore onto a new disk's mount point, which holds only lost+found: restored, and a failed restore leaves lost+found there", async () => {
    const t = await startTestServer();
    const out = tempDir('coffer-full-backup-');
    dirs.push(out);
    try {
      const owner = await seed.owner(t);
      const stored = await storeFile(t.server.ctx, owner.id, { size: 20_000 });
      const archive = path.join(out, 'b.tar');
      expect((await runCli(['backup', '--full', archive, '--data-dir', t.dataDir])).code).toBe(0);
      const mount = path.join(out, 'disk');
      fs.mkdirSync(path.join(mount, 'lost+found'), { recursive: true, mode: 0o700 });
      fs.writeFileSync(path.join(out, 'cut.tar'), fs.readFileSync(archive).subarray(0, 8192));
      let r = await runCli(['restore', path.join(out, 'cut.tar'), '--data-dir', mount]);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('not usable');
      expect(fs.readdirSync(mount)).toEqual(['lost+found']);
      r = await runCli(['restore', archive, '--data-dir', mount]);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(fs.readdirSync(path.join(mount)).sort()).toEqual(['blobs', 'coffer.db', 'lost+found', 'secrets.json']);
      const restored = await startTestServer({ dataDir: mount });
      try {
        expect(await readBack(restored.server.ctx, stored.id)).toEqual(stored.content);
      } finally {
        await restored.stop();
      }
    } finally {
      await t.stop();
    }
  }, 60_000);

  test('Ctrl-C or SIGTERM while the archive is written: one line, exit 1, and neither the partial archive, the snapshot nor the hold is left', async () => {
    const t = await startTestServer();
    const out = tempDir('coffer-full-backup-');
    dirs.push(out);
    try {
      const owner = await seed.owner(t);
      // Enough to read that the signal comes while objects are still being written.
      for (let i = 0; i < 4; i++) await storeFile(t.server.ctx, owner.id, { size: 32 * 1024 * 1024 });
      const paths = dataPaths(t.dataDir);
      for (const signal of ['SIGINT', 'SIGTERM'] as const) {
        const archive = path.join(out, `${signal}.tar`);
        const proc = Bun.spawn([process.execPath, MAIN, 'backup', '--full', archive, '--data-dir', t.dataDir], {
          env: { PATH: process.env.PATH!, COFFER_CONFIG: '/dev/null', LOG_LEVEL: 'silent' },
          stdout: 'pipe',
          stderr: 'pipe',
        });
        const partial = `${archive}.partial-${proc.pid}`;
        // Past the database and secrets.json (written together once the 4 MiB buffer fills): objects are being read.
        await eventually(() => (fs.statSync(partial, { throwIfNoEntry: false })?.size ?? 0) > 0, { intervalMs: 5 });
        proc.kill(signal);
        const [code, stderr] = await Promise.all([proc.exited, new Response(proc.stderr).text()]);
        expect({ signal, code, stderr: stderr.trim() }).toEqual({
          signal,
          code: 1,
          stderr: `coffer: interrupted (${signal}): the unfinished archive was removed`,
        });
        expect(fs.readdirSync(out)).toEqual([]);
        expect(fs.readdirSync(paths.root).filter((name) => name.startsWith('.backup-snapshot-'))).toEqual([]);
        expect(fs.existsSync(paths.holds) ? fs.readdirSync(paths.holds) : []).toEqual([]);
      }
      // Nothing of it was needed: a backup afterwards is whole.
      const r = await runCli(['backup', '--full', path.join(out, 'after.tar'), '--data-dir', t.dataDir]);
      expect(r.code).toBe(0);
    } finally {
      await t.stop();
    }
  }, 120_000);

  test('Ctrl-C or SIGTERM during a restore: one line, exit 1, and the directory is left as it was found (absent, or empty)', async () => {
    const t = await startTestServer();
    const out = tempDir('coffer-full-backup-');
    dirs.push(out);
    try {
      const owner = await seed.owner(t);
      for (let i = 0; i < 4; i++) await storeFile(t.server.ctx, owner.id, { size: 32 * 1024 * 1024 });
      const archive = path.join(out, 'b.tar');
      expect((await runCli(['backup', '--full', archive, '--data-dir', t.dataDir], { timeoutMs: 60_000 })).code).toBe(0);
      for (const [signal, existed] of [
        ['SIGINT', false],
        ['SIGTERM', true],
      ] as const) {
        const target = path.join(out, `restored-${signal}`);
        if (existed) fs.mkdirSync(target);
        const proc = Bun.spawn([process.execPath, MAIN, 'restore', archive, '--data-dir', target], {
          env: { PATH: process.env.PATH!, COFFER_CONFIG: '/dev/null', LOG_LEVEL: 'silent' },
          stdout: 'pipe',
          stderr: 'pipe',
        });
        // The database comes first in the archive: once it is there, the objects are being restored.
        await eventually(() => fs.existsSync(path.join(target, 'coffer.db')), { intervalMs: 5 });
        proc.kill(signal);
        const [code, stderr] = await Promise.all([proc.exited, new Response(proc.stderr).text()]);
        expect({ signal, code, stderr: stderr.trim() }).toEqual({
          signal,
          code: 1,
          stderr: `coffer: interrupted (${signal}): the data directory was left as it was found`,
        });
        expect(fs.existsSync(target) ? fs.readdirSync(target) : null).toEqual(existed ? [] : null);
      }
    } finally {
      await t.stop();
    }
  }, 120_000);

  test.skipIf(noSmallDisk)(
    'a backup or a restore onto a disk without room: one line saying the disk is full, exit 1, nothing left there',
    async () => {
      const disk = smallDisk as SmallDisk;
      const t = await startTestServer();
      const out = tempDir('coffer-full-backup-');
      dirs.push(out);
      try {
        const owner = await seed.owner(t);
        await storeFile(t.server.ctx, owner.id, { size: 3 * 1024 * 1024 });
        const archive = path.join(out, 'b.tar');
        expect((await runCli(['backup', '--full', archive, '--data-dir', t.dataDir])).code).toBe(0);
        // The archive (4 MiB) does not fit on the disk: written short, it must not be called a backup.
        for (const args of [
          ['backup', '--full', path.join(disk.dir, 'b.tar'), '--data-dir', t.dataDir],
          ['restore', archive, '--data-dir', path.join(disk.dir, 'data')],
        ]) {
          const r = await runCli(args);
          expect({ args, code: r.code }).toEqual({ args, code: 1 });
          expect(r.stderr).toStartWith('coffer: the disk is full (');
          expect(r.stderr.trim().split('\n')).toHaveLength(1);
          expect(fs.readdirSync(disk.dir)).toEqual([]);
        }
      } finally {
        await t.stop();
      }
    },
    60_000,
  );

  test("on S3 storage the archive carries the bucket's objects; the restore stores them locally and serves them byte-exact", async () => {
    const s3 = await startTestS3();
    const env = s3.env(`full-${randomBytes(3).toString('hex')}/`);
    const t = await startTestServer({ env });
    const out = tempDir('coffer-full-backup-');
    dirs.push(out);
    let restored: TestServer | null = null;
    try {
      const owner = await seed.owner(t);
      const files = [];
      for (let i = 0; i < 4; i++) files.push(await storeFile(t.server.ctx, owner.id, { size: 100_000 + i }));
      const archive = path.join(out, 's3.tar');
      const r = await runCli(['backup', '--full', archive, '--json', '--data-dir', t.dataDir], { env, timeoutMs: 60_000 });
      expect(r.stderr).toBe('');
      expect(parseJson(r).manifest).toMatchObject({ objects: 4, storage: { driver: 's3', bucket: s3.bucket } });
      const target = path.join(out, 'restored');
      expect((await runCli(['restore', archive, '--data-dir', target])).code).toBe(0);
      restored = await startTestServer({ dataDir: target, env: { COFFER_STORAGE: 'local' } });
      for (const f of files) expect(sha(await readBack(restored.server.ctx, f.id))).toBe(sha(f.content));
      expect(blobFiles(target).objects.sort()).toEqual(files.map((f) => f.storageKey).sort());
    } finally {
      await restored?.stop();
      await t.stop();
      await s3.stop();
    }
  }, 60_000);
});
