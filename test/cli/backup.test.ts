import { embeddedMigrations } from '../../src/db/migrations.ts';
import { afterAll, describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { Database } from 'bun:sqlite';
import { startTestServer, tempDir } from '../helpers/server.ts';
import * as seed from '../helpers/seed.ts';
import { MAIN, parseJson, runCli } from '../helpers/cli.ts';
import { eventually } from '../helpers/eventually.ts';
import { readBack, storeFile, type StoredFile } from '../helpers/stored-files.ts';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

describe('coffer backup', () => {
  test('a consistent snapshot taken while the server keeps writing, which restores to a working instance', async () => {
    const t = await startTestServer();
    const out = tempDir('coffer-backup-');
    dirs.push(out);
    try {
      const admin = await seed.admin(t);
      const owner = await seed.owner(t);
      const before: StoredFile[] = [];
      for (let i = 0; i < 20; i++) before.push(await storeFile(t.server.ctx, owner.id, { size: 5000 + i }));

      // Writers keep going for the whole backup: files, sessions and settings.
      let writing = true;
      let written = 0;
      const writer = (async () => {
        while (writing) {
          await storeFile(t.server.ctx, owner.id, { size: 100 });
          await admin.client.put('/api/user/hide-file-extensions-config', { hidden: written % 2 === 0 });
          written++;
        }
      })();
      const file = path.join(out, 'coffer-backup.db');
      const r = await runCli(['backup', file, '--json', '--data-dir', t.dataDir]);
      writing = false;
      await writer;
      expect(r.code).toBe(0);
      expect(written).toBeGreaterThan(0);
      const { manifest, manifestFile } = parseJson(r);
      expect(manifestFile).toBe(`${file}.manifest.json`);
      expect(JSON.parse(fs.readFileSync(manifestFile, 'utf8'))).toEqual(manifest);
      expect(manifest).toMatchObject({
        format: 'coffer-backup',
        formatVersion: 1,
        schema: embeddedMigrations.at(-1)!.tag,
        database: { file: 'coffer-backup.db', integrity: 'ok' },
      });
      expect(manifest.database.sha256).toBe(createHash('sha256').update(fs.readFileSync(file)).digest('hex'));
      expect(manifest.database.bytes).toBe(fs.statSync(file).size);
      expect(manifest.masterKeyIds).toEqual([t.server.ctx.keyring.current.id]);
      expect(fs.statSync(file).mode & 0o777).toBe(0o600);

      // The snapshot is a self-consistent database: usage counters match the rows it holds.
      const snap = new Database(file, { readonly: true });
      expect(snap.query<{ integrity_check: string }, []>('PRAGMA integrity_check').get()!.integrity_check).toBe('ok');
      const counts = snap
        .query<{ used: number; actual: number; n: number }, [string]>(
          `SELECT storage_used AS used, (SELECT COALESCE(SUM(size), 0) FROM items WHERE account_id = users.id AND type = 'file') AS actual,
                  (SELECT COUNT(*) FROM items WHERE account_id = users.id) AS n FROM users WHERE id = ?`,
        )
        .get(owner.id)!;
      snap.close();
      expect(counts.used).toBe(counts.actual);
      expect(counts.n).toBeGreaterThanOrEqual(20);
      expect(manifest.counts.files).toBe(counts.n);

      // Restore: the snapshot as coffer.db, with secrets.json and the blobs copied alongside.
      const restored = path.join(out, 'restored');
      fs.mkdirSync(restored, { mode: 0o700 });
      fs.copyFileSync(file, path.join(restored, 'coffer.db'));
      fs.copyFileSync(path.join(t.dataDir, 'secrets.json'), path.join(restored, 'secrets.json'));
      fs.cpSync(path.join(t.dataDir, 'blobs'), path.join(restored, 'blobs'), { recursive: true });
      const r2 = await startTestServer({ dataDir: restored });
      try {
        await seed.login(r2, admin.email, admin.password);
        const c = await seed.login(r2, owner.email, owner.password);
        expect((await c.get('/api/user/storage')).status).toBe(200);
        for (const f of before) expect((await readBack(r2.server.ctx, f.id)).equals(f.content)).toBe(true);
        const doctor = await runCli(['doctor', '--json', '--data-dir', restored]);
        expect(parseJson(doctor).missingObjects.count).toBe(0);
        expect(parseJson(doctor).usage.mismatches).toEqual([]);
      } finally {
        await r2.server.stop();
      }
    } finally {
      await t.stop();
    }
  });

  test('an existing file is kept unless --force, which leaves the snapshot and its manifest 0600; a missing directory is refused', async () => {
    const t = await startTestServer();
    const out = tempDir('coffer-backup-');
    dirs.push(out);
    try {
      await seed.admin(t);
      const file = path.join(out, 'b.db');
      fs.writeFileSync(file, 'precious');
      let r = await runCli(['backup', file, '--data-dir', t.dataDir]);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('--force');
      expect(fs.readFileSync(file, 'utf8')).toBe('precious');
      fs.writeFileSync(`${file}.manifest.json`, '{}', { mode: 0o644 });
      r = await runCli(['backup', file, '--force', '--data-dir', t.dataDir]);
      expect(r.code).toBe(0);
      expect(r.stdout).toContain('now copy alongside');
      expect(fs.statSync(file).mode & 0o777).toBe(0o600);
      expect(fs.statSync(`${file}.manifest.json`).mode & 0o777).toBe(0o600);
      r = await runCli(['backup', path.join(out, 'nope', 'b.db'), '--data-dir', t.dataDir]);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('does not exist');
    } finally {
      await t.stop();
    }
  });

  test("the data directory's own files (secrets.json, the database's journal, blobs/) are refused as the backup file, even with --force", async () => {
    const t = await startTestServer();
    try {
      const owner = await seed.owner(t);
      const stored = await storeFile(t.server.ctx, owner.id, { size: 3000 });
      const secrets = fs.readFileSync(path.join(t.dataDir, 'secrets.json'));
      for (const name of ['secrets.json', 'coffer.db-wal', 'coffer.db-shm', path.join('blobs', 'b.tar')]) {
        for (const full of [[], ['--full']]) {
          const target = path.join(t.dataDir, name);
          const r = await runCli(['backup', ...full, target, '--force', '--data-dir', t.dataDir]);
          expect({ name, full, code: r.code }).toEqual({ name, full, code: 1 });
          expect(r.stderr).toBe(`coffer: ${target} is one of the data directory's own files: write the backup outside ${t.dataDir}\n`);
        }
      }
      expect(fs.readFileSync(path.join(t.dataDir, 'secrets.json'))).toEqual(secrets);
      expect(fs.existsSync(path.join(t.dataDir, 'blobs', 'b.tar'))).toBe(false);
      expect(await readBack(t.server.ctx, stored.id)).toEqual(stored.content);
    } finally {
      await t.stop();
    }
  });

  test('restore or verify given a database snapshot (without --full), plain or encrypted: says what it is and how to bring it back, not that it is damaged', async () => {
    const t = await startTestServer();
    const out = tempDir('coffer-backup-');
    dirs.push(out);
    try {
      await seed.admin(t);
      const passFile = path.join(out, 'passphrase');
      fs.writeFileSync(passFile, 'correct horse battery staple\n', { mode: 0o600 });
      const env = { BACKUP_PASSPHRASE_FILE: passFile };
      const plain = path.join(out, 'plain.db');
      const sealed = path.join(out, 'sealed.db');
      expect((await runCli(['backup', plain, '--data-dir', t.dataDir])).code).toBe(0);
      expect((await runCli(['backup', sealed, '--data-dir', t.dataDir], { env })).code).toBe(0);
      for (const file of [plain, sealed]) {
        for (const args of [
          ['restore', file, '--data-dir', path.join(out, 'restored')],
          ['backup', 'verify', file],
        ]) {
          const r = await runCli(args, { env });
          expect({ args, code: r.code }).toEqual({ args, code: 1 });
          expect(r.stderr).toStartWith(
            `coffer: ${file} is a database snapshot (coffer backup without --full), not a full backup: to bring it back,`,
          );
          expect(r.stderr.trim().split('\n')).toHaveLength(1);
        }
      }
      expect(fs.existsSync(path.join(out, 'restored'))).toBe(false);
    } finally {
      await t.stop();
    }
  });

  test('Ctrl-C or SIGTERM while the snapshot is taken or sealed: one line, exit 1, and no partial file is left', async () => {
    const t = await startTestServer();
    const out = tempDir('coffer-backup-');
    dirs.push(out);
    try {
      await seed.admin(t);
      // A database large enough that the signal comes while its snapshot is being written, hashed or sealed.
      const db = t.server.ctx.db.$client;
      db.run('CREATE TABLE test_padding (b BLOB)');
      for (let i = 0; i < 128; i++) db.run('INSERT INTO test_padding VALUES (randomblob(1048576))');
      const passphraseFile = path.join(out, 'passphrase');
      fs.writeFileSync(passphraseFile, 'correct horse battery staple');
      for (const [signal, env] of [
        ['SIGINT', {}],
        ['SIGTERM', { BACKUP_PASSPHRASE_FILE: passphraseFile }],
      ] as const) {
        const file = path.join(out, `${signal}.db`);
        const proc = Bun.spawn([process.execPath, MAIN, 'backup', file, '--data-dir', t.dataDir], {
          env: { PATH: process.env.PATH!, COFFER_CONFIG: '/dev/null', LOG_LEVEL: 'silent', ...env },
          stdout: 'pipe',
          stderr: 'pipe',
        });
        const partial = `${file}.partial-${proc.pid}`;
        await eventually(() => fs.existsSync(partial), { intervalMs: 5 });
        proc.kill(signal);
        const [code, stderr] = await Promise.all([proc.exited, new Response(proc.stderr).text()]);
        expect({ signal, code, stderr: stderr.trim() }).toEqual({
          signal,
          code: 1,
          stderr: `coffer: interrupted (${signal}): the unfinished snapshot was removed`,
        });
        expect(fs.readdirSync(out)).toEqual(['passphrase']);
      }
      const r = await runCli(['backup', path.join(out, 'after.db'), '--data-dir', t.dataDir], { timeoutMs: 60_000 });
      expect(r.code).toBe(0);
    } finally {
      await t.stop();
    }
  }, 120_000);

  test('a directory named as the backup, with or without --force, or as the archive to restore: one line, exit 1, nothing written', async () => {
    const t = await startTestServer();
    const out = tempDir('coffer-backup-');
    dirs.push(out);
    try {
      await seed.admin(t);
      const folder = path.join(out, 'backups');
      fs.mkdirSync(folder);
      for (const args of [[], ['--force'], ['--full'], ['--full', '--force']]) {
        const r = await runCli(['backup', folder, ...args, '--data-dir', t.dataDir]);
        expect({ args, code: r.code }).toEqual({ args, code: 1 });
        expect(r.stderr.trim()).toBe(
          `coffer: ${folder} is a directory: name the backup file inside it, e.g. ${path.join(folder, 'coffer-backup.tar')}`,
        );
        expect(fs.readdirSync(out)).toEqual(['backups']);
        expect(fs.readdirSync(folder)).toEqual([]);
      }
      const r = await runCli(['restore', folder, '--data-dir', path.join(out, 'restored')]);
      expect(r.code).toBe(1);
      expect(r.stderr.trim()).toBe(`coffer: ${folder} does not exist or is not a file`);
      expect(fs.readdirSync(out)).toEqual(['backups']);
    } finally {
      await t.stop();
    }
  });
});
