import { afterAll, describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import { tempDir } from '../helpers/server.ts';
import { parseJson, runCli, serveCli } from '../helpers/cli.ts';
import { TestClient, json } from '../helpers/client.ts';
import { upload } from '../helpers/files.ts';
import { skipWithout } from '../helpers/prerequisites.ts';

const NOBODY = 65534;
const notRoot = skipWithout(
  process.getuid?.() === 0 ? null : 'they need root, to hand a data directory to another user',
  'the data-dir-owner tests',
);

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

function chownTree(dir: string, uid: number): void {
  fs.chownSync(dir, uid, uid);
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) chownTree(p, uid);
    else fs.chownSync(p, uid, uid);
  }
}

/** A served data directory, then handed to `nobody` as install.sh hands one to the coffer user. */
async function dataDirOwnedByNobody(): Promise<string> {
  const d = tempDir('coffer-owner-');
  dirs.push(d);
  fs.chmodSync(d, 0o755);
  const dataDir = path.join(d, 'data');
  const r = await runCli(['init', '--data-dir', dataDir]);
  expect(r.code).toBe(0);
  chownTree(dataDir, NOBODY);
  return dataDir;
}

describe.skipIf(notRoot)('commands run as a user other than the data directory owner', () => {
  test('every command that opens the directory refuses, names the owner and the command to run instead, and writes nothing', async () => {
    const dataDir = await dataDirOwnedByNobody();
    const secrets = path.join(dataDir, 'secrets.json');
    const before = fs.readFileSync(secrets, 'utf8');
    const entries = fs.readdirSync(dataDir).sort();
    for (const args of [
      ['keys', 'rotate'],
      ['users', 'list'],
      ['migrate'],
      ['serve', '--port', '0'],
      ['settings', 'set', 'signupEnabled', 'true'],
      ['init'],
    ]) {
      const r = await runCli([...args, '--data-dir', dataDir]);
      expect(r.code).toBe(1);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toContain(`belongs to user nobody but this command runs as root`);
      expect(r.stderr).toContain(`sudo -u nobody coffer ${[...args, '--data-dir', dataDir].join(' ')}`);
    }
    expect(fs.readFileSync(secrets, 'utf8')).toBe(before);
    expect(fs.statSync(secrets).uid).toBe(NOBODY);
    expect(fs.readdirSync(dataDir).sort()).toEqual(entries);
  });

  test('a database file its user cannot open (left owned by root): one line naming it and what must be readable, exit 1', async () => {
    const dataDir = await dataDirOwnedByNobody();
    const db = path.join(dataDir, 'coffer.db');
    fs.chownSync(db, 0, 0);
    for (const args of [
      ['users', 'list'],
      ['serve', '--port', '0', '--host', '127.0.0.1'],
    ]) {
      const r = await runCli([...args, '--data-dir', dataDir], { asUser: NOBODY });
      expect({ args, code: r.code }).toEqual({ args, code: 1 });
      expect(r.stderr.trim()).toBe(
        `coffer: cannot open the database ${db} (EACCES): it, its -wal and -shm files and its directory must be readable and writable by the user running Coffer`,
      );
    }
  });

  test('a secrets file the server cannot read is logged at error, and fixing its owner is picked up without a restart', async () => {
    const dataDir = await dataDirOwnedByNobody();
    const server = await serveCli(['--port', '0', '--host', '127.0.0.1', '--data-dir', dataDir], { asUser: NOBODY });
    const stderr = new Response(server.proc.stderr).text();
    try {
      const client = new TestClient(server.url);
      expect((await client.post('/api/signup', { email: 'a@example.test', password: 'correct horse battery', name: 'A' })).status).toBe(
        200,
      );
      await upload(client, 'before.txt', 'before');
      // What `coffer keys rotate` as root used to do: a new current key, in a file only root can read.
      const secrets = path.join(dataDir, 'secrets.json');
      const file = JSON.parse(fs.readFileSync(secrets, 'utf8'));
      const fresh = Buffer.alloc(32, 7).toString('base64');
      fs.writeFileSync(secrets, JSON.stringify({ ...file, masterKey: fresh, previousMasterKeys: [file.masterKey] }));
      fs.chownSync(secrets, 0, 0);
      fs.chmodSync(secrets, 0o600);
      await upload(client, 'during.txt', 'during');
      fs.chownSync(secrets, NOBODY, NOBODY);
      await upload(client, 'after.txt', 'after');
      const listing = await json(await client.get('/api/files'));
      expect(listing).toHaveLength(3);
      for (const f of listing) {
        const res = await client.get(`/api/files/${f.id}/download`);
        expect(res.status).toBe(200);
      }
      await server.stop();
      const errors = (await stderr).split('\n').filter((l) => l.includes('cannot reload the secrets file'));
      expect(errors).toHaveLength(1);
      expect(JSON.parse(errors[0]!)).toMatchObject({ level: 'error', file: secrets });
      const status = await runCli(['keys', 'status', '--json', '--data-dir', dataDir], {});
      // Run as root against nobody's directory: refused, so read the key ids as nobody instead.
      expect(status.code).toBe(1);
      const keys = parseJson(await runCli(['keys', 'status', '--json', '--data-dir', dataDir], { asUser: NOBODY }));
      // The file uploaded after the fix is wrapped under the new key; the two before it under the old one.
      expect(Object.values(keys.items).sort()).toEqual([1, 2]);
      expect(keys.items[keys.currentKeyId]).toBe(1);
    } finally {
      await server.stop();
    }
  });

  test('serve refuses to start when files are wrapped by a master key that secrets.json no longer holds', async () => {
    const d = tempDir('coffer-owner-');
    dirs.push(d);
    const dataDir = path.join(d, 'data');
    expect((await runCli(['init', '--data-dir', dataDir])).code).toBe(0);
    const server = await serveCli(['--port', '0', '--host', '127.0.0.1', '--data-dir', dataDir]);
    const client = new TestClient(server.url);
    await client.post('/api/signup', { email: 'a@example.test', password: 'correct horse battery', name: 'A' });
    await upload(client, 'a.txt', 'a');
    await server.stop();
    const secrets = path.join(dataDir, 'secrets.json');
    const file = JSON.parse(fs.readFileSync(secrets, 'utf8'));
    fs.writeFileSync(secrets, JSON.stringify({ ...file, masterKey: Buffer.alloc(32, 9).toString('base64') }));
    const r = await runCli(['serve', '--port', '0', '--host', '127.0.0.1', '--data-dir', dataDir]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /files are wrapped by master key\(s\) missing from .*secrets\.json: [0-9a-f]{16} \(1 file\(s\)\); restore secrets\.json/,
    );
  });
});

