import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { Database } from 'bun:sqlite';
import { startTestServer, tempDir } from '../helpers/server.ts';
import * as seed from '../helpers/seed.ts';
import { MAIN, parseJson, runCli } from '../helpers/cli.ts';
import { storeFile, type StoredFile } from '../helpers/stored-files.ts';
import { objectFileOf } from '../helpers/s3.ts';
import { startTestS3, type TestS3 } from '../helpers/s3.ts';
import { eventually } from '../helpers/eventually.ts';
import { blobFiles, upload } from '../helpers/files.ts';
import * as img from '../helpers/images.ts';

let s3: TestS3;
beforeAll(async () => {
  s3 = await startTestS3();
});
afterAll(async () => {
  await s3.stop();
});

const COUNT = 200;

function copiesRecorded(dataDir: string): number {
  const db = new Database(`${dataDir}/coffer.db`, { readonly: true });
  try {
    return db.query<{ n: number }, []>('SELECT COUNT(*) AS n FROM storage_migration_copies').get()!.n;
  } finally {
    db.close();
  }
}

describe('coffer storage migrate', () => {
  test(`local → s3 → local round-trips ${COUNT} files byte-exact, including after being killed half-way and resumed`, async () => {
    const dataDir = tempDir();
    const prefix = `migrate-${randomBytes(3).toString('hex')}/`;
    const s3Env = s3.env(prefix);
    const { COFFER_STORAGE: _, ...targetS3 } = s3Env;
    try {
      // A local installation with files of many sizes (one to five segments, some empty).
      let t = await startTestServer({ dataDir });
      const owner = await seed.owner(t);
      const files: StoredFile[] = [];
      for (let i = 0; i < COUNT; i++)
        files.push(await storeFile(t.server.ctx, owner.id, { size: i % 10 === 0 ? 0 : (i * 7919) % (300 * 1024) }));
      await t.server.stop();

      // Killed half-way: the copies verified so far are remembered.
      const proc = Bun.spawn([process.execPath, MAIN, 'storage', 'migrate', '--to', 's3', '--data-dir', dataDir], {
        env: { PATH: process.env.PATH!, LOG_LEVEL: 'silent', ...targetS3 },
        stdout: 'pipe',
        stderr: 'pipe',
      });
      await eventually(() => copiesRecorded(dataDir) >= COUNT / 4, { timeoutMs: 20_000, intervalMs: 5 }).finally(() =>
        proc.kill('SIGKILL'),
      );
      await proc.exited;
      const before = copiesRecorded(dataDir);
      expect(before).toBeGreaterThanOrEqual(COUNT / 4);
      expect(before).toBeLessThan(COUNT);

      // Resumed: only the rest is copied.
      let r = await runCli(['storage', 'migrate', '--to', 's3', '--json', '--data-dir', dataDir], { env: targetS3 });
      expect(r.stderr).toBe('');
      const resumed = parseJson(r);
      expect(resumed.alreadyCopied).toBe(before);
      expect(resumed.copied).toBe(COUNT - before);
      expect(resumed.switched).toBe(false);

      // Not switched yet: the server still starts on local disk; on S3 it is refused.
      r = await runCli(['serve', '--port', '0', '--data-dir', dataDir], { env: s3Env, timeoutMs: 15_000 });
      expect(r.stderr).toContain('coffer storage migrate --to s3');

      r = await runCli(['storage', 'migrate', '--to', 's3', '--switch', '--data-dir', dataDir], { env: targetS3 });
      expect(r.code).toBe(0);
      expect(r.stdout).toContain('is now the storage in use. Set COFFER_STORAGE=s3');

      // On S3: every file byte-exact, no plaintext in the bucket.
      t = await startTestServer({ dataDir, env: s3Env });
      const client = t.client();
      client.cookies.set('token', owner.client.cookies.get('token')!);
      for (const f of files) {
        const res = await client.get(`/api/files/${f.id}/download`);
        expect(res.status).toBe(200);
        expect(Buffer.from(await res.arrayBuffer()).equals(f.content)).toBe(true);
      }
      expect(s3.objectKeys(prefix)).toHaveLength(COUNT);
      await t.server.stop();

      // Old objects go only with --delete-source, after the switch.
      r = await runCli(['storage', 'migrate', '--to', 's3', '--delete-source', '--json', '--data-dir', dataDir], { env: targetS3 });
      expect(parseJson(r)).toEqual({ deleted: COUNT, missing: 0 });

      // And back: s3 → local, with the switch, then served from local disk.
      r = await runCli(['storage', 'migrate', '--to', 'local', '--switch', '--json', '--data-dir', dataDir], { env: s3Env });
      const back = parseJson(r);
      expect(back.copied).toBe(COUNT);
      expect(back.switched).toBe(true);
      t = await startTestServer({ dataDir, env: { COFFER_STORAGE: 'local' } });
      const local = t.client();
      local.cookies.set('token', owner.client.cookies.get('token')!);
      for (const f of files) {
        const res = await local.get(`/api/files/${f.id}/download`);
        expect(Buffer.from(await res.arrayBuffer()).equals(f.content)).toBe(true);
      }
      await t.server.stop();
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }, 120_000);

  test('a bucket that goes silent mid-copy stops migrate --to local with one line naming the storage (exit 1); run again, it finishes', async () => {
    const dataDir = tempDir();
    const prefix = `silent-${randomBytes(3).toString('hex')}/`;
    const s3Env = s3.env(prefix);
    try {
      const t = await startTestServer({ dataDir, env: s3Env });
      const owner = await seed.owner(t);
      for (let i = 0; i < 3; i++) await storeFile(t.server.ctx, owner.id, { size: 100_000 });
      await t.server.stop();
      s3.stopMidBody(10, (m, u) => m === 'GET' && u.includes(`/${prefix}`));
      let r = await runCli(['storage', 'migrate', '--to', 'local', '--data-dir', dataDir], { env: { ...s3Env, S3_TIMEOUT_SECONDS: '1' } });
      s3.clearFailures();
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(
        /^coffer: the storage did not answer: S3 GET silent-\w+\/\S+: the download stalled for 1 s\. Check that it is up and reachable, then run the command again\.\n$/,
      );
      r = await runCli(['storage', 'migrate', '--to', 'local', '--json', '--data-dir', dataDir], { env: s3Env });
      expect(r.code).toBe(0);
      expect(parseJson(r).copied + parseJson(r).alreadyCopied).toBe(3);
    } finally {
      s3.clearFailures();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  test('thumbnails move with their file, local → s3 → local: served from the new store, none left in the old', async () => {
    const dataDir = tempDir();
    const prefix = `thumbs-${randomBytes(3).toString('hex')}/`;
    const s3Env = s3.env(prefix);
    const { COFFER_STORAGE: _, ...targetS3 } = s3Env;
    const local = { COFFER_STORAGE: 'local' };
    try {
      let t = await startTestServer({ dataDir, env: local });
      const owner = await seed.owner(t);
      const file = await upload(owner.client, 'photo.png', await img.png(640, 480), { type: 'image/png' });
      const key = t.server.ctx.repos.items.getLive(owner.id, file.id)!.storageKey!;
      await eventually(() => t.server.ctx.repos.thumbnails.get(key)?.status === 'ready', { timeoutMs: 30_000 });
      const objects = [key, `${key}_thumb_large`, `${key}_thumb_small`];
      expect(blobFiles(dataDir).objects.sort()).toEqual(objects);
      const served = async (env: Record<string, string>) => {
        t = await startTestServer({ dataDir, env });
        const client = t.client();
        client.cookies.set('token', owner.client.cookies.get('token')!);
        const res = await client.get(`/api/files/${file.id}/thumbnail?size=large`);
        expect(res.status).toBe(200);
        const bytes = Buffer.from(await res.arrayBuffer());
        await t.server.stop();
        return bytes;
      };
      const large = Buffer.from(await (await owner.client.get(`/api/files/${file.id}/thumbnail?size=large`)).arrayBuffer());
      await t.server.stop();

      let r = await runCli(['storage', 'migrate', '--to', 's3', '--switch', '--data-dir', dataDir], { env: targetS3 });
      expect(r.code).toBe(0);
      // Copied by the migration, before any request could make them again in the new store.
      expect(s3.objectKeys(prefix).sort()).toEqual(objects.map((k) => `${prefix}${k}`));
      r = await runCli(['storage', 'migrate', '--to', 's3', '--delete-source', '--json', '--data-dir', dataDir], { env: targetS3 });
      expect(parseJson(r)).toEqual({ deleted: 1, missing: 0 });
      expect(blobFiles(dataDir).objects).toEqual([]);
      expect((await served(s3Env)).equals(large)).toBe(true);

      r = await runCli(['storage', 'migrate', '--to', 'local', '--switch', '--data-dir', dataDir], { env: s3Env });
      expect(r.code).toBe(0);
      expect(blobFiles(dataDir).objects.sort()).toEqual(objects);
      r = await runCli(['storage', 'migrate', '--to', 'local', '--delete-source', '--json', '--data-dir', dataDir], { env: s3Env });
      expect(parseJson(r)).toEqual({ deleted: 1, missing: 0 });
      expect(s3.objectKeys(prefix)).toEqual([]);
      expect((await served(local)).equals(large)).toBe(true);
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }, 120_000);

  test('--switch while the server runs: uploads pause with 503, nothing is lost, and the running server keeps refusing writes', async () => {
    const prefix = `live-${randomBytes(3).toString('hex')}/`;
    const { COFFER_STORAGE: _, ...targetS3 } = s3.env(prefix);
    const t = await startTestServer();
    try {
      const owner = await seed.owner(t);
      const res = await owner.client.post('/api/files/folder', { name: 'before' });
      expect(res.status).toBe(200);
      const stored = await storeFile(t.server.ctx, owner.id, { size: 5000 });
      const r = await runCli(['storage', 'migrate', '--to', 's3', '--switch', '--json', '--data-dir', t.dataDir], { env: targetS3 });
      expect(parseJson(r).switched).toBe(true);
      const form = new FormData();
      form.append('file', new Blob(['late']), 'late.txt');
      const late = await owner.client.request('/api/files/upload', { method: 'POST', body: form });
      expect(late.status).toBe(503);
      expect(((await late.json()) as { message: string }).message).toContain('being moved');
      // Reads still work from the old storage until the restart.
      expect((await owner.client.get(`/api/files/${stored.id}/download`)).status).toBe(200);
      expect(s3.objectKeys(prefix)).toEqual([`${prefix}${stored.storageKey}`]);
    } finally {
      await t.stop();
    }
  });

  test('Ctrl-C while --switch copies with uploads paused: one line, exit 1, and the running server takes uploads again', async () => {
    const prefix = `stop-${randomBytes(3).toString('hex')}/`;
    const { COFFER_STORAGE: _, ...targetS3 } = s3.env(prefix);
    const t = await startTestServer();
    const paused = () => {
      const db = new Database(`${t.dataDir}/coffer.db`, { readonly: true });
      try {
        return db.query<{ at: number | null }, []>('SELECT writes_paused_at AS at FROM storage_location').get()?.at ?? null;
      } finally {
        db.close();
      }
    };
    try {
      const owner = await seed.owner(t);
      const first = await storeFile(t.server.ctx, owner.id, { size: 5000 });
      // Each copy into the bucket takes a while: the file that arrives meanwhile is left for the pass with uploads paused.
      s3.stall(1500, (m, u) => m === 'PUT' && u.includes(`/${prefix}`));
      const proc = Bun.spawn([process.execPath, MAIN, 'storage', 'migrate', '--to', 's3', '--switch', '--data-dir', t.dataDir], {
        env: { PATH: process.env.PATH!, COFFER_CONFIG: '/dev/null', LOG_LEVEL: 'silent', ...targetS3 },
        stdout: 'pipe',
        stderr: 'pipe',
      });
      await eventually(() => expect(s3.requests.some((r) => r.startsWith('PUT') && r.includes(first.storageKey))).toBe(true));
      // A file whose key sorts first, so the first pass has gone past it.
      const late = await storeFile(t.server.ctx, owner.id, { size: 100 });
      const key = `--${late.storageKey.slice(2)}`;
      const moved = objectFileOf(t.server.ctx.driver, key);
      fs.mkdirSync(path.dirname(moved), { recursive: true });
      fs.renameSync(objectFileOf(t.server.ctx.driver, late.storageKey), moved);
      t.server.ctx.db.$client.query('UPDATE items SET storage_key = ? WHERE id = ?').run(key, late.id);
      await eventually(() => expect(paused()).not.toBeNull(), { intervalMs: 10, timeoutMs: 20_000 });
      proc.kill('SIGINT');
      const [code, stderr] = await Promise.all([proc.exited, new Response(proc.stderr).text()]);
      expect({ code, stderr: stderr.trim() }).toEqual({
        code: 1,
        stderr:
          'coffer: interrupted (SIGINT): the copies verified so far are kept and uploads are accepted again; run the same command again to resume',
      });
      expect(paused()).toBeNull();
      const form = new FormData();
      form.append('file', new Blob(['after']), 'after.txt');
      expect((await owner.client.request('/api/files/upload', { method: 'POST', body: form })).status).toBe(200);
    } finally {
      s3.clearFailures();
      await t.stop();
    }
  }, 120_000);

  test('mistakes are one line: a bad --to, --delete-source before a switch, a target already in use', async () => {
    const dataDir = tempDir();
    try {
      const t = await startTestServer({ dataDir });
      await seed.owner(t);
      await t.server.stop();
      let r = await runCli(['storage', 'migrate', '--to', 'ftp', '--data-dir', dataDir]);
      expect(r).toMatchObject({ code: 1, stderr: 'coffer: --to must be s3 or local, got "ftp"\n' });
      const { COFFER_STORAGE: _, ...targetS3 } = s3.env();
      r = await runCli(['storage', 'migrate', '--to', 's3', '--delete-source', '--data-dir', dataDir], { env: targetS3 });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('run migrate with --switch first');
      r = await runCli(['storage', 'migrate', '--to', 'local', '--data-dir', dataDir]);
      expect(r).toMatchObject({ code: 1, stderr: 'coffer: the files are already stored on local disk\n' });
      r = await runCli(['storage', 'migrate', '--to', 's3', '--data-dir', dataDir]);
      expect(r).toMatchObject({ code: 1, stderr: 'coffer: target storage: S3_BUCKET is required when COFFER_STORAGE=s3\n' });
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
