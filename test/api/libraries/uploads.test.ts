import { describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import { json } from '../../helpers/client.ts';
import { davLogin } from '../../helpers/dav.ts';
import { mountSmallDisk } from '../../helpers/small-disk.ts';
import * as seed from '../../helpers/seed.ts';
import type { TestServer } from '../../helpers/server.ts';
import { createUpload, tusUpload } from '../../helpers/tus.ts';
import { addLibrary, childNamed, children, hostDir, libraryServer, refusalScene, write } from './helpers.ts';

let t: TestServer;
let admin: seed.SeededLogin;

libraryServer((s) => ({ t, admin } = s));

const rowsAfter = (accountId: string, seq: number) => t.server.ctx.repos.changes.pageOfAccounts([accountId], seq, 10_000);
const latest = () => t.server.ctx.repos.changes.latestSeq();
/** The objects in the encrypted store (files under blobs/, its temp files aside). */
const storedObjects = () =>
  (fs.readdirSync(path.join(t.dataDir, 'blobs'), { recursive: true, withFileTypes: true }) as fs.Dirent[]).filter(
    (e) => e.isFile() && !e.name.includes('tmp'),
  ).length;

function form(fields: Record<string, string>, files: Array<[name: string, content: string | Uint8Array]>): FormData {
  const body = new FormData();
  for (const [k, v] of Object.entries(fields)) body.append(k, v);
  for (const [name, content] of files) body.append('files', new File([content], name));
  return body;
}

/** Every entry under `root` (relative paths, sorted), the library's trash left out. */
function hostTree(root: string): string[] {
  return (fs.readdirSync(root, { recursive: true }) as string[]).sort();
}

describe('uploads into a writable library land in the host folder', () => {
  test('API: one file, a bulk upload with folders, a replace; the host holds the bytes under their names, no temporary file is left, the store keeps no object', async () => {
    const owner = await seed.owner(t);
    const root = hostDir();
    write(root, 'Docs/old.txt', 'old');
    const library = await addLibrary(admin, root, owner);
    const docs = await childNamed(owner, library.folderId, 'Docs');
    const objectsBefore = storedObjects();
    const mark = latest();

    const one = await owner.client.request('/api/files/upload', {
      method: 'POST',
      body: form({ parentId: library.folderId, lastModifiedTimes: '1700000000000' }, [['hello.txt', 'hello world']]),
    });
    expect(one.status).toBe(200);
    const hello = await json(one);
    expect(hello).toMatchObject({ name: 'hello.txt', size: 11, library: true });
    expect(fs.readFileSync(path.join(root, 'hello.txt'), 'utf8')).toBe('hello world');
    expect(fs.statSync(path.join(root, 'hello.txt')).mtimeMs).toBe(1700000000000);

    const bulk = await owner.client.request('/api/files/upload/bulk', {
      method: 'POST',
      body: (() => {
        const b = form({ parentId: docs.id }, [
          ['a.txt', 'alpha'],
          ['b.txt', 'beta'],
        ]);
        b.append('relativePaths', '2026/March/a.txt');
        b.append('relativePaths', 'b.txt');
        return b;
      })(),
    });
    expect(bulk.status).toBe(200);
    expect((await json(bulk)).successful).toBe(2);
    expect(fs.readFileSync(path.join(root, 'Docs/2026/March/a.txt'), 'utf8')).toBe('alpha');
    expect(fs.readFileSync(path.join(root, 'Docs/b.txt'), 'utf8')).toBe('beta');

    fs.chmodSync(path.join(root, 'Docs/old.txt'), 0o640);
    const old = await childNamed(owner, docs.id, 'old.txt');
    const replaced = await owner.client.request(`/api/files/${old.id}/replace`, {
      method: 'POST',
      body: form({}, [['old.txt', 'new content']]),
    });
    expect(replaced.status).toBe(200);
    expect(await json(replaced)).toMatchObject({ id: old.id, size: 11 });
    expect(fs.readFileSync(path.join(root, 'Docs/old.txt'), 'utf8')).toBe('new content');
    expect(fs.statSync(path.join(root, 'Docs/old.txt')).mode & 0o777).toBe(0o640);
    expect(await (await owner.client.get(`/api/files/${old.id}/download`)).text()).toBe('new content');

    expect(hostTree(root)).toEqual([
      'Docs',
      'Docs/2026',
      'Docs/2026/March',
      'Docs/2026/March/a.txt',
      'Docs/b.txt',
      'Docs/old.txt',
      'hello.txt',
    ]);
    // The encrypted copies the doors stored first are deleted once the host files are in place; the store keeps old.txt's content before, its version.
    await t.server.worker.drain();
    expect(storedObjects()).toBe(objectsBefore + 1);

    // The owner's own changes only; the watch, seeing the host as the index says, adds nothing (no "system" change).
    await Bun.sleep(1500);
    expect(rowsAfter(owner.id, mark).map((r) => [r.kind, r.actorKind])).toEqual([
      ['item.uploaded', 'login'],
      ['item.created', 'login'],
      ['item.created', 'login'],
      ['item.uploaded', 'login'],
      ['item.uploaded', 'login'],
      ['item.replaced', 'login'],
    ]);
    expect((await children(owner, library.folderId)).map((i) => i.name)).toEqual(['Docs', 'hello.txt']);
  });

  test('a derived file (POST /:id/derived) is made beside its original in the host folder', async () => {
    const owner = await seed.owner(t);
    const root = hostDir();
    write(root, 'Scans/page.png', 'png');
    const library = await addLibrary(admin, root, owner);
    const scans = await childNamed(owner, library.folderId, 'Scans');
    const page = await childNamed(owner, scans.id, 'page.png');
    const res = await owner.client.request(`/api/files/${page.id}/derived`, {
      method: 'POST',
      body: form({}, [['page.pdf', 'pdf of the page']]),
    });
    expect(res.status).toBe(200);
    expect(fs.readFileSync(path.join(root, 'Scans/page.pdf'), 'utf8')).toBe('pdf of the page');
    expect(fs.readdirSync(path.join(root, 'Scans')).sort()).toEqual(['page.pdf', 'page.png']);
    expect((await children(owner, scans.id)).map((i) => [i.name, i.library])).toEqual([
      ['page.pdf', true],
      ['page.png', true],
    ]);
  });

  test('WebDAV PUT (new and over an existing file) and the Nextcloud path PUT write the host folder', async () => {
    const owner = await seed.owner(t);
    const root = hostDir();
    write(root, 'notes.md', 'v1');
    const library = await addLibrary(admin, root, owner);
    const notes = await childNamed(owner, library.folderId, 'notes.md');
    const dav = await davLogin(t, owner);
    const base = encodeURIComponent(library.name);
    expect((await dav.put(`${base}/fresh.md`, 'fresh')).status).toBe(201);
    expect((await dav.put(`${base}/notes.md`, 'v2')).status).toBe(204);
    const nc = await fetch(`${t.url}/remote.php/dav/files/${owner.id}/${base}/nc.md`, {
      method: 'PUT',
      headers: { authorization: dav.authorization },
      body: 'from nextcloud',
    });
    expect(nc.status).toBe(201);
    expect(fs.readFileSync(path.join(root, 'fresh.md'), 'utf8')).toBe('fresh');
    expect(fs.readFileSync(path.join(root, 'notes.md'), 'utf8')).toBe('v2');
    expect(fs.readFileSync(path.join(root, 'nc.md'), 'utf8')).toBe('from nextcloud');
    expect((await childNamed(owner, library.folderId, 'notes.md')).id).toBe(notes.id);
    expect(hostTree(root)).toEqual(['fresh.md', 'nc.md', 'notes.md']);
  });

  test('tus (tus-js-client) creates a file in a library folder and replaces one', async () => {
    const owner = await seed.owner(t);
    const root = hostDir();
    write(root, 'Video/clip.bin', 'short');
    const library = await addLibrary(admin, root, owner);
    const video = await childNamed(owner, library.folderId, 'Video');
    const clip = await childNamed(owner, video.id, 'clip.bin');
    const data = Buffer.alloc(3 * 1024 * 1024, 7);
    const made = await tusUpload(t.url, owner.client, data, {
      chunkSize: 1024 * 1024,
      metadata: { filename: 'big.bin', parentId: video.id },
    }).done;
    expect(made.itemId).not.toBeNull();
    expect(fs.readFileSync(path.join(root, 'Video/big.bin')).equals(data)).toBe(true);
    const again = Buffer.alloc(1024 * 1024, 9);
    await tusUpload(t.url, owner.client, again, { metadata: { filename: 'clip.bin', replaceId: clip.id } }).done;
    expect(fs.readFileSync(path.join(root, 'Video/clip.bin')).equals(again)).toBe(true);
    expect(hostTree(root)).toEqual(['Video', 'Video/big.bin', 'Video/clip.bin']);
  });

  test('Nextcloud chunked upload: the MOVE of .file lands in the library', async () => {
    const owner = await seed.owner(t);
    const root = hostDir();
    const library = await addLibrary(admin, root, owner);
    const dav = await davLogin(t, owner);
    const uploads = (method: string, rel: string, headers: Record<string, string> = {}, body?: Uint8Array) =>
      fetch(`${t.url}/remote.php/dav/uploads/${owner.id}/${rel}`, {
        method,
        headers: { authorization: dav.authorization, ...headers },
        body,
      });
    const parts = [Buffer.alloc(5 * 1024 * 1024, 1), Buffer.alloc(1000, 2)];
    const destination = `${t.url}/remote.php/dav/files/${owner.id}/${encodeURIComponent(library.name)}/chunked.bin`;
    expect((await uploads('MKCOL', 'transfer-lib', { destination })).status).toBe(201);
    expect((await uploads('PUT', 'transfer-lib/00001', {}, parts[0])).status).toBe(201);
    expect((await uploads('PUT', 'transfer-lib/00002', {}, parts[1])).status).toBe(201);
    const done = await uploads('MOVE', 'transfer-lib/.file', { destination });
    expect(done.status).toBe(201);
    expect(fs.readFileSync(path.join(root, 'chunked.bin')).equals(Buffer.concat(parts))).toBe(true);
    expect(hostTree(root)).toEqual(['chunked.bin']);
  });

  test('a reader polling the real paths during a large replace and a large new upload sees the old content or the new one (or no file yet), never a part', async () => {
    const owner = await seed.owner(t);
    const root = hostDir();
    const size = 32 * 1024 * 1024;
    write(root, 'big.bin', Buffer.alloc(size, 0x61));
    const library = await addLibrary(admin, root, owner);
    const big = await childNamed(owner, library.folderId, 'big.bin');
    const target = path.join(root, 'big.bin');
    const stop = path.join(root, '..', `${path.basename(root)}.stop`);
    // Another process, as another program on the host would read it.
    const reader = Bun.spawn(
      [
        process.execPath,
        '-e',
        `const fs = require('node:fs');
         const [file, stop, size] = [process.argv[1], process.argv[2], Number(process.argv[3])];
         const fresh = process.argv[4];
         let reads = 0, bad = 0, seen = new Set(), freshSeen = false;
         while (!fs.existsSync(stop)) {
           const b = fs.readFileSync(file); reads++;
           const first = b[0], last = b[b.length - 1];
           if (b.length !== size || first !== last || b.indexOf(first === 0x61 ? 0x62 : 0x61) !== -1) bad++;
           seen.add(first);
           let f = null;
           try { f = fs.readFileSync(fresh); } catch {}
           if (f) { freshSeen = true; if (f.length !== size || f.some((x) => x !== 0x63)) bad++; }
         }
         console.log(JSON.stringify({ reads, bad, seen: [...seen].sort(), freshSeen }));`,
        target,
        stop,
        String(size),
        path.join(root, 'fresh.bin'),
      ],
      { stdout: 'pipe' },
    );
    await Bun.sleep(300);
    const res = await owner.client.request(`/api/files/${big.id}/replace`, {
      method: 'POST',
      body: form({}, [['big.bin', new Uint8Array(size).fill(0x62)]]),
    });
    expect(res.status).toBe(200);
    const fresh = await owner.client.request('/api/files/upload', {
      method: 'POST',
      body: form({ parentId: library.folderId }, [['fresh.bin', new Uint8Array(size).fill(0x63)]]),
    });
    expect(fresh.status).toBe(200);
    await Bun.sleep(300);
    fs.writeFileSync(stop, '');
    const report = JSON.parse(await new Response(reader.stdout).text());
    fs.rmSync(stop);
    expect(report.bad).toBe(0);
    expect(report.reads).toBeGreaterThan(2);
    expect(report.seen).toEqual([0x61, 0x62]);
    expect(report.freshSeen).toBe(true);
    expect(fs.readdirSync(root).sort()).toEqual(['big.bin', 'fresh.bin']);
  }, 120_000);
});

describe('uploads into a library: the door rules', () => {
  test('a name the host cannot hold (over 255 bytes) → 400 saying why; nothing is written', async () => {
    const owner = await seed.owner(t);
    const root = hostDir();
    const library = await addLibrary(admin, root, owner);
    const res = await owner.client.request('/api/files/upload', {
      method: 'POST',
      body: form({ parentId: library.folderId }, [[`${'中'.repeat(90)}.txt`, 'x']]),
    });
    expect(res.status).toBe(400);
    expect((await json(res)).message).toBe('The name is 274 bytes long in UTF-8; the host folder holds at most 255.');
    expect(fs.readdirSync(root)).toEqual([]);
    expect(await children(owner, library.folderId)).toEqual([]);
  });

  test("a share link's drop into a library folder writes the host folder; into a read-only library it is refused (403)", async () => {
    const owner = await seed.owner(t);
    const root = hostDir();
    fs.mkdirSync(path.join(root, 'Inbox'));
    const library = await addLibrary(admin, root, owner);
    const inbox = await childNamed(owner, library.folderId, 'Inbox');
    const fixedRoot = hostDir();
    fs.mkdirSync(path.join(fixedRoot, 'Inbox'));
    const fixed = await addLibrary(admin, fixedRoot, owner, { readOnly: true });
    const fixedInbox = await childNamed(owner, fixed.folderId, 'Inbox');
    const drop = async (folderId: string) => {
      const shared = await owner.client.post('/api/files/share', { ids: [folderId], shared: true, mode: 'view_upload' });
      expect(shared.status).toBe(200);
      const token = /\/s\/([A-Za-z0-9_-]+)/.exec((await json(shared)).links[folderId])![1]!;
      const body = new FormData();
      body.append('file', new File(['dropped by a visitor'], 'visitor.txt'));
      return fetch(`${t.url}/s/${token}/upload`, { method: 'POST', headers: { accept: 'application/json' }, body });
    };
    expect((await drop(inbox.id)).status).toBe(201);
    expect(fs.readFileSync(path.join(root, 'Inbox/visitor.txt'), 'utf8')).toBe('dropped by a visitor');
    expect((await children(owner, inbox.id)).map((i) => i.name)).toEqual(['visitor.txt']);
    const refused = await drop(fixedInbox.id);
    expect(refused.status).toBe(403);
    expect((await json(refused)).message).toBe('This library is read-only');
    expect(hostTree(fixedRoot)).toEqual(['Inbox']);
  });

  test("a member of the library's group (an editor) uploads and deletes in it as the owner does", async () => {
    const owner = await seed.owner(t);
    const member = await seed.owner(t);
    const group = await json(await admin.client.post('/api/admin/groups', { name: `Uploaders ${Date.now()}` }));
    expect((await admin.client.post(`/api/admin/groups/${group.id}/members`, { email: member.email })).status).toBe(201);
    const root = hostDir();
    write(root, 'old.txt', 'old');
    const library = await addLibrary(admin, root, owner, { group: group.name });
    const up = await member.client.request('/api/files/upload', {
      method: 'POST',
      body: form({ parentId: library.folderId }, [['from-member.txt', 'hi']]),
    });
    expect(up.status).toBe(200);
    expect(fs.readFileSync(path.join(root, 'from-member.txt'), 'utf8')).toBe('hi');
    const old = await childNamed(owner, library.folderId, 'old.txt');
    expect((await member.client.post('/api/files/delete', { ids: [old.id] })).status).toBe(200);
    expect(fs.readdirSync(root).sort()).toEqual(['.coffer-trash', 'from-member.txt']);
    expect(fs.readdirSync(path.join(root, '.coffer-trash'))).toEqual([old.id]);
  });

  test('a sub-user without upload gets 403, another account 404; nothing is written', async () => {
    const { outsider, sub, root, library, keep } = await refusalScene(t, admin);
    const up = (login: seed.SeededLogin) =>
      login.client.request('/api/files/upload', { method: 'POST', body: form({ parentId: library.folderId }, [['x.txt', 'x']]) });
    const replace = (login: seed.SeededLogin) =>
      login.client.request(`/api/files/${keep.id}/replace`, { method: 'POST', body: form({}, [['keep.txt', 'x']]) });
    expect((await up(sub)).status).toBe(403);
    expect((await replace(sub)).status).toBe(403);
    expect((await up(outsider)).status).toBe(404);
    expect((await replace(outsider)).status).toBe(404);
    expect((await createUpload(outsider.client, 4, { filename: 'tus.txt', parentId: library.folderId })).status).toBe(404);
    expect(hostTree(root)).toEqual(['keep.txt']);
    expect(fs.readFileSync(path.join(root, 'keep.txt'), 'utf8')).toBe('keep');
  });

  test('a read-only library refuses uploads through every door with "This library is read-only"', async () => {
    const owner = await seed.owner(t);
    const root = hostDir();
    write(root, 'keep.txt', 'keep');
    const library = await addLibrary(admin, root, owner, { readOnly: true });
    const keep = await childNamed(owner, library.folderId, 'keep.txt');
    const dav = await davLogin(t, owner);
    const base = encodeURIComponent(library.name);
    const refusals = [
      await owner.client.request('/api/files/upload/bulk', {
        method: 'POST',
        body: form({ parentId: library.folderId }, [['x.txt', 'x']]),
      }),
      await owner.client.request(`/api/files/${keep.id}/replace`, { method: 'POST', body: form({}, [['keep.txt', 'x']]) }),
      await dav.put(`${base}/keep.txt`, 'x'),
      await fetch(`${t.url}/remote.php/dav/files/${owner.id}/${base}/n.txt`, {
        method: 'PUT',
        headers: { authorization: dav.authorization },
        body: 'n',
      }),
      await createUpload(owner.client, 4, { filename: 'keep.txt', replaceId: keep.id }),
    ];
    const uploads = (method: string, rel: string, headers: Record<string, string> = {}, body?: string) =>
      fetch(`${t.url}/remote.php/dav/uploads/${owner.id}/${rel}`, {
        method,
        headers: { authorization: dav.authorization, ...headers },
        body,
      });
    const destination = `${t.url}/remote.php/dav/files/${owner.id}/${base}/chunked.txt`;
    await uploads('MKCOL', 'transfer-ro', { destination });
    await uploads('PUT', 'transfer-ro/00001', {}, 'chunk');
    refusals.push(await uploads('MOVE', 'transfer-ro/.file', { destination }));
    for (const res of refusals) expect(res.status).toBe(403);
    const bulk = await json(refusals[0]!).catch(() => null);
    expect(bulk?.message ?? bulk?.failed?.[0]?.error).toBe('This library is read-only');
    expect((await json(refusals[1]!)).message).toBe('This library is read-only');
    expect(hostTree(root)).toEqual(['keep.txt']);
    expect(fs.readFileSync(path.join(root, 'keep.txt'), 'utf8')).toBe('keep');
  });
});

describe('a library on a full disk', () => {
  test('an upload or a replace larger than the free space → 507 naming the library folder; nothing half-written is left, the index is unchanged', async () => {
    const disk = mountSmallDisk(1);
    if (typeof disk === 'string') throw new Error(disk);
    let libraryId: string | null = null;
    try {
      const owner = await seed.owner(t);
      write(disk.dir, 'small.txt', 'small');
      const library = await addLibrary(admin, disk.dir, owner);
      libraryId = library.id;
      const small = await childNamed(owner, library.folderId, 'small.txt');
      const tooBig = new Uint8Array(2 * 1024 * 1024).fill(1);
      const message = `The disk of the library folder ${disk.dir} is full: free some space there, or save the file elsewhere.`;
      const up = await owner.client.request('/api/files/upload', {
        method: 'POST',
        body: form({ parentId: library.folderId }, [['big.bin', tooBig]]),
      });
      expect(up.status).toBe(507);
      expect((await json(up)).message).toBe(message);
      const replaced = await owner.client.request(`/api/files/${small.id}/replace`, {
        method: 'POST',
        body: form({}, [['small.txt', tooBig]]),
      });
      expect(replaced.status).toBe(507);
      expect((await json(replaced)).message).toBe(message);
      const dav = await davLogin(t, owner);
      expect((await dav.put(`${encodeURIComponent(library.name)}/big.bin`, tooBig)).status).toBe(507);
      expect(hostTree(disk.dir)).toEqual(['small.txt']);
      expect(fs.readFileSync(path.join(disk.dir, 'small.txt'), 'utf8')).toBe('small');
      expect((await children(owner, library.folderId)).map((i) => [i.id, i.name, i.size])).toEqual([[small.id, 'small.txt', 5]]);
    } finally {
      if (libraryId) await admin.client.delete(`/api/admin/libraries/${libraryId}`);
      disk.unmount();
    }
  });
});
