import { describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import { LibraryScanner } from '../../../src/services/libraries/scanner.ts';
import { json } from '../../helpers/client.ts';
import { eventually } from '../../helpers/eventually.ts';
import { davLogin } from '../../helpers/dav.ts';
import * as seed from '../../helpers/seed.ts';
import type { TestServer } from '../../helpers/server.ts';
import { addLibrary, childNamed, hostDir, libraryServer, rescan, write } from './helpers.ts';

let t: TestServer;
let admin: seed.SeededLogin;

// Only the scans asked for here run.
libraryServer((s) => ({ t, admin } = s), { env: { LIBRARY_WATCH: '0', LIBRARY_RESCAN_MINUTES: '0' }, startWorker: false });

describe('a full scan while Coffer writes a file', () => {
  test('a scan that read the index before the write landed and lists the host after it records no change by the system', async () => {
    const owner = await seed.owner(t);
    const root = hostDir();
    write(root, 'essay.txt', 'first draft');
    const library = await addLibrary(admin, root, owner);
    const essay = await childNamed(owner, library.folderId, 'essay.txt');
    const repo = t.server.ctx.repos.libraries;
    // The index as the scan reads it first; the write lands after that read and before the scan lists the folder.
    const before = repo.indexed(library.id);
    const dav = await davLogin(t, owner);
    expect((await dav.put(`${encodeURIComponent(library.name)}/essay.txt`, 'second, longer draft')).status).toBe(204);
    const landed = repo.indexedItem(library.id, essay.id)!;
    const real = repo.indexed;
    repo.indexed = (id) => {
      repo.indexed = real;
      return id === library.id ? before : real.call(repo, id);
    };
    const seqBefore = t.server.ctx.repos.changes.pageOfAccounts([owner.id], 0, 10_000).at(-1)!.seq;
    try {
      await rescan(admin, library.id);
    } finally {
      repo.indexed = real;
    }
    expect(repo.indexed).toBe(real);
    const after = t.server.ctx.repos.changes.pageOfAccounts([owner.id], seqBefore, 10_000);
    expect((await json(await admin.client.get(`/api/admin/libraries/${library.id}`))).scanError).toBeNull();
    expect(after.map((r) => [r.kind, r.itemId, r.actorKind])).toEqual([]);
    // The entry is the one Coffer's write indexed: its content key (its thumbnail and text) not made anew.
    expect(repo.indexedItem(library.id, essay.id)).toEqual(landed);
    expect(fs.readFileSync(path.join(root, 'essay.txt'), 'utf8')).toBe('second, longer draft');
  });

  test('a new file and folder, and a rename, made by Coffer after the index was read: no second item, no change by the system', async () => {
    const owner = await seed.owner(t);
    const root = hostDir();
    write(root, 'old-name.txt', 'rename me');
    const library = await addLibrary(admin, root, owner);
    const renamed = await childNamed(owner, library.folderId, 'old-name.txt');
    const repo = t.server.ctx.repos.libraries;
    const before = repo.indexed(library.id);
    const dav = await davLogin(t, owner);
    const base = encodeURIComponent(library.name);
    expect((await dav.put(`${base}/new.txt`, 'brand new')).status).toBe(201);
    expect((await dav.request('MKCOL', `${base}/Box`)).status).toBe(201);
    const moved = await dav.request('MOVE', `${base}/old-name.txt`, { headers: { destination: `${t.url}/dav/${base}/Box/new-name.txt` } });
    expect(moved.status).toBe(201);
    const real = repo.indexed;
    repo.indexed = (id) => {
      repo.indexed = real;
      return id === library.id ? before : real.call(repo, id);
    };
    const seqBefore = t.server.ctx.repos.changes.pageOfAccounts([owner.id], 0, 10_000).at(-1)!.seq;
    try {
      await rescan(admin, library.id);
    } finally {
      repo.indexed = real;
    }
    const after = t.server.ctx.repos.changes.pageOfAccounts([owner.id], seqBefore, 10_000);
    expect((await json(await admin.client.get(`/api/admin/libraries/${library.id}`))).scanError).toBeNull();
    expect(after.map((r) => [r.kind, r.nameAfter, r.actorKind])).toEqual([]);
    const top = await json(await owner.client.get(`/api/files?parentId=${library.folderId}`));
    expect(top.map((i: { name: string }) => i.name).sort()).toEqual(['Box', 'new.txt']);
    const box = top.find((i: { name: string }) => i.name === 'Box');
    const inBox = await json(await owner.client.get(`/api/files?parentId=${box.id}`));
    expect(inBox.map((i: { id: string; name: string }) => [i.id, i.name])).toEqual([[renamed.id, 'new-name.txt']]);
    expect(repo.indexed(library.id)).toHaveLength(4);
  });
});

describe('a rescan asked while a scan runs', () => {
  test('runs once more after it, and sees what changed before the ask that the running scan had passed', async () => {
    const owner = await seed.owner(t);
    const root = hostDir();
    write(root, 'notes.txt', 'before');
    const library = await addLibrary(admin, root, owner);
    const notes = await childNamed(owner, library.folderId, 'notes.txt');
    const repo = t.server.ctx.repos.libraries;
    const keyBefore = repo.indexedItem(library.id, notes.id)!;
    // The first scan does its whole walk, then is held as still running until released.
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let scans = 0;
    const real = LibraryScanner.prototype.scan;
    LibraryScanner.prototype.scan = async function (this: LibraryScanner, ...args) {
      const result = await real.apply(this, args);
      if (++scans === 1) await held;
      return result;
    };
    try {
      const libraries = t.server.ctx.services.libraries;
      const first = libraries.scan(library.id);
      await eventually(() => scans === 1);
      write(root, 'notes.txt', 'after, and longer');
      const asked = libraries.scan(library.id);
      release();
      await first;
      await asked;
    } finally {
      LibraryScanner.prototype.scan = real;
    }
    expect(scans).toBe(2);
    expect(repo.indexedItem(library.id, notes.id)).not.toEqual(keyBefore);
    expect(await (await owner.client.get(`/api/files/${notes.id}/download`)).text()).toBe('after, and longer');
  });
});