describe.skipIf(notRoot)('a place the command may not write or read', () => {
  test('backup, full backup, restore, verify and export name the path in one line, exit 1, no stack', async () => {
    const dataDir = await dataDirOwnedByNobody();
    const archive = path.join(dataDir, 'b.tar');
    expect((await runCli(['backup', '--full', archive, '--data-dir', dataDir], { asUser: NOBODY })).code).toBe(0);
    // Root's now, 0600: nobody may not read it.
    fs.chownSync(archive, 0, 0);
    fs.chmodSync(archive, 0o600);
    // Owned by root, 0755: nobody may not write in it.
    const closed = path.join(path.dirname(dataDir), 'closed');
    fs.mkdirSync(closed, { mode: 0o755 });
    for (const [args, named] of [
      [['backup', path.join(closed, 'x.db'), '--data-dir', dataDir], `permission denied: ${closed}`],
      [['backup', '--full', path.join(closed, 'x.tar'), '--data-dir', dataDir], `permission denied: ${closed}`],
      // The export says it of its target folder, as it does for a full one.
      [['export', '--to', path.join(closed, 'out'), '--data-dir', dataDir], `could not write into ${path.join(closed, 'out')}: EACCES`],
      [['restore', archive, '--data-dir', path.join(closed, 'restored')], `permission denied: ${path.join(closed, 'restored')}`],
      [['backup', 'verify', archive], `permission denied: ${archive}`],
    ] as const) {
      const r = await runCli([...args], { asUser: NOBODY });
      expect({ args, code: r.code }).toEqual({ args, code: 1 });
      expect(r.stderr).toStartWith(`coffer: ${named}`);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
    }
    expect(fs.readdirSync(closed)).toEqual([]);
  });
});
