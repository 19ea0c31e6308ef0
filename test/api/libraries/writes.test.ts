import { describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import { json } from '../../helpers/client.ts';
import { davLogin, NextcloudApp } from '../../helpers/dav.ts';
import * as seed from '../../helpers/seed.ts';
import type { TestServer } from '../../helpers/server.ts';
import { uploadRaw } from '../../helpers/files.ts';
import { addLibrary, childNamed, children, hostDir, libraryServer, rescan, write } from './helpers.ts';

let t: TestServer;
let admin: seed.SeededLogin;

libraryServer((s) => ({ t, admin } = s));

const rowsAfter = (accountId: string, seq: number) => t.server.ctx.repos.changes.pageOfAccounts([accountId], seq, 10_000);
const latest = () => t.server.ctx.repos.changes.latestSeq();

describe('writable library: folders, renames and moves land in the host folder', () => {
  test('API: a new folder, a rename and a move within the library are made on the host; the items keep their ids; the watch adds nothing', async () => {
    const owner = await seed.owner(t);
    const root = hostDir();
    write(root, 'notes.txt', 'my notes');
    const library = await addLibrary(admin, root, owner);
    const notes = await childNamed(owner, library.folderId, 'notes.txt');
    const mark = latest();

    const made = await owner.client.post('/api/files/folder', { name: 'Trips', parentId: library.folderId });
    expect(made.status).toBe(200);
    const trips = await json(made);
    expect(fs.statSync(path.join(root, 'Trips')).isDirectory()).toBe(true);
    expect(await childNamed(owner, library.folderId, 'Trips')).toMatchObject({ id: trips.id, library: true });

    expect((await owner.client.post('/api/files/rename', { id: notes.id, name: 'Notes 2026 ✓.txt' })).status).toBe(200);
    expect(fs.existsSync(path.join(root, 'notes.txt'))).toBe(false);
    expect(fs.readFileSync(path.join(root, 'Notes 2026 ✓.txt'), 'utf8')).toBe('my notes');

    expect((await owner.client.post('/api/files/move', { ids: [notes.id], parentId: trips.id })).status).toBe(200);
    expect(fs.readFileSync(path.join(root, 'Trips', 'Notes 2026 ✓.txt'), 'utf8')).toBe('my notes');
    expect(fs.readdirSync(root).sort()).toEqual(['Trips']);
    expect((await children(owner, trips.id)).map((i) => [i.id, i.name])).toEqual([[notes.id, 'Notes 2026 ✓.txt']]);
    const download = await owner.client.get(`/api/files/${notes.id}/download`);
    expect(await download.text()).toBe('my notes');

    // The change log has the owner's own three changes; the watch, seeing the host as the index says, adds none.
    await Bun.sleep(1500);
    expect(rowsAfter(owner.id, mark).map((r) => [r.kind, r.actorKind])).toEqual([
      ['item.created', 'login'],
      ['item.renamed', 'login'],
      ['item.moved', 'login'],
    ]);
    expect((await children(owner, library.folderId)).map((i) => i.name)).toEqual(['Trips']);
  });

  test('WebDAV: MKCOL and MOVE (a rename, then into a folder) are made on the host', async () => {
    const owner = await seed.owner(t);
    const root = hostDir();
    write(root, 'song.mp3', 'la la');
    const library = await addLibrary(admin, root, owner);
    const dav = await davLogin(t, owner);
    const base = encodeURIComponent(library.name);
    expect((await dav.request('MKCOL', `${base}/Albums`)).status).toBe(201);
    expect(fs.statSync(path.join(root, 'Albums')).isDirectory()).toBe(true);
    const renamed = await dav.request('MOVE', `${base}/song.mp3`, { headers: { destination: `${t.url}/dav/${base}/tune.mp3` } });
    expect(renamed.status).toBe(201);
    const moved = await dav.request('MOVE', `${base}/tune.mp3`, { headers: { destination: `${t.url}/dav/${base}/Albums/tune.mp3` } });
    expect(moved.status).toBe(201);
    expect(fs.readdirSync(root)).toEqual(['Albums']);
    expect(fs.readFileSync(path.join(root, 'Albums', 'tune.mp3'), 'utf8')).toBe('la la');
    const got = await dav.request('GET', `${base}/Albums/tune.mp3`);
    expect(await got.text()).toBe('la la');
  });

  test('the Nextcloud paths: MKCOL and MOVE are made on the host', async () => {
    const owner = await seed.owner(t);
    const root = hostDir();
    write(root, 'scan.pdf', 'pdf');
    const library = await addLibrary(admin, root, owner);
    const nc = new NextcloudApp(await davLogin(t, owner), owner.id);
    const base = encodeURIComponent(library.name);
    expect((await nc.files('MKCOL', `${base}/Scans`)).status).toBe(201);
    const destination = `${t.url}/remote.php/dav/files/${owner.id}/${base}/Scans/scan-1.pdf`;
    expect((await nc.files('MOVE', `${base}/scan.pdf`, { destination })).status).toBe(201);
    expect(fs.readdirSync(root)).toEqual(['Scans']);
    expect(fs.readFileSync(path.join(root, 'Scans', 'scan-1.pdf'), 'utf8')).toBe('pdf');
  });

  test("the door rules hold: a group's editor writes, a sub-user without the permission gets 403, another account 404", async () => {
    const owner = await seed.owner(t);
    const member = await seed.owner(t);
    const outsider = await seed.owner(t);
    const sub = await seed.subUser(t, owner, ['files.download']);
    const group = await json(await admin.client.post('/api/admin/groups', { name: `Writers ${Date.now()}` }));
    expect((await admin.client.post(`/api/admin/groups/${group.id}/members`, { email: member.email })).status).toBe(201);
    const root = hostDir();
    write(root, 'draft.txt', 'draft');
    const library = await addLibrary(admin, root, owner, { group: group.name });
    const draft = await childNamed(owner, library.folderId, 'draft.txt');

    expect((await member.client.post('/api/files/rename', { id: draft.id, name: 'final.txt' })).status).toBe(200);
    expect(fs.readdirSync(root)).toEqual(['final.txt']);
    const made = await member.client.post('/api/files/folder', { name: 'Shared work', parentId: library.folderId });
    expect(made.status).toBe(200);
    expect(fs.statSync(path.join(root, 'Shared work')).isDirectory()).toBe(true);

    expect((await sub.client.post('/api/files/rename', { id: draft.id, name: 'sub.txt' })).status).toBe(403);
    expect((await sub.client.post('/api/files/folder', { name: 'Sub', parentId: library.folderId })).status).toBe(403);
    expect((await outsider.client.post('/api/files/rename', { id: draft.id, name: 'theirs.txt' })).status).toBe(404);
    expect((await outsider.client.post('/api/files/folder', { name: 'Theirs', parentId: library.folderId })).status).toBe(404);
    expect(fs.readdirSync(root).sort()).toEqual(['Shared work', 'final.txt']);
  });

  test('a name the host cannot hold → 400 saying why; an entry already on the host that Coffer does not list → 409; nothing changes', async () => {
    const owner = await seed.owner(t);
    const root = hostDir();
    write(root, 'a.txt', 'a');
    // A FIFO is never listed: an entry on the host that Coffer does not know.
    expect(Bun.spawnSync(['mkfifo', path.join(root, 'pipe')]).exitCode).toBe(0);
    const library = await addLibrary(admin, root, owner);
    const a = await childNamed(owner, library.folderId, 'a.txt');
    // 90 characters, 270 bytes in UTF-8: within Coffer's name rule, beyond the host's 255 bytes.
    const long = '中'.repeat(90);
    const tooLong = await owner.client.post('/api/files/folder', { name: long, parentId: library.folderId });
    expect(tooLong.status).toBe(400);
    expect((await json(tooLong)).message).toBe('The name is 270 bytes long in UTF-8; the host folder holds at most 255.');
    const renamed = await owner.client.post('/api/files/rename', { id: a.id, name: long });
    expect(renamed.status).toBe(400);
    const taken = await owner.client.post('/api/files/folder', { name: 'pipe', parentId: library.folderId });
    expect(taken.status).toBe(409);
    expect((await json(taken)).message).toBe('"pipe" already exists in the library\'s folder on the server.');
    const over = await owner.client.post('/api/files/rename', { id: a.id, name: 'pipe' });
    expect(over.status).toBe(409);
    expect(fs.readdirSync(root).sort()).toEqual(['a.txt', 'pipe']);
    expect((await children(owner, library.folderId)).map((i) => i.name)).toEqual(['a.txt']);
  });

  test('names the library keeps for itself → 400 saying why: its temporary files\u2019 prefix anywhere, its trash folder at its top', async () => {
    const owner = await seed.owner(t);
    const root = hostDir();
    write(root, 'Sub/a.txt', 'a');
    write(root, 'top.txt', 'top');
    const library = await addLibrary(admin, root, owner);
    const sub = await childNamed(owner, library.folderId, 'Sub');
    const a = await childNamed(owner, sub.id, 'a.txt');
    const top = await childNamed(owner, library.folderId, 'top.txt');
    const temporary =
      'A name starting with ".coffer-upload-" is kept for Coffer\'s temporary files in a library (its scans leave them out and remove them): choose another name.';
    const trash = '".coffer-trash" at the top of a library is its trash folder: choose another name.';
    for (const [res, message] of [
      [await uploadRaw(owner.client, '.coffer-upload-notes.txt', 'mine', { parentId: sub.id }), temporary],
      [await owner.client.post('/api/files/folder', { name: '.coffer-upload-x', parentId: sub.id }), temporary],
      [await owner.client.post('/api/files/rename', { id: a.id, name: '.coffer-upload-a.txt' }), temporary],
      [await owner.client.post('/api/files/folder', { name: '.coffer-trash', parentId: library.folderId }), trash],
      [await owner.client.post('/api/files/rename', { id: top.id, name: '.coffer-trash' }), trash],
    ] as const) {
      expect([res.status, (await json(res)).message]).toEqual([400, message]);
    }
    // Below the top, ".coffer-trash" is a name like any other.
    expect((await owner.client.post('/api/files/folder', { name: '.coffer-trash', parentId: sub.id })).status).toBe(200);
    expect(fs.readdirSync(root).sort()).toEqual(['Sub', 'top.txt']);
    expect(fs.readdirSync(path.join(root, 'Sub')).sort()).toEqual(['.coffer-trash', 'a.txt']);
    await rescan(admin, library.id);
    expect((await children(owner, sub.id)).map((i) => i.name).sort()).toEqual(['.coffer-trash', 'a.txt']);
  });

  test('a symlink to a folder of the library (listed unavailable) is never written through: an upload, a new folder or a move into it → 400', async () => {
    const owner = await seed.owner(t);
    const root = hostDir();
    write(root, 'Sub/inside.txt', 'inside');
    write(root, 'top.txt', 'top');
    fs.symlinkSync(path.join(root, 'Sub'), path.join(root, 'Alias'));
    const library = await addLibrary(admin, root, owner);
    const alias = await childNamed(owner, library.folderId, 'Alias');
    expect(alias.unavailable).toBe(true);
    const top = await childNamed(owner, library.folderId, 'top.txt');
    const body = new FormData();
    body.append('parentId', alias.id);
    body.append('file', new File(['through the link'], 'new.txt'));
    const dav = await davLogin(t, owner);
    const refusals = [
      await owner.client.request('/api/files/upload', { method: 'POST', body }),
      await owner.client.post('/api/files/folder', { name: 'Made', parentId: alias.id }),
      await owner.client.post('/api/files/move', { ids: [top.id], parentId: alias.id }),
      await dav.put(`${encodeURIComponent(library.name)}/Alias/put.txt`, 'through the link'),
    ];
    for (const res of refusals) {
      expect(res.status).toBe(400);
      expect((await json(res)).message).toBe('The folder is a link on the server, not a folder of the library: Coffer does not follow it.');
    }
    expect(fs.readdirSync(path.join(root, 'Sub'))).toEqual(['inside.txt']);
    expect(fs.readFileSync(path.join(root, 'top.txt'), 'utf8')).toBe('top');
    await rescan(admin, library.id);
    expect((await children(owner, library.folderId)).map((i) => i.name).sort()).toEqual(['Alias', 'Sub', 'top.txt']);
    expect(await children(owner, alias.id)).toEqual([]);
  });
});
