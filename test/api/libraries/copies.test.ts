import { describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import { json } from '../../helpers/client.ts';
import { davLogin } from '../../helpers/dav.ts';
import { folder, upload } from '../../helpers/files.ts';
import { mountSmallDisk } from '../../helpers/small-disk.ts';
import * as seed from '../../helpers/seed.ts';
import type { TestServer } from '../../helpers/server.ts';
import { addLibrary, childNamed, children, hostDir, libraryServer, write } from './helpers.ts';
import { holdCalls } from '../../helpers/hold-calls.ts';

let t: TestServer;
let admin: seed.SeededLogin;

libraryServer((s) => ({ t, admin } = s), { startWorker: false });

/** Holds every object copy of the store until `release`; `held` resolves when the first one is held. */
const holdStoreCopies = () => holdCalls(t.server.ctx.driver, 'copy');

/** Holds every store write (a library file's bytes encrypted into the store) until `release`; `held` resolves when the first one is held. */
const holdStorePuts = () => holdCalls(t.server.ctx.storage, 'put');

const used = (login: seed.SeededLogin) => t.server.ctx.services.quota.usage(login.id).used;
const text = async (login: seed.SeededLogin, id: string) => (await login.client.get(`/api/files/${id}/download`)).text();

describe('copies between a library and the encrypted store', () => {
  test("API: a library file and folder copied into the store are encrypted copies counted in the usage; the store's copied into the library are host files, not counted", async () => {
    const owner = await seed.owner(t);
    const root = hostDir();
    write(root, 'song.txt', 'la la');
    write(root, 'Album/track1.txt', 'one');
    const library = await addLibrary(admin, root, owner);
    const song = await childNamed(owner, library.folderId, 'song.txt');
    const album = await childNamed(owner, library.folderId, 'Album');
    const mine = await folder(owner.client, 'Mine');
    const base = used(owner);

    const out = await owner.client.post('/api/files/copy', { ids: [song.id, album.id], parentId: mine.id });
    expect(out.status).toBe(202);
    await t.server.worker.drain();
    const copies = await children(owner, mine.id);
    expect(copies.map((i) => [i.name, i.library ?? false])).toEqual([
      ['Album', false],
      ['song.txt', false],
    ]);
    expect(await text(owner, copies[1].id)).toBe('la la');
    const track = await childNamed(owner, copies[0].id, 'track1.txt');
    expect(await text(owner, track.id)).toBe('one');
    expect(used(owner)).toBe(base + 8);
    expect(fs.readFileSync(path.join(root, 'song.txt'), 'utf8')).toBe('la la');

    const notes = await upload(owner.client, 'notes.txt', 'store notes', { parentId: mine.id });
    const inward = await owner.client.post('/api/files/copy', { ids: [notes.id, copies[0].id], parentId: album.id });
    expect(inward.status).toBe(202);
    await t.server.worker.drain();
    expect(fs.readFileSync(path.join(root, 'Album', 'notes.txt'), 'utf8')).toBe('store notes');
    expect(fs.readFileSync(path.join(root, 'Album', 'Album', 'track1.txt'), 'utf8')).toBe('one');
    expect((fs.readdirSync(root, { recursive: true }) as string[]).sort()).toEqual([
      'Album',
      'Album/Album',
      'Album/Album/track1.txt',
      'Album/notes.txt',
      'Album/track1.txt',
      'song.txt',
    ]);
    expect((await children(owner, album.id)).map((i) => [i.name, i.library])).toEqual([
      ['Album', true],
      ['notes.txt', true],
      ['track1.txt', true],
    ]);
    expect(used(owner)).toBe(base + 8 + 11);
  });

  test('WebDAV COPY out of a library and into one', async () => {
    const owner = await seed.owner(t);
    const root = hostDir();
    write(root, 'poem.txt', 'roses');
    const library = await addLibrary(admin, root, owner);
    await upload(owner.client, 'mine.txt', 'my own');
    const dav = await davLogin(t, owner);
    const base = encodeURIComponent(library.name);
    const out = await dav.request('COPY', `${base}/poem.txt`, { headers: { destination: `${t.url}/dav/poem-copy.txt` } });
    expect(out.status).toBe(201);
    const inward = await dav.request('COPY', 'mine.txt', { headers: { destination: `${t.url}/dav/${base}/mine.txt` } });
    expect(inward.status).toBe(201);
    expect(fs.readFileSync(path.join(root, 'mine.txt'), 'utf8')).toBe('my own');
    expect(await (await dav.request('GET', 'poem-copy.txt')).text()).toBe('roses');
    expect(fs.readdirSync(root).sort()).toEqual(['mine.txt', 'poem.txt']);
  });

  test('another account: 404; a read-only library refuses a copy into it (403) and nothing is written', async () => {
    const owner = await seed.owner(t);
    const outsider = await seed.owner(t);
    const root = hostDir();
    write(root, 'a.txt', 'a');
    const library = await addLibrary(admin, root, owner, { readOnly: true });
    const a = await childNamed(owner, library.folderId, 'a.txt');
    expect((await outsider.client.post('/api/files/copy', { ids: [a.id], parentId: null })).status).toBe(404);
    const mine = await upload(owner.client, 'mine.txt', 'mine');
    const refused = await owner.client.post('/api/files/copy', { ids: [mine.id], parentId: library.folderId });
    expect(refused.status).toBe(403);
    expect((await json(refused)).message).toBe('This library is read-only');
    expect(fs.readdirSync(root)).toEqual(['a.txt']);
  });
});

describe('moves between a library and the encrypted store: a copy, then a delete', () => {
  test('API: a library file moved into the store leaves the host folder; a store folder moved into a library lands there and leaves the store; the usage follows', async () => {
    const owner = await seed.owner(t);
    const root = hostDir();
    write(root, 'report.txt', 'quarterly');
    const library = await addLibrary(admin, root, owner);
    const report = await childNamed(owner, library.folderId, 'report.txt');
    const mine = await folder(owner.client, 'Mine');
    const base = used(owner);

    const out = await owner.client.post('/api/files/move', { ids: [report.id], parentId: mine.id });
    expect(out.status).toBe(200);
    expect(fs.readdirSync(root)).toEqual(['.coffer-trash']);
    expect(fs.readdirSync(path.join(root, '.coffer-trash'))).toEqual([]);
    const moved = await childNamed(owner, mine.id, 'report.txt');
    expect(moved.library ?? false).toBe(false);
    expect(await text(owner, moved.id)).toBe('quarterly');
    expect(await children(owner, library.folderId)).toEqual([]);
    expect(used(owner)).toBe(base + 9);

    const photos = await folder(owner.client, 'Photos', mine.id);
    await upload(owner.client, 'cat.jpg', 'meow', { parentId: photos.id });
    const inward = await owner.client.post('/api/files/move', { ids: [photos.id], parentId: library.folderId });
    expect(inward.status).toBe(200);
    expect(fs.readFileSync(path.join(root, 'Photos', 'cat.jpg'), 'utf8')).toBe('meow');
    expect((await children(owner, mine.id)).map((i) => i.name)).toEqual(['report.txt']);
    const landed = await childNamed(owner, library.folderId, 'Photos');
    expect(landed.library).toBe(true);
    expect(used(owner)).toBe(base + 9);
    await t.server.worker.drain();
  });

  test('WebDAV MOVE out of a library and into one', async () => {
    const owner = await seed.owner(t);
    const root = hostDir();
    write(root, 'tune.mp3', 'la');
    const library = await addLibrary(admin, root, owner);
    await upload(owner.client, 'mine.txt', 'my own');
    const dav = await davLogin(t, owner);
    const base = encodeURIComponent(library.name);
    expect((await dav.request('MOVE', `${base}/tune.mp3`, { headers: { destination: `${t.url}/dav/tune.mp3` } })).status).toBe(201);
    expect((await dav.request('MOVE', 'mine.txt', { headers: { destination: `${t.url}/dav/${base}/mine.txt` } })).status).toBe(201);
    expect(fs.readdirSync(root).sort()).toEqual(['.coffer-trash', 'mine.txt']);
    expect(await (await dav.request('GET', 'tune.mp3')).text()).toBe('la');
    expect((await children(owner, '')).map((i) => i.name).sort()).toEqual([library.name, 'tune.mp3'].sort());
  });

  test('a file uploaded into a folder while it is moved into a library stays in that folder, not deleted with the moved ones', async () => {
    const owner = await seed.owner(t);
    const root = hostDir();
    const library = await addLibrary(admin, root, owner);
    const photos = await folder(owner.client, 'Photos');
    await upload(owner.client, 'cat.jpg', 'meow', { parentId: photos.id });
    // The move copies each file's bytes first: held there while another request uploads into the source.
    const hold = holdStoreCopies();
    const move = owner.client.post('/api/files/move', { ids: [photos.id], parentId: library.folderId });
    await hold.held;
    const late = await upload(owner.client, 'dog.jpg', 'woof', { parentId: photos.id });
    hold.release();
    expect((await move).status).toBe(200);
    expect(fs.readFileSync(path.join(root, 'Photos', 'cat.jpg'), 'utf8')).toBe('meow');
    expect((await children(owner, photos.id)).map((i) => i.name)).toEqual(['dog.jpg']);
    expect(await text(owner, late.id)).toBe('woof');
  });

  test('a file replaced while its folder is moved into a library keeps its new content in the store; the library has what was copied', async () => {
    const owner = await seed.owner(t);
    const root = hostDir();
    const library = await addLibrary(admin, root, owner);
    const photos = await folder(owner.client, 'Photos');
    const cat = await upload(owner.client, 'cat.txt', 'meow', { parentId: photos.id });
    const hold = holdStoreCopies();
    const move = owner.client.post('/api/files/move', { ids: [photos.id], parentId: library.folderId });
    await hold.held;
    const form = new FormData();
    form.append('file', new File(['purr'], 'cat.txt'));
    expect((await owner.client.request(`/api/files/${cat.id}/replace`, { method: 'POST', body: form })).status).toBe(200);
    hold.release();
    expect((await move).status).toBe(200);
    expect(fs.readFileSync(path.join(root, 'Photos', 'cat.txt'), 'utf8')).toBe('meow');
    expect((await children(owner, photos.id)).map((i) => i.name)).toEqual(['cat.txt']);
    expect(await text(owner, cat.id)).toBe('purr');
  });

  test('WebDAV MOVE into a library: a depth-infinity LOCK taken on the library folder by another client while the bytes are copied → 423, the source stays', async () => {
    const owner = await seed.owner(t);
    const root = hostDir();
    const library = await addLibrary(admin, root, owner);
    const mine = await upload(owner.client, 'mine.txt', 'my own');
    const dav = await davLogin(t, owner);
    const other = await davLogin(t, owner, 'another device');
    const base = encodeURIComponent(library.name);
    const hold = holdStoreCopies();
    const move = dav.request('MOVE', 'mine.txt', { headers: { destination: `${t.url}/dav/${base}/mine.txt` } });
    await hold.held;
    const lockBody = `<D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype><D:owner>other</D:owner></D:lockinfo>`;
    expect((await other.request('LOCK', base, { headers: { depth: 'infinity' }, body: lockBody })).status).toBe(200);
    hold.release();
    expect((await move).status).toBe(423);
    expect(await text(owner, mine.id)).toBe('my own');
    expect(fs.readdirSync(root).filter((n) => n === 'mine.txt')).toEqual([]);
    expect((await children(owner, library.folderId)).map((i) => i.name)).toEqual([]);
  });

  test('WebDAV MOVE of a folder into a library, and of a library folder out of it: a depth-infinity LOCK taken on the destination folder while the bytes are copied → 423, the source stays whole, no copy is left', async () => {
    const owner = await seed.owner(t);
    const root = hostDir();
    write(root, 'Album/track1.txt', 'one');
    write(root, 'Album/disc2/track2.txt', 'two');
    const library = await addLibrary(admin, root, owner);
    const photos = await folder(owner.client, 'Photos');
    const cat = await upload(owner.client, 'cat.txt', 'meow', { parentId: photos.id });
    const inner = await folder(owner.client, 'Inner', photos.id);
    await upload(owner.client, 'dog.txt', 'woof', { parentId: inner.id });
    const mine = await folder(owner.client, 'Mine');
    const dav = await davLogin(t, owner);
    const other = await davLogin(t, owner, 'another device');
    const base = encodeURIComponent(library.name);
    const lockBody = `<D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype><D:owner>other</D:owner></D:lockinfo>`;
    const lockedWhileCopied = async (from: string, to: string, locked: string, hold: { held: Promise<void>; release: () => void }) => {
      const move = dav.request('MOVE', from, { headers: { destination: `${t.url}/dav/${to}` } });
      await hold.held;
      const lock = await other.request('LOCK', locked, { headers: { depth: 'infinity' }, body: lockBody });
      expect(lock.status).toBe(200);
      hold.release();
      expect((await move).status).toBe(423);
      expect((await other.request('UNLOCK', locked, { headers: { 'lock-token': lock.headers.get('lock-token')! } })).status).toBe(204);
    };

    await lockedWhileCopied('Photos/', `${base}/Photos/`, `${base}/`, holdStoreCopies());
    expect((await children(owner, photos.id)).map((i) => i.name)).toEqual(['Inner', 'cat.txt']);
    expect((await children(owner, inner.id)).map((i) => i.name)).toEqual(['dog.txt']);
    expect(await text(owner, cat.id)).toBe('meow');
    expect(fs.readdirSync(root).filter((n) => n === 'Photos')).toEqual([]);
    expect((await children(owner, library.folderId)).map((i) => i.name)).toEqual(['Album']);

    await lockedWhileCopied(`${base}/Album/`, 'Mine/Album/', 'Mine/', holdStorePuts());
    expect(fs.readFileSync(path.join(root, 'Album', 'disc2', 'track2.txt'), 'utf8')).toBe('two');
    expect(fs.readFileSync(path.join(root, 'Album', 'track1.txt'), 'utf8')).toBe('one');
    expect(await children(owner, mine.id)).toEqual([]);
    expect((await children(owner, library.folderId)).map((i) => i.name)).toEqual(['Album']);
  });

  test('WebDAV MOVE of a file onto a library file: a source saved again while it is copied stays with its new content', async () => {
    const owner = await seed.owner(t);
    const root = hostDir();
    write(root, 'draft.txt', 'old draft');
    const library = await addLibrary(admin, root, owner);
    const notes = await upload(owner.client, 'notes.txt', 'first');
    const dav = await davLogin(t, owner);
    const hold = holdStoreCopies();
    const move = dav.request('MOVE', 'notes.txt', {
      headers: { destination: `${t.url}/dav/${encodeURIComponent(library.name)}/draft.txt` },
    });
    await hold.held;
    expect((await dav.put('notes.txt', 'second')).status).toBe(204);
    hold.release();
    expect((await move).status).toBe(204);
    expect(fs.readFileSync(path.join(root, 'draft.txt'), 'utf8')).toBe('first');
    expect(await text(owner, notes.id)).toBe('second');
  });

  test('a move that fails on the way (the library disk is full) leaves the source as it was and no partial copy', async () => {
    const disk = mountSmallDisk(1);
    if (typeof disk === 'string') throw new Error(disk);
    let libraryId: string | null = null;
    try {
      const owner = await seed.owner(t);
      const library = await addLibrary(admin, disk.dir, owner);
      libraryId = library.id;
      const big = await upload(owner.client, 'big.bin', new Uint8Array(2 * 1024 * 1024).fill(3));
      const res = await owner.client.post('/api/files/move', { ids: [big.id], parentId: library.folderId });
      expect(res.status).toBe(507);
      expect((await children(owner, '')).map((i) => i.name).sort()).toEqual([library.name, 'big.bin'].sort());
      expect((await (await owner.client.get(`/api/files/${big.id}/download`)).arrayBuffer()).byteLength).toBe(2 * 1024 * 1024);
      expect(fs.readdirSync(disk.dir)).toEqual([]);
      expect(await children(owner, library.folderId)).toEqual([]);
    } finally {
      if (libraryId) await admin.client.delete(`/api/admin/libraries/${libraryId}`);
      disk.unmount();
    }
  });

  test('a WebDAV MOVE out of a read-only library, or of a library the host will not change (a read-only mount), answers 403 and leaves no copy', async () => {
    const owner = await seed.owner(t);
    const root = hostDir();
    write(root, 'fixed.txt', 'stays');
    const library = await addLibrary(admin, root, owner, { readOnly: true });
    const dav = await davLogin(t, owner);
    const out = (lib: { name: string }, name: string) =>
      dav.request('MOVE', `${encodeURIComponent(lib.name)}/${name}`, { headers: { destination: `${t.url}/dav/${name}` } });
    const refused = await out(library, 'fixed.txt');
    expect(refused.status).toBe(403);
    expect((await json(refused)).message).toBe('This library is read-only');
    expect((await children(owner, '')).map((i) => i.name)).toEqual([library.name]);
    expect(fs.readdirSync(root)).toEqual(['fixed.txt']);

    const disk = mountSmallDisk(1);
    if (typeof disk === 'string') throw new Error(disk);
    let mountedId: string | null = null;
    try {
      write(disk.dir, 'mounted.txt', 'on a read-only mount');
      const mounted = await addLibrary(admin, disk.dir, owner);
      mountedId = mounted.id;
      expect(Bun.spawnSync(['mount', '-o', 'remount,ro', disk.dir]).exitCode).toBe(0);
      expect((await out(mounted, 'mounted.txt')).status).toBe(403);
      expect((await children(owner, '')).map((i) => i.name).sort()).toEqual([library.name, mounted.name].sort());
      expect((await childNamed(owner, mounted.folderId, 'mounted.txt')).name).toBe('mounted.txt');
      expect(used(owner)).toBe(0);
    } finally {
      if (mountedId) await admin.client.delete(`/api/admin/libraries/${mountedId}`);
      disk.unmount();
    }
  });
});
