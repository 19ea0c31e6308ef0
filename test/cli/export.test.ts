import { afterAll, describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { startTestServer, tempDir } from '../helpers/server.ts';
import * as seed from '../helpers/seed.ts';
import { MAIN, parseJson, runCli } from '../helpers/cli.ts';
import { folder, upload } from '../helpers/files.ts';
import { storeFile } from '../helpers/stored-files.ts';
import { eventually } from '../helpers/eventually.ts';
import { mountSmallDisk } from '../helpers/small-disk.ts';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

describe('coffer export', () => {
  test("every account's files as a plain tree with Coffer's times; trash on request; a second run resumes", async () => {
    const t = await startTestServer();
    const out = tempDir('coffer-export-');
    dirs.push(out);
    try {
      const alice = await seed.owner(t);
      const bob = await seed.owner(t);
      const docs = await folder(alice.client, 'Docs');
      const deep = await folder(alice.client, 'Ünïcode 日本', docs.id);
      await folder(alice.client, 'Empty');
      const big = randomBytes(300_000);
      const when = '2024-03-05T06:07:08.000Z';
      await upload(alice.client, 'report.pdf', big, { parentId: deep.id, lastModified: String(Date.parse(when)) });
      await upload(alice.client, 'notes.txt', 'top level');
      const gone = await upload(alice.client, 'old.txt', 'trashed contents', { parentId: docs.id });
      expect((await alice.client.post('/api/files/delete', { ids: [gone.id] })).status).toBe(200);
      const bobFile = await upload(bob.client, 'bob.txt', "bob's file");

      // The server keeps running: export reads beside it.
      let r = await runCli(['export', '--to', out, '--data-dir', t.dataDir, '--json'], { timeoutMs: 60_000 });
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(parseJson(r).written).toBe(3);
      const a = path.join(out, alice.email);
      const report = path.join(a, 'Docs', 'Ünïcode 日本', 'report.pdf');
      expect(fs.readFileSync(report)).toEqual(big);
      expect(fs.statSync(report).mtime.toISOString()).toBe(when);
      expect(fs.readFileSync(path.join(a, 'notes.txt'), 'utf8')).toBe('top level');
      expect(fs.statSync(path.join(a, 'Empty')).isDirectory()).toBe(true);
      expect(fs.existsSync(path.join(a, '.trash'))).toBe(false);
      expect(fs.existsSync(path.join(a, 'Docs', 'old.txt'))).toBe(false);
      expect(fs.readFileSync(path.join(out, bob.email, 'bob.txt'), 'utf8')).toBe("bob's file");

      // Resume: a finished file is not rewritten, a missing one and a cut-short one are redone.
      const notes = path.join(a, 'notes.txt');
      const before = fs.statSync(report);
      fs.rmSync(notes);
      fs.writeFileSync(path.join(out, bob.email, 'bob.txt'), "bob's");
      r = await runCli(['export', '--to', out, '--data-dir', t.dataDir, '--include-trash', '--json'], { timeoutMs: 60_000 });
      expect(r.code).toBe(0);
      const second = parseJson(r);
      expect(second.unchanged).toBe(1);
      expect(second.written).toBe(3);
      const after = fs.statSync(report);
      expect(after.ino).toBe(before.ino);
      expect(after.ctimeMs).toBe(before.ctimeMs);
      expect(after.mtimeMs).toBe(before.mtimeMs);
      expect(fs.readFileSync(notes, 'utf8')).toBe('top level');
      expect(fs.readFileSync(path.join(out, bob.email, 'bob.txt'), 'utf8')).toBe("bob's file");
      expect(fs.readFileSync(path.join(a, '.trash', 'Docs', 'old.txt'), 'utf8')).toBe('trashed contents');
      expect(fs.readdirSync(a, { recursive: true }).some((n) => String(n).endsWith('.coffer-partial'))).toBe(false);

      // Versions: each earlier content beside its file, named and dated by when it was written.
      const form = new FormData();
      form.append('file', new File(['second contents'], 'ignored.txt'));
      expect((await bob.client.request(`/api/files/${bobFile.id}/replace`, { method: 'POST', body: form })).status).toBe(200);
      const versioned = path.join(out, 'versions');
      r = await runCli(['export', '--to', versioned, '--user', bob.email, '--include-versions', '--data-dir', t.dataDir, '--json']);
      expect(r.code).toBe(0);
      expect(parseJson(r).versions).toBe(1);
      const bobDir = path.join(versioned, bob.email);
      expect(fs.readFileSync(path.join(bobDir, 'bob.txt'), 'utf8')).toBe('second contents');
      const [earlier, ...more] = fs.readdirSync(path.join(bobDir, 'bob.txt.versions'));
      expect(more).toEqual([]);
      expect(earlier).toMatch(/^\d{8}T\d{6}Z-bob\.txt$/);
      expect(fs.readFileSync(path.join(bobDir, 'bob.txt.versions', earlier!), 'utf8')).toBe("bob's file");

      const only = path.join(out, 'only-bob');
      r = await runCli(['export', '--to', only, '--user', bob.email.toUpperCase(), '--data-dir', t.dataDir]);
      expect(r.code).toBe(0);
      expect(fs.readdirSync(only)).toEqual([bob.email]);
      r = await runCli(['export', '--to', only, '--user', 'nobody@example.test', '--data-dir', t.dataDir]);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('no account has the email nobody@example.test');
    } finally {
      await t.stop();
    }
  }, 120_000);

  test('names longer than the file system allows in bytes (255): each is exported under a shortened name, none is lost', async () => {
    const t = await startTestServer();
    const out = tempDir('coffer-export-');
    dirs.push(out);
    try {
      const owner = await seed.owner(t);
      // 85 three-byte characters: 255 bytes, the most a Linux name may hold; 100 of them (300 bytes) is more.
      const fits = `${'日'.repeat(81)}.txt`;
      const long = `${'本'.repeat(96)}.txt`;
      const dir = await folder(owner.client, '語'.repeat(100));
      const first = await upload(owner.client, fits, 'fits exactly', { parentId: dir.id });
      await upload(owner.client, long, 'too long');
      const form = new FormData();
      form.append('file', new File(['newer'], 'x.txt'));
      expect((await owner.client.request(`/api/files/${first.id}/replace`, { method: 'POST', body: form })).status).toBe(200);

      const r = await runCli(['export', '--to', out, '--data-dir', t.dataDir, '--include-versions', '--json'], { timeoutMs: 60_000 });
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(parseJson(r)).toMatchObject({ written: 2, versions: 1, failed: [] });
      const a = path.join(out, owner.email);
      const names = fs.readdirSync(a, { recursive: true }).map(String);
      for (const name of names) for (const part of name.split(path.sep)) expect(Buffer.byteLength(part)).toBeLessThanOrEqual(255);
      const [shortDir] = fs.readdirSync(a).filter((n) => n.startsWith('語'));
      expect(fs.readFileSync(path.join(a, shortDir!, fits), 'utf8')).toBe('newer');
      const [shortFile] = fs.readdirSync(a).filter((n) => n.startsWith('本'));
      expect(shortFile).toEndWith('.txt');
      expect(fs.readFileSync(path.join(a, shortFile!), 'utf8')).toBe('too long');
      expect(names.filter((n) => n.includes('.versions'))).toHaveLength(2);

      // A second run finds them all where the first put them.
      const again = await runCli(['export', '--to', out, '--data-dir', t.dataDir, '--json'], { timeoutMs: 60_000 });
      expect(again.code).toBe(0);
      expect(parseJson(again)).toMatchObject({ written: 0, unchanged: 2, failed: [] });
    } finally {
      await t.stop();
    }
  }, 120_000);

  test('a folder of the account named .trash: the trash is exported beside it, no file of one overwrites a file of the other', async () => {
    const t = await startTestServer();
    const out = tempDir('coffer-export-');
    dirs.push(out);
    try {
      const owner = await seed.owner(t);
      const own = await folder(owner.client, '.trash');
      await upload(owner.client, 'notes.txt', 'kept in my .trash folder', { parentId: own.id });
      const gone = await upload(owner.client, 'notes.txt', 'trashed');
      expect((await owner.client.post('/api/files/delete', { ids: [gone.id] })).status).toBe(200);

      for (let run = 0; run < 2; run++) {
        const r = await runCli(['export', '--to', out, '--data-dir', t.dataDir, '--include-trash', '--json'], { timeoutMs: 60_000 });
        expect(r.code).toBe(0);
        expect(parseJson(r)).toMatchObject(run === 0 ? { written: 2, failed: [] } : { written: 0, unchanged: 2 });
        const a = path.join(out, owner.email);
        expect(fs.readFileSync(path.join(a, '.trash', 'notes.txt'), 'utf8')).toBe('kept in my .trash folder');
        expect(fs.readFileSync(path.join(a, '.trash (2)', 'notes.txt'), 'utf8')).toBe('trashed');
      }
    } finally {
      await t.stop();
    }
  }, 120_000);

  test('a target inside the data directory (itself, a folder in it, or a link into it) is refused with one line, nothing written', async () => {
    const t = await startTestServer();
    const out = tempDir('coffer-export-');
    dirs.push(out);
    try {
      const owner = await seed.owner(t);
      await upload(owner.client, 'a.txt', 'a');
      const before = fs.readdirSync(t.dataDir).sort();
      const link = path.join(out, 'into-data');
      fs.symlinkSync(t.dataDir, link);
      for (const [to, shown] of [
        [t.dataDir, t.dataDir],
        [path.join(t.dataDir, 'export'), path.join(t.dataDir, 'export')],
        [path.join(t.dataDir, 'blobs', 'x'), path.join(t.dataDir, 'blobs', 'x')],
        [path.join(link, 'export'), path.join(link, 'export')],
      ]) {
        const r = await runCli(['export', '--to', to!, '--data-dir', t.dataDir]);
        expect({ to, code: r.code, stderr: r.stderr }).toEqual({
          to,
          code: 1,
          stderr: `coffer: ${shown} is inside the data directory ${t.dataDir}: export to a folder outside it\n`,
        });
      }
      expect(fs.readdirSync(t.dataDir).sort()).toEqual(before);
      // Beside the data directory is fine.
      const r = await runCli(['export', '--to', path.join(out, 'tree'), '--data-dir', t.dataDir]);
      expect(r.code).toBe(0);
      expect(fs.readFileSync(path.join(out, 'tree', owner.email, 'a.txt'), 'utf8')).toBe('a');
    } finally {
      await t.stop();
    }
  });

  test('a target that is full or cannot be written: the export stops at once with one line saying what to fix (exit 1), no temporary file left', async () => {
    const t = await startTestServer();
    const out = tempDir('coffer-export-');
    dirs.push(out);
    try {
      const owner = await seed.owner(t);
      for (let i = 0; i < 3; i++) await upload(owner.client, `big-${i}.bin`, randomBytes(700_000));
      fs.writeFileSync(path.join(out, 'a-file'), 'x');
      const below = path.join(out, 'a-file', 'export');
      let r = await runCli(['export', '--to', below, '--data-dir', t.dataDir]);
      expect({ code: r.code, stderr: r.stderr.trim() }).toEqual({
        code: 1,
        stderr: expect.stringMatching(/^coffer: could not write into .*a-file\/export: ENOTDIR.*run the same export again to finish it$/),
      });

      const disk = mountSmallDisk(1);
      if (typeof disk === 'string') return console.warn(`skipped the full disk: ${disk}`);
      try {
        r = await runCli(['export', '--to', disk.dir, '--data-dir', t.dataDir]);
        expect({ code: r.code, stderr: r.stderr.trim() }).toEqual({
          code: 1,
          stderr: `coffer: could not write into ${disk.dir}: it is full; fix that, then run the same export again to finish it`,
        });
        expect(fs.readdirSync(disk.dir, { recursive: true }).filter((n) => String(n).endsWith('.coffer-partial'))).toEqual([]);
      } finally {
        disk.unmount();
      }
    } finally {
      await t.stop();
    }
  }, 120_000);

  test('Ctrl-C or SIGTERM during an export: one line, exit 1, no cut-short file left under a temporary name, and the same export finishes it', async () => {
    const t = await startTestServer();
    const out = tempDir('coffer-export-');
    dirs.push(out);
    try {
      const owner = await seed.owner(t);
      const stored = [];
      for (let i = 0; i < 2; i++) stored.push(await storeFile(t.server.ctx, owner.id, { size: 32 * 1024 * 1024, name: `big-${i}.bin` }));
      const partials = () => fs.readdirSync(out, { recursive: true }).filter((n) => String(n).endsWith('.coffer-partial'));
      for (const signal of ['SIGINT', 'SIGTERM'] as const) {
        const proc = Bun.spawn([process.execPath, MAIN, 'export', '--to', out, '--data-dir', t.dataDir], {
          env: { PATH: process.env.PATH!, COFFER_CONFIG: '/dev/null', LOG_LEVEL: 'silent' },
          stdout: 'pipe',
          stderr: 'pipe',
        });
        // A file is being written under its temporary name.
        await eventually(() => expect(partials().length).toBe(1), { intervalMs: 5 });
        proc.kill(signal);
        const [code, stderr] = await Promise.all([proc.exited, new Response(proc.stderr).text()]);
        expect({ signal, code, stderr: stderr.trim() }).toEqual({
          signal,
          code: 1,
          stderr: `coffer: interrupted (${signal}): the files written so far are whole; run the same export again to finish it`,
        });
        expect(partials()).toEqual([]);
        fs.rmSync(out, { recursive: true, force: true });
      }
      const r = await runCli(['export', '--to', out, '--data-dir', t.dataDir], { timeoutMs: 60_000 });
      expect(r.code).toBe(0);
      for (const f of stored) expect(fs.readFileSync(path.join(out, owner.email, f.name)).equals(f.content)).toBe(true);
    } finally {
      await t.stop();
    }
  }, 120_000);
});
