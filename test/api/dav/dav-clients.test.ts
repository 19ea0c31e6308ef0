import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { davLogin } from '../../helpers/dav.ts';
import { startTestServer, tempDir, type TestServer } from '../../helpers/server.ts';
import { downloaded, folder, listAll, upload } from '../../helpers/files.ts';
import * as seed from '../../helpers/seed.ts';
import { skipWithout } from '../../helpers/prerequisites.ts';

// Real clients from Debian (`apt-get install litmus rclone`); without them these tests say why they are skipped.
const LITMUS = Bun.which('litmus');
const RCLONE = Bun.which('rclone');
const NO_LITMUS = skipWithout(
  LITMUS ? null : 'the `litmus` command is not installed (apt-get install litmus)',
  'the litmus WebDAV compliance test',
);
const NO_RCLONE = skipWithout(RCLONE ? null : 'the `rclone` command is not installed (apt-get install rclone)', 'the rclone WebDAV tests');

let t: TestServer;
let dir: string;

beforeAll(async () => {
  t = await startTestServer({ startWorker: false });
  await seed.admin(t);
  dir = tempDir('coffer-dav-clients-');
});
afterAll(async () => {
  await t.stop();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function run(cmd: string[], env: Record<string, string> = {}): Promise<{ code: number; out: string; stdout: string }> {
  const proc = Bun.spawn(cmd, { env: { ...process.env, ...env }, stdout: 'pipe', stderr: 'pipe', cwd: dir });
  const [out, err] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  return { code: await proc.exited, out: out + err, stdout: out };
}

describe('litmus, the WebDAV compliance suite', () => {
  test.skipIf(NO_LITMUS)(
    'basic, copymove, props, locks and http: every test passes, with no warning',
    async () => {
      const o = await seed.owner(t);
      const dav = await davLogin(t, o, 'litmus');
      const { out } = await run([LITMUS!, '-k', `${t.url}/dav/`, o.email, dav.password], { TESTS: 'basic copymove props locks http' });
      const summaries = [...out.matchAll(/summary for `(\w+)': of (\d+) tests run: (\d+) passed, (\d+) failed/g)].map((m) => ({
        suite: m[1],
        run: Number(m[2]),
        failed: Number(m[4]),
      }));
      expect(summaries.map((s) => s.suite)).toEqual(['basic', 'copymove', 'props', 'locks', 'http']);
      for (const s of summaries)
        expect({ suite: s.suite, failed: s.failed, output: s.failed ? out : '' }).toEqual({ suite: s.suite, failed: 0, output: '' });
      expect(summaries.reduce((n, s) => n + s.run, 0)).toBeGreaterThanOrEqual(100);
      expect(out).not.toContain('WARNING');
    },
    120_000,
  );
});

/** A tree of `count` files in nested folders with Unicode names, 0 bytes to 20 MiB. */
function makeTree(root: string, count: number): void {
  const sizes = [0, 1, 100, 4096, 65_537, 1024 * 1024 + 3, 20 * 1024 * 1024];
  const folders = ['', 'docs', 'docs/été', 'docs/été/深い', 'photos', 'photos/2026 — März', 'empty-ish/ünïcödé ✓'];
  for (let i = 0; i < count; i++) {
    const folder = folders[i % folders.length]!;
    // Large files are few: the tree stays around 30 MiB.
    const size = i < sizes.length ? sizes[i]! : (i * 7919) % 20_000;
    const names = [`file ${i}.txt`, `naïve-${i}.bin`, `日本語 ${i}.dat`, `emoji 🎉 ${i}.md`];
    const target = path.join(root, folder, names[i % names.length]!);
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.writeFileSync(target, randomBytes(size));
  }
}

/** Relative path → SHA-256 of every file below `root`. */
function digests(root: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const entry of fs.readdirSync(root, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const full = path.join(entry.parentPath, entry.name);
    out.set(path.relative(root, full).normalize('NFC'), createHash('sha256').update(fs.readFileSync(full)).digest('hex'));
  }
  return out;
}

/** rclone's environment for a remote `coffer:` that is the login's WebDAV root, with a new app password. */
async function rcloneEnv(o: seed.SeededLogin): Promise<Record<string, string>> {
  const dav = await davLogin(t, o, 'rclone');
  const obscured = (await run([RCLONE!, 'obscure', dav.password])).out.trim();
  return {
    RCLONE_CONFIG_COFFER_TYPE: 'webdav',
    RCLONE_CONFIG_COFFER_URL: `${t.url}/dav/`,
    // The owncloud vendor sends modification times (X-OC-Mtime), which Coffer keeps.
    RCLONE_CONFIG_COFFER_VENDOR: 'owncloud',
    RCLONE_CONFIG_COFFER_USER: o.email,
    RCLONE_CONFIG_COFFER_PASS: obscured,
    RCLONE_CONFIG: path.join(dir, 'none.conf'),
  };
}

describe('rclone with the webdav backend', () => {
  let env: Record<string, string>;
  let ownerId = '';

  beforeAll(async () => {
    if (!RCLONE) return;
    const o = await seed.owner(t);
    ownerId = o.id;
    env = await rcloneEnv(o);
  });

  test.skipIf(NO_RCLONE)(
    'an own folder named Shared with me is synced as "Shared with me (1)" beside what others share, both ways',
    async () => {
      const o = await seed.owner(t);
      const other = await seed.owner(t);
      const own = await folder(o.client, 'Shared with me');
      await upload(o.client, 'mine.txt', 'my own', { parentId: own.id });
      const theirs = await folder(other.client, 'Holiday');
      await upload(other.client, 'beach.txt', 'sand', { parentId: theirs.id });
      expect((await other.client.post(`/api/files/${theirs.id}/members`, { email: o.email, role: 'viewer' })).status).toBe(201);
      const ownEnv = await rcloneEnv(o);
      const down = path.join(dir, 'namesake');
      expect(await run([RCLONE!, 'copy', 'coffer:', down], ownEnv)).toMatchObject({ code: 0 });
      expect(fs.readFileSync(path.join(down, 'Shared with me (1)', 'mine.txt'), 'utf8')).toBe('my own');
      expect(fs.readFileSync(path.join(down, 'Shared with me', 'Holiday', 'beach.txt'), 'utf8')).toBe('sand');
      fs.writeFileSync(path.join(down, 'Shared with me (1)', 'added.txt'), 'added by rclone');
      expect(await run([RCLONE!, 'copy', path.join(down, 'Shared with me (1)'), 'coffer:Shared with me (1)'], ownEnv)).toMatchObject({
        code: 0,
      });
      const added = (await listAll(o.client, `/api/files?parentId=${own.id}`)).find((i) => i.name === 'added.txt');
      expect((await downloaded(o.client, added.id)).toString()).toBe('added by rclone');
    },
    120_000,
  );

  test.skipIf(NO_RCLONE)(
    'copy of 300 files (nested folders, Unicode names, 0 bytes to 20 MiB) up and back down is byte-exact',
    async () => {
      const up = path.join(dir, 'up');
      makeTree(up, 300);
      const pushed = await run([RCLONE!, 'copy', up, 'coffer:tree', '--transfers', '4'], env);
      expect(pushed).toMatchObject({ code: 0 });
      const down = path.join(dir, 'down');
      const pulled = await run([RCLONE!, 'copy', 'coffer:tree', down, '--transfers', '4'], env);
      expect(pulled).toMatchObject({ code: 0 });
      const sent = digests(up);
      expect(sent.size).toBe(300);
      expect(digests(down)).toEqual(sent);
      expect(t.server.ctx.services.quota.usage(ownerId).used).toBe(
        [...fs.readdirSync(up, { recursive: true, withFileTypes: true })]
          .filter((e) => e.isFile())
          .reduce((n, e) => n + fs.statSync(path.join(e.parentPath, e.name)).size, 0),
      );
    },
    180_000,
  );

  test.skipIf(NO_RCLONE)(
    'sync after edits transfers only the changed files (modification times and sizes honoured) and trashes what was removed',
    async () => {
      const up = path.join(dir, 'up');
      const files = [...digests(up).keys()].sort();
      const uploadsBefore = countUploads();
      // Nothing changed: nothing is sent.
      expect(await run([RCLONE!, 'sync', up, 'coffer:tree'], env)).toMatchObject({ code: 0 });
      expect(countUploads()).toBe(uploadsBefore);

      const sameSize = path.join(up, files[10]!);
      const size = fs.statSync(sameSize).size;
      fs.writeFileSync(sameSize, randomBytes(size));
      fs.utimesSync(sameSize, new Date(), new Date(Date.now() + 5000));
      fs.appendFileSync(path.join(up, files[20]!), 'grown');
      fs.writeFileSync(path.join(up, 'docs', 'brand new.txt'), 'new');
      fs.rmSync(path.join(up, files[30]!));
      expect(await run([RCLONE!, 'sync', up, 'coffer:tree'], env)).toMatchObject({ code: 0 });
      expect(countUploads() - uploadsBefore).toBe(3);
      const down = path.join(dir, 'down-after-sync');
      expect(await run([RCLONE!, 'copy', 'coffer:tree', down], env)).toMatchObject({ code: 0 });
      expect(digests(down)).toEqual(digests(up));
      const trashed = t.server.ctx.db.$client
        .query<{ name: string }, [string]>('SELECT name FROM items WHERE account_id = ? AND deleted_root_id = id')
        .all(ownerId);
      expect(trashed.map((r) => r.name)).toEqual([path.basename(files[30]!)]);
    },
    120_000,
  );

  test.skipIf(NO_RCLONE)(
    'files dated at the epoch or before 1970 keep their modification time, so a second sync sends nothing',
    async () => {
      const o = await seed.owner(t);
      const oldEnv = await rcloneEnv(o);
      const local = path.join(dir, 'old-times');
      fs.mkdirSync(local, { recursive: true });
      const times = {
        'epoch.txt': 0,
        'moon landing.txt': Date.parse('1969-07-20T20:17:40Z'),
        'recent.txt': Date.parse('2021-03-04T05:06:07Z'),
      };
      for (const [name, ms] of Object.entries(times)) {
        fs.writeFileSync(path.join(local, name), name);
        fs.utimesSync(path.join(local, name), new Date(ms), new Date(ms));
      }
      expect(await run([RCLONE!, 'sync', local, 'coffer:old'], oldEnv)).toMatchObject({ code: 0 });
      const listed = await run([RCLONE!, 'lsjson', 'coffer:old'], oldEnv);
      expect(
        Object.fromEntries(JSON.parse(listed.stdout).map((e: { Name: string; ModTime: string }) => [e.Name, Date.parse(e.ModTime)])),
      ).toEqual(times);
      const again = await run([RCLONE!, 'sync', '-v', local, 'coffer:old'], oldEnv);
      expect(again.code).toBe(0);
      // Each one sent again would also have kept its content before as a version.
      expect(again.out).not.toContain('Copied');
    },
    60_000,
  );

  function countUploads(): number {
    t.server.ctx.services.audit.flush();
    return t.server.ctx.services.audit.list({ action: 'file.upload', limit: 100_000 }).filter((e) => e.accountId === ownerId).length;
  }
});
