import { afterAll, describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { startTestServer, tempDir } from '../helpers/server.ts';
import * as seed from '../helpers/seed.ts';
import { createHash } from 'node:crypto';
import { Database } from 'bun:sqlite';
import { parseJson, runCli } from '../helpers/cli.ts';
import { downloaded, upload } from '../helpers/files.ts';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

describe('encrypted full backups (BACKUP_PASSPHRASE_FILE)', () => {
  test('nothing in the archive is readable without the passphrase; verify and restore read it with it', async () => {
    const t = await startTestServer();
    const out = tempDir('coffer-enc-backup-');
    dirs.push(out);
    try {
      const owner = await seed.owner(t);
      const name = `tax-return-${randomBytes(4).toString('hex')}.txt`;
      // Stored objects are already sealed by the master key; the plain parts are the database and secrets.json.
      const item = await upload(owner.client, name, `contents ${randomBytes(8).toString('hex')}`);
      const passFile = path.join(out, 'passphrase');
      fs.writeFileSync(passFile, 'correct horse battery staple\n', { mode: 0o600 });
      const env = { BACKUP_PASSPHRASE_FILE: passFile };
      const archive = path.join(out, 'enc.tar');
      let r = await runCli(['backup', '--full', archive, '--data-dir', t.dataDir], { env, timeoutMs: 120_000 });
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(r.stdout).toContain('encrypted');

      const bytes = fs.readFileSync(archive);
      const secrets = JSON.parse(fs.readFileSync(path.join(t.dataDir, 'secrets.json'), 'utf8'));
      const masterKey = Object.values(secrets).find((v) => typeof v === 'string' && v.length >= 32) as string;
      for (const needle of [
        name,
        owner.email,
        'SQLite format 3',
        'secrets.json',
        'coffer-backup.json',
        'coffer.db',
        'objects/',
        masterKey,
        'ustar',
      ]) {
        expect(bytes.includes(Buffer.from(needle))).toBe(false);
      }

      r = await runCli(['backup', 'verify', archive], { env, timeoutMs: 120_000 });
      expect(r.code).toBe(0);
      expect(r.stdout).toContain('sound (encrypted)');

      // Without the file, the passphrase is the first line of standard input.
      r = await runCli(['backup', 'verify', archive], { stdin: 'not the passphrase\n', timeoutMs: 60_000 });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('the passphrase is wrong');

      const damaged = path.join(out, 'damaged.tar');
      const copy = Buffer.from(bytes);
      copy[Math.floor(copy.length / 2)]! ^= 1;
      fs.writeFileSync(damaged, copy);
      r = await runCli(['backup', 'verify', damaged], { env, timeoutMs: 60_000 });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('damaged');

      const cut = path.join(out, 'cut.tar');
      fs.writeFileSync(cut, bytes.subarray(0, bytes.length - 100));
      r = await runCli(['backup', 'verify', cut], { env, timeoutMs: 60_000 });
      expect(r.code).toBe(1);

      r = await runCli(['backup', 'verify'], { env });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('./verify');

      const target = path.join(out, 'restored');
      r = await runCli(['restore', archive, '--data-dir', target], { stdin: 'correct horse battery staple\n', timeoutMs: 120_000 });
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      await t.stop();
      const restored = await startTestServer({ dataDir: target });
      try {
        const again = await seed.login(restored, owner.email);
        expect((await downloaded(again, item.id)).toString()).toContain('contents ');
      } finally {
        await restored.stop();
      }
    } finally {
      await t.stop();
    }
  }, 240_000);

  test('an unencrypted archive verifies too, and a backup named verify is written as ./verify', async () => {
    const t = await startTestServer();
    const out = tempDir('coffer-plain-backup-');
    dirs.push(out);
    try {
      await upload((await seed.owner(t)).client, 'a.txt', 'hello');
      let r = await runCli(['backup', '--full', './verify', '--data-dir', t.dataDir], { timeoutMs: 120_000, cwd: out });
      expect(r.code).toBe(0);
      expect(fs.existsSync(path.join(out, 'verify'))).toBe(true);
      r = await runCli(['backup', 'verify', path.join(out, 'verify')], { timeoutMs: 60_000 });
      expect(r.code).toBe(0);
      expect(r.stdout).toContain('sound');
      fs.writeFileSync(path.join(out, 'junk'), 'not an archive at all');
      r = await runCli(['backup', 'verify', path.join(out, 'junk')]);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('not usable');
    } finally {
      await t.stop();
    }
  }, 240_000);

  test('a database-only backup is encrypted too; backup decrypt gives back its database, checked against the manifest', async () => {
    const t = await startTestServer();
    const out = tempDir('coffer-enc-db-backup-');
    dirs.push(out);
    try {
      const owner = await seed.owner(t);
      const name = `medical-letter-${randomBytes(4).toString('hex')}.txt`;
      await upload(owner.client, name, 'hello');
      const passFile = path.join(out, 'passphrase');
      fs.writeFileSync(passFile, 'correct horse battery staple\n', { mode: 0o600 });
      const env = { BACKUP_PASSPHRASE_FILE: passFile };
      const file = path.join(out, 'coffer.db.enc');
      let r = await runCli(['backup', file, '--json', '--data-dir', t.dataDir], { env, timeoutMs: 120_000 });
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      const { manifest } = parseJson(r);
      expect(manifest.encrypted).toBe(true);
      const bytes = fs.readFileSync(file);
      for (const needle of [name, owner.email, 'SQLite format 3']) expect(bytes.includes(Buffer.from(needle))).toBe(false);
      expect(fs.statSync(file).mode & 0o777).toBe(0o600);

      const db = path.join(out, 'decrypted.db');
      r = await runCli(['backup', 'decrypt', file, '--out', db], { stdin: 'not the passphrase\n', timeoutMs: 60_000 });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('the passphrase is wrong');
      expect(fs.existsSync(db)).toBe(false);
      r = await runCli(['backup', 'decrypt', file, '--out', db], { env, timeoutMs: 60_000 });
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(r.stdout).toContain('it matches the manifest');
      expect(createHash('sha256').update(fs.readFileSync(db)).digest('hex')).toBe(manifest.database.sha256);
      expect(fs.statSync(db).mode & 0o777).toBe(0o600);
      const opened = new Database(db, { readonly: true });
      try {
        expect(opened.query('SELECT name FROM items WHERE name = ?').all(name)).toEqual([{ name }]);
      } finally {
        opened.close();
      }
      r = await runCli(['backup', 'decrypt', file, '--out', db], { env });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('already exists');
      r = await runCli(['backup', 'decrypt', db, '--out', path.join(out, 'again.db')], { env });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('is not encrypted');
    } finally {
      await t.stop();
    }
  }, 240_000);

  test('no passphrase given (no BACKUP_PASSPHRASE_FILE, nothing on standard input): restore, verify and decrypt say it is missing, not wrong', async () => {
    const t = await startTestServer();
    const out = tempDir('coffer-enc-db-backup-');
    dirs.push(out);
    try {
      await upload((await seed.owner(t)).client, 'a.txt', 'hello');
      const passFile = path.join(out, 'passphrase');
      fs.writeFileSync(passFile, 'correct horse battery staple\n', { mode: 0o600 });
      const env = { BACKUP_PASSPHRASE_FILE: passFile };
      const full = path.join(out, 'b.tar');
      const snapshot = path.join(out, 'coffer.db.enc');
      expect((await runCli(['backup', '--full', full, '--data-dir', t.dataDir], { env, timeoutMs: 120_000 })).code).toBe(0);
      expect((await runCli(['backup', snapshot, '--data-dir', t.dataDir], { env, timeoutMs: 120_000 })).code).toBe(0);
      for (const [args, stdin] of [
        [['restore', full, '--data-dir', path.join(out, 'restored')], undefined],
        [['restore', full, '--data-dir', path.join(out, 'restored')], '\n'],
        [['backup', 'verify', full], undefined],
        [['backup', 'decrypt', snapshot, '--out', path.join(out, 'plain.db')], undefined],
      ] as const) {
        const r = await runCli([...args], { stdin });
        expect({ args, code: r.code }).toEqual({ args, code: 1 });
        expect(r.stderr).toBe(
          'coffer: the backup is encrypted and no passphrase was given: set BACKUP_PASSPHRASE_FILE, or type it on a terminal or on the first line of standard input\n',
        );
      }
      expect(fs.existsSync(path.join(out, 'restored'))).toBe(false);
      expect(fs.existsSync(path.join(out, 'plain.db'))).toBe(false);
    } finally {
      await t.stop();
    }
  }, 240_000);

  test("backup decrypt refuses to write over the data directory's database or secrets.json, even with --force", async () => {
    const t = await startTestServer();
    const out = tempDir('coffer-enc-db-backup-');
    dirs.push(out);
    try {
      const owner = await seed.owner(t);
      await upload(owner.client, 'kept.txt', 'hello');
      const passFile = path.join(out, 'passphrase');
      fs.writeFileSync(passFile, 'correct horse battery staple\n', { mode: 0o600 });
      const env = { BACKUP_PASSPHRASE_FILE: passFile };
      const file = path.join(out, 'coffer.db.enc');
      expect((await runCli(['backup', file, '--data-dir', t.dataDir], { env, timeoutMs: 120_000 })).code).toBe(0);
      const secrets = fs.readFileSync(path.join(t.dataDir, 'secrets.json'));
      for (const name of ['secrets.json', 'coffer.db']) {
        const target = path.join(t.dataDir, name);
        const r = await runCli(['backup', 'decrypt', file, '--out', target, '--force', '--data-dir', t.dataDir], { env });
        expect({ name, code: r.code }).toEqual({ name, code: 1 });
        expect(r.stderr).toStartWith(`coffer: ${target} is one of the data directory's own files`);
      }
      expect(fs.readFileSync(path.join(t.dataDir, 'secrets.json'))).toEqual(secrets);
      expect((await runCli(['doctor', '--data-dir', t.dataDir])).code).toBe(0);
    } finally {
      await t.stop();
    }
  }, 240_000);

  test('backup decrypt given a full archive (a scheduled backup, encrypted or not) says to restore or verify it, exit 1, and writes nothing', async () => {
    const t = await startTestServer();
    const out = tempDir('coffer-enc-full-decrypt-');
    dirs.push(out);
    try {
      const passFile = path.join(out, 'passphrase');
      fs.writeFileSync(passFile, 'correct horse battery staple\n', { mode: 0o600 });
      const env = { BACKUP_PASSPHRASE_FILE: passFile };
      const encrypted = path.join(out, 'coffer-backup.tar.enc');
      const plain = path.join(out, 'coffer-backup.tar');
      expect((await runCli(['backup', '--full', encrypted, '--data-dir', t.dataDir], { env, timeoutMs: 120_000 })).code).toBe(0);
      expect((await runCli(['backup', '--full', plain, '--data-dir', t.dataDir])).code).toBe(0);
      for (const archive of [encrypted, plain]) {
        const db = path.join(out, 'decrypted.db');
        const r = await runCli(['backup', 'decrypt', archive, '--out', db], { env, timeoutMs: 60_000 });
        expect({ archive, code: r.code }).toEqual({ archive, code: 1 });
        expect(r.stderr.trim()).toBe(
          `coffer: ${archive} is a full backup, not a database snapshot: restore it with coffer restore ${archive} --data-dir <empty directory>, or check it with coffer backup verify ${archive}`,
        );
        expect(fs.readdirSync(out).sort()).toEqual(['coffer-backup.tar', 'coffer-backup.tar.enc', 'passphrase']);
      }
    } finally {
      await t.stop();
    }
  }, 240_000);

  test('backup decrypt given a file that is no backup says so, and given a plain database snapshot says to use it as it is; exit 1, nothing written', async () => {
    const t = await startTestServer();
    const out = tempDir('coffer-enc-plain-decrypt-');
    dirs.push(out);
    try {
      const plain = path.join(out, 'plain.db');
      expect((await runCli(['backup', plain, '--data-dir', t.dataDir])).code).toBe(0);
      const other = path.join(out, 'photo.jpg');
      fs.writeFileSync(other, Buffer.alloc(4096, 'not a backup '));
      const db = path.join(out, 'decrypted.db');
      let r = await runCli(['backup', 'decrypt', other, '--out', db]);
      expect(r.code).toBe(1);
      expect(r.stderr.trim()).toBe(`coffer: ${other} is not a Coffer backup: neither an encrypted backup nor a database`);
      r = await runCli(['backup', 'decrypt', plain, '--out', db]);
      expect(r.code).toBe(1);
      expect(r.stderr.trim()).toBe(`coffer: ${plain} is not encrypted: it is the database itself, use it as it is`);
      expect(fs.existsSync(db)).toBe(false);
    } finally {
      await t.stop();
    }
  });
});
