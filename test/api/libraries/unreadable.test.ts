import { afterAll, describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import { parseJson, runCli, serveCli } from '../../helpers/cli.ts';
import { json, TestClient } from '../../helpers/client.ts';
import { eventually } from '../../helpers/eventually.ts';
import { listAll } from '../../helpers/files.ts';
import { png } from '../../helpers/images.ts';
import { tempDir } from '../../helpers/server.ts';

// Root reads a file whatever its mode: the server runs as nobody then (as a non-root user, as that user).
const NOBODY = 65534;
const asUser = process.getuid?.() === 0 ? NOBODY : undefined;
const owner = process.getuid?.() ?? NOBODY;
const runAs = asUser ?? owner;

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) {
    openUp(d);
    fs.rmSync(d, { recursive: true, force: true });
  }
});

/** Gives back the modes a test took away, so the tree can be removed (a folder of mode 000 cannot be listed). */
function openUp(dir: string): void {
  fs.chmodSync(dir, 0o700);
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) if (entry.isDirectory()) openUp(path.join(dir, entry.name));
}

function ownedDir(prefix: string): string {
  const d = tempDir(prefix);
  dirs.push(d);
  fs.chmodSync(d, 0o755);
  return d;
}

function chownTree(dir: string): void {
  fs.chownSync(dir, runAs, runAs);
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) chownTree(p);
    else fs.chownSync(p, runAs, runAs);
  }
}

describe('files the service user cannot read', () => {
  test('are listed unavailable, never stop a scan, answer downloads with 409, have no thumbnail and no words in search; nothing answers 500', async () => {
    const dataDir = path.join(ownedDir('coffer-unreadable-data-'), 'data');
    expect((await runCli(['init', '--data-dir', dataDir])).code).toBe(0);
    chownTree(dataDir);
    expect((await runCli(['settings', 'set', 'contentSearch', 'true', '--data-dir', dataDir], { asUser })).code).toBe(0);

    const root = ownedDir('coffer-unreadable-library-');
    fs.writeFileSync(path.join(root, 'open.txt'), 'a pelican in the open');
    fs.writeFileSync(path.join(root, 'secret.txt'), 'a pelican in secret');
    fs.writeFileSync(path.join(root, 'open.png'), await png(64, 48));
    fs.writeFileSync(path.join(root, 'secret.png'), await png(64, 48));
    fs.mkdirSync(path.join(root, 'locked'));
    fs.writeFileSync(path.join(root, 'locked', 'inside.txt'), 'a pelican locked in');
    chownTree(root);
    fs.chmodSync(path.join(root, 'secret.txt'), 0);
    fs.chmodSync(path.join(root, 'secret.png'), 0);
    fs.chmodSync(path.join(root, 'locked'), 0);

    const server = await serveCli(['--port', '0', '--host', '127.0.0.1', '--data-dir', dataDir], {
      asUser,
      env: { LIBRARY_WATCH: '0', LIBRARY_RESCAN_MINUTES: '0' },
    });
    const stderr = new Response(server.proc.stderr).text();
    try {
      const client = new TestClient(server.url);
      const email = 'reader@example.test';
      expect((await client.post('/api/signup', { email, password: 'correct horse battery', name: 'Reader' })).status).toBe(200);

      // The scan (the CLI's, beside the running server) ends and counts what it found.
      const added = await runCli(['libraries', 'add', root, '--name', 'Archive', '--owner', email, '--json', '--data-dir', dataDir], {
        asUser,
      });
      expect(added.code).toBe(0);
      const { library, scan } = parseJson(added);
      expect(scan).toMatchObject({ entries: 5, added: 5, skipped: 0, available: true, error: null });

      const top = await eventually(async () => (await listAll(client, '/api/files')).find((i) => i.name === 'Archive') ?? false);
      expect(top.id).toBe(library.folderId);
      const items = (await listAll(client, `/api/files?parentId=${top.id}`)).sort((a, b) => a.name.localeCompare(b.name));
      expect(items.map((i) => [i.name, i.type, i.unavailable ?? false])).toEqual([
        ['locked', 'folder', true],
        ['open.png', 'file', false],
        ['open.txt', 'file', false],
        ['secret.png', 'file', true],
        ['secret.txt', 'file', true],
      ]);
      const byName = new Map(items.map((i) => [i.name as string, i]));
      expect(byName.get('open.png').hasThumbnail).toBe(true);
      expect(byName.get('secret.png').hasThumbnail).toBe(false);

      // Photos says the same as the listing (the web app shows a picture by it).
      const photos = await listAll(client, '/api/files/photos');
      expect(photos.map((p) => [p.name, p.hasThumbnail]).sort()).toEqual([
        ['open.png', true],
        ['secret.png', false],
      ]);

      // The folder it cannot list shows nothing under it, and says so with no error.
      const locked = await client.get(`/api/files?parentId=${byName.get('locked').id}`);
      expect(locked.status).toBe(200);
      expect(await json(locked)).toEqual([]);

      expect(await (await client.get(`/api/files/${byName.get('open.txt').id}/download`)).text()).toBe('a pelican in the open');
      for (const name of ['secret.txt', 'secret.png']) {
        const res = await client.get(`/api/files/${byName.get(name).id}/download`);
        expect({ name, status: res.status }).toEqual({ name, status: 409 });
        expect((await json(res)).message).toContain('cannot read');
        const thumb = await client.get(`/api/files/${byName.get(name).id}/thumbnail`);
        expect(thumb.status).toBeGreaterThanOrEqual(400);
        expect(thumb.status).toBeLessThan(500);
      }
      const zip = await client.get(`/api/files/${byName.get('locked').id}/download`);
      expect(zip.status).toBeLessThan(500);
      await zip.arrayBuffer();

      // The readable picture gets its thumbnail and the readable text its words; the others never do.
      await eventually(async () => (await client.get(`/api/files/${byName.get('open.png').id}/thumbnail`)).status === 200, {
        timeoutMs: 30_000,
      });
      const hits = await eventually(
        async () => {
          const res = await client.get('/api/files/search?q=pelican&content=true');
          expect(res.status).toBe(200);
          const found = (await json(res)).filter((h: { match: string }) => h.match === 'content');
          return found.length > 0 && found;
        },
        { timeoutMs: 30_000 },
      );
      expect(hits.map((h: { name: string }) => h.name)).toEqual(['open.txt']);

      // A rescan by the server finds the same, and the server is still up.
      const rescanned = await runCli(['libraries', 'rescan', 'Archive', '--json', '--data-dir', dataDir], { asUser });
      expect(rescanned.code).toBe(0);
      const again = (await listAll(client, `/api/files?parentId=${top.id}`)).sort((a, b) => a.name.localeCompare(b.name));
      expect(again.map((i) => [i.id, i.unavailable ?? false])).toEqual(items.map((i) => [i.id, i.unavailable ?? false]));
      expect((await fetch(`${server.url}/health`)).status).toBe(200);
    } finally {
      await server.stop();
    }
    const logged = (await stderr).split('\n').filter((l) => l.startsWith('{'));
    expect(logged.filter((l) => JSON.parse(l).level === 'error')).toEqual([]);
  });
});
