import { describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { json } from '../../helpers/client.ts';
import { readZip, SseReader } from '../../helpers/files.ts';
import { davLogin, propfindRows } from '../../helpers/dav.ts';
import { png } from '../../helpers/images.ts';
import { createUpload } from '../../helpers/tus.ts';
import { eventually } from '../../helpers/eventually.ts';
import * as seed from '../../helpers/seed.ts';
import type { TestServer } from '../../helpers/server.ts';
import { addLibrary as addLibraryAs, childNamed, children, hostDir, libraryServer, rescan, write } from './helpers.ts';

let t: TestServer;
let admin: seed.SeededLogin;

// Changes are followed by the rescans this file asks for: inotify has its own file (watch.test.ts).
libraryServer((s) => ({ t, admin } = s), { env: { LIBRARY_WATCH: '0', LIBRARY_RESCAN_MINUTES: '0' } });

let counter = 0;
const addLibrary = (root: string, owner: seed.SeededLogin, extra: Record<string, unknown> = {}) => addLibraryAs(admin, root, owner, extra);

describe('POST /api/admin/libraries', () => {
  test('a path that is relative, missing, /, inside the data directory or inside another library → 400 naming why', async () => {
    const owner = await seed.owner(t);
    const root = hostDir();
    await addLibrary(root, owner);
    fs.mkdirSync(path.join(root, 'inner'));
    const cases: Array<[string, RegExp]> = [
      ['relative/path', /not an absolute path/],
      [path.join(root, 'nothing-here'), /does not exist/],
      ['/', /root of the file system/],
      [t.dataDir, /data directory/],
      [path.join(t.dataDir, 'blobs'), /data directory/],
      [path.join(root, 'inner'), /inside the library/],
      [path.dirname(root) === '/' ? '/' : path.dirname(path.dirname(t.dataDir)), /holds|data directory|root/],
    ];
    for (const [p, message] of cases) {
      const res = await admin.client.post('/api/admin/libraries', { path: p, name: `Bad ${++counter}`, owner: owner.email });
      expect(res.status).toBe(400);
      expect((await json(res)).message).toMatch(message);
    }
    const file = path.join(hostDir(), 'file.txt');
    fs.writeFileSync(file, 'x');
    const res = await admin.client.post('/api/admin/libraries', { path: file, name: `Bad ${++counter}`, owner: owner.email });
    expect(res.status).toBe(400);
    expect((await json(res)).message).toMatch(/not a folder/);
  });

  test('a non-admin → 403; an unknown owner → 404; nothing added', async () => {
    const owner = await seed.owner(t);
    const root = hostDir();
    const denied = await owner.client.post('/api/admin/libraries', { path: root, name: 'Mine', owner: owner.email });
    expect(denied.status).toBe(403);
    const unknown = await admin.client.post('/api/admin/libraries', { path: root, name: 'Mine', owner: 'nobody@example.test' });
    expect(unknown.status).toBe(404);
    const { libraries } = await json(await admin.client.get('/api/admin/libraries'));
    expect(libraries.some((l: { path: string }) => l.path === fs.realpathSync(root))).toBe(false);
    expect((await children(owner, '')).length).toBe(0);
  });
});

describe('scan', () => {
  test('a generated tree: deep, wide, unicode and odd names; symlinks in and out; a FIFO skipped; folders first at the top, marked', async () => {
    const owner = await seed.owner(t);
    const root = hostDir();
    const outside = hostDir();
    write(outside, 'secret.txt', 'not yours');
    let deep = '';
    for (let i = 0; i < 30; i++) deep += `level-${i}/`;
    write(root, `${deep}bottom.txt`, 'deep down');
    for (let i = 0; i < 300; i++) write(root, `wide/file-${i}.txt`, `file ${i}`);
    const odd = ['Ünïcødé 照片.txt', "quote's.txt", 'emoji 🎞.txt', '-dash.txt', '#hash%percent.txt'];
    for (const name of odd) write(root, `odd/${name}`, name);
    // Names Coffer's name rule refuses, or would store otherwise (trimmed), are left out of the index (and counted), never a failed scan.
    for (const name of ['tab\t.txt', 'double "quote".txt', 'back\\slash.txt', 'x'.repeat(150), ' leading space.txt'])
      write(root, `odd/${name}`, name);
    write(
      root,
      'photo.png',
      Buffer.from(
        '89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8cfc0f01f0005000201a7d6b0e50000000049454e44ae426082',
        'hex',
      ),
    );
    fs.symlinkSync(path.join(root, 'photo.png'), path.join(root, 'link-in.png'));
    fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(root, 'link-out.txt'));
    fs.symlinkSync(outside, path.join(root, 'link-out-folder'));
    expect(Bun.spawnSync(['mkfifo', path.join(root, 'a-fifo')]).exitCode).toBe(0);

    const library = await addLibrary(root, owner);
    const top = await children(owner, '');
    expect(top.map((i) => i.name)).toEqual([library.name]);
    expect(top[0].library).toBe(true);
    expect(top[0].type).toBe('folder');

    const inside = await children(owner, library.folderId);
    const names = inside.map((i) => i.name);
    expect(names).not.toContain('a-fifo');
    expect(names).toEqual(
      expect.arrayContaining(['level-0', 'wide', 'odd', 'photo.png', 'link-in.png', 'link-out.txt', 'link-out-folder']),
    );
    const byName = new Map(inside.map((i) => [i.name, i]));
    expect(byName.get('photo.png')).toMatchObject({ library: true, size: 70, mimeType: 'image/png' });
    expect(byName.get('photo.png').unavailable).toBeUndefined();
    expect(byName.get('link-in.png')).toMatchObject({ size: 70 });
    expect(byName.get('link-in.png').unavailable).toBeUndefined();
    expect(byName.get('link-out.txt')).toMatchObject({ unavailable: true });
    expect(byName.get('link-out-folder')).toMatchObject({ unavailable: true });

    expect((await children(owner, byName.get('wide').id)).length).toBe(300);
    const oddNames = (await children(owner, byName.get('odd').id)).map((i) => i.name).sort();
    expect(oddNames).toEqual([...odd].sort());
    let folderId = byName.get('level-0').id;
    for (let i = 1; i < 30; i++) folderId = (await childNamed(owner, folderId, `level-${i}`)).id;
    const bottom = await childNamed(owner, folderId, 'bottom.txt');
    expect(bottom).toMatchObject({ size: 9, library: true });

    const view = await json(await admin.client.get(`/api/admin/libraries/${library.id}`));
    // Files: the wide ones, the odd ones, bottom.txt, photo.png and the two file links; folders: 30 levels, wide, odd and the folder link.
    expect(view).toMatchObject({ files: 300 + odd.length + 4, folders: 33, available: true, scanError: null });
  });

  test('another account sees none of it: not in its My files, each id 404', async () => {
    const owner = await seed.owner(t);
    const stranger = await seed.owner(t);
    const root = hostDir();
    write(root, 'a.txt', 'hello');
    const library = await addLibrary(root, owner);
    const file = await childNamed(owner, library.folderId, 'a.txt');
    expect((await children(stranger, '')).length).toBe(0);
    expect((await stranger.client.get(`/api/files?parentId=${library.folderId}`)).status).toBe(404);
    expect((await stranger.client.get(`/api/files/${file.id}/download`)).status).toBe(404);
    expect((await stranger.client.get(`/api/files/${file.id}/info`)).status).toBe(404);
  });
});

describe('reads', () => {
  test('API download and a range stream the host file as it is; WebDAV GET and PROPFIND show it under /dav/', async () => {
    const owner = await seed.owner(t);
    const root = hostDir();
    const content = Buffer.alloc(3 * 1024 * 1024 + 17);
    for (let i = 0; i < content.length; i++) content[i] = (i * 7) % 251;
    write(root, 'music/track.bin', content);
    const library = await addLibrary(root, owner);
    const music = await childNamed(owner, library.folderId, 'music');
    const track = await childNamed(owner, music.id, 'track.bin');
    const res = await owner.client.get(`/api/files/${track.id}/download`);
    expect(res.status).toBe(200);
    expect(Buffer.from(await res.arrayBuffer()).equals(content)).toBe(true);
    const part = await owner.client.get(`/api/files/${track.id}/download`, { range: 'bytes=1000-1999' });
    expect(part.status).toBe(206);
    expect(Buffer.from(await part.arrayBuffer()).equals(content.subarray(1000, 2000))).toBe(true);

    const dav = await davLogin(t, owner);
    const listed = await dav.list('');
    expect(listed.some((href) => href.endsWith(`/dav/${library.name}/`))).toBe(true);
    const got = await dav.request('GET', `${encodeURIComponent(library.name)}/music/track.bin`);
    expect(got.status).toBe(200);
    expect(Buffer.from(await got.arrayBuffer()).equals(content)).toBe(true);
  });

  test('a library image has a thumbnail and every door says so alike (hasThumbnail, nc:has-preview, the thumbnail 200); one Coffer cannot read has none', async () => {
    const owner = await seed.owner(t);
    const root = hostDir();
    const outside = hostDir();
    write(root, 'beach.png', await png(64, 48));
    write(outside, 'private.png', await png(64, 48));
    fs.symlinkSync(path.join(outside, 'private.png'), path.join(root, 'away.png'));
    const library = await addLibrary(root, owner);
    const beach = await childNamed(owner, library.folderId, 'beach.png');
    expect(beach).toMatchObject({ mimeType: 'image/png', library: true, hasThumbnail: true });
    const thumb = await owner.client.get(`/api/files/${beach.id}/thumbnail`);
    expect(thumb.status).toBe(200);
    expect(thumb.headers.get('content-type')).toStartWith('image/');
    const away = await childNamed(owner, library.folderId, 'away.png');
    expect(away).toMatchObject({ mimeType: 'image/png', unavailable: true, hasThumbnail: false });
    expect((await owner.client.get(`/api/files/${away.id}/thumbnail`)).status).toBe(404);

    const dav = await davLogin(t, owner);
    const props = `<?xml version="1.0"?><d:propfind xmlns:d="DAV:" xmlns:nc="http://nextcloud.org/ns"><d:prop><nc:has-preview/></d:prop></d:propfind>`;
    const previewOf = async (name: string) => {
      const res = await dav.propfind(`${encodeURIComponent(library.name)}/${name}`, '0', props);
      expect(res.status).toBe(207);
      return propfindRows(await res.text())[0]!.props['has-preview'];
    };
    expect(await previewOf('beach.png')).toBe('true');
    expect(await previewOf('away.png')).toBe('false');
  });

  test('a file replaced on the host by a symlink leading out is refused (409), never read', async () => {
    const owner = await seed.owner(t);
    const root = hostDir();
    const outside = hostDir();
    write(outside, 'secret.txt', 'top secret!');
    write(root, 'doc.txt', 'public text');
    const library = await addLibrary(root, owner);
    const doc = await childNamed(owner, library.folderId, 'doc.txt');
    fs.rmSync(path.join(root, 'doc.txt'));
    fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(root, 'doc.txt'));
    const res = await owner.client.get(`/api/files/${doc.id}/download`);
    expect(res.status).toBe(409);
    expect(await res.text()).not.toContain('top secret');
  });
});

describe('read-only library', () => {
  test('every write answers 403 "This library is read-only", through the API and WebDAV; the host folder is untouched', async () => {
    const owner = await seed.owner(t);
    const root = hostDir();
    write(root, 'keep.txt', 'keep me');
    fs.mkdirSync(path.join(root, 'sub'));
    const library = await addLibrary(root, owner, { readOnly: true });
    const keep = await childNamed(owner, library.folderId, 'keep.txt');
    const sub = await childNamed(owner, library.folderId, 'sub');
    const own = await json(await owner.client.post('/api/files/folder', { name: 'Mine' }));
    const attempts: Array<[string, Promise<Response>]> = [
      ['upload', owner.client.request('/api/files/upload', { method: 'POST', body: form('new.txt', 'x', library.folderId) })],
      ['folder', owner.client.post('/api/files/folder', { name: 'New', parentId: library.folderId })],
      ['rename', owner.client.post('/api/files/rename', { id: keep.id, name: 'renamed.txt' })],
      ['move out', owner.client.post('/api/files/move', { ids: [keep.id], parentId: own.id })],
      ['move in', owner.client.post('/api/files/move', { ids: [own.id], parentId: sub.id })],
      ['trash', owner.client.post('/api/files/delete', { ids: [keep.id] })],
    ];
    for (const [what, attempt] of attempts) {
      const res = await attempt;
      expect({ what, status: res.status }).toEqual({ what, status: 403 });
      expect((await json(res)).message).toBe('This library is read-only');
    }
    const dav = await davLogin(t, owner);
    const base = encodeURIComponent(library.name);
    for (const res of [
      await dav.put(`${base}/new.txt`, 'x'),
      await dav.request('MKCOL', `${base}/newdir`),
      await dav.request('DELETE', `${base}/keep.txt`),
      await dav.request('MOVE', `${base}/keep.txt`, { headers: { destination: `${t.url}/dav/${base}/moved.txt` } }),
    ]) {
      expect(res.status).toBe(403);
    }
    // tus: refused at creation, before a byte is sent.
    const created = await createUpload(owner.client, 4, { filename: 'tus.txt', parentId: library.folderId });
    expect(created.status).toBe(403);
    expect((await json(created)).message).toBe('This library is read-only');
    expect(fs.readdirSync(root).sort()).toEqual(['keep.txt', 'sub']);
    expect(fs.readFileSync(path.join(root, 'keep.txt'), 'utf8')).toBe('keep me');
    expect((await children(owner, library.folderId)).map((i) => i.name).sort()).toEqual(['keep.txt', 'sub']);
  });

  test("the library's own folder cannot be renamed or trashed (403)", async () => {
    const owner = await seed.owner(t);
    const library = await addLibrary(hostDir(), owner);
    expect((await owner.client.post('/api/files/rename', { id: library.folderId, name: 'Other' })).status).toBe(403);
    expect((await owner.client.post('/api/files/delete', { ids: [library.folderId] })).status).toBe(403);
  });
});

function form(name: string, content: string, parentId: string): FormData {
  const f = new FormData();
  f.append('parentId', parentId);
  f.append('files', new File([content], name));
  return f;
}

describe('rescan', () => {
  test('create, modify, rename (same item), delete and a folder moved by another program are followed', async () => {
    const owner = await seed.owner(t);
    const root = hostDir();
    write(root, 'a.txt', 'one');
    write(root, 'b.txt', 'bee');
    write(root, 'gone.txt', 'bye');
    write(root, 'box/inner.txt', 'inside');
    fs.mkdirSync(path.join(root, 'shelf'));
    const library = await addLibrary(root, owner);
    const a = await childNamed(owner, library.folderId, 'a.txt');
    const b = await childNamed(owner, library.folderId, 'b.txt');
    const box = await childNamed(owner, library.folderId, 'box');
    const shelf = await childNamed(owner, library.folderId, 'shelf');
    const inner = await childNamed(owner, box.id, 'inner.txt');

    write(root, 'new.txt', 'fresh');
    fs.writeFileSync(path.join(root, 'a.txt'), 'one, then more');
    fs.renameSync(path.join(root, 'b.txt'), path.join(root, 'bee.txt'));
    fs.rmSync(path.join(root, 'gone.txt'));
    fs.renameSync(path.join(root, 'box'), path.join(root, 'shelf', 'box'));
    const result = await rescan(admin, library.id);
    expect(result.scanError).toBeNull();

    const top = new Map((await children(owner, library.folderId)).map((i) => [i.name, i]));
    expect([...top.keys()].sort()).toEqual(['a.txt', 'bee.txt', 'new.txt', 'shelf']);
    expect(top.get('a.txt')).toMatchObject({ id: a.id, size: 14 });
    expect(top.get('bee.txt').id).toBe(b.id);
    const moved = await childNamed(owner, shelf.id, 'box');
    expect(moved.id).toBe(box.id);
    expect((await childNamed(owner, box.id, 'inner.txt')).id).toBe(inner.id);
    const downloaded = await owner.client.get(`/api/files/${a.id}/download`);
    expect(await downloaded.text()).toBe('one, then more');
  });

  test('a move and a rename by another program are heard live as other moves are (by a member of a folder it left too), as a resumed stream replays them', async () => {
    const owner = await seed.owner(t);
    const member = await seed.owner(t);
    const root = hostDir();
    write(root, 'box/a.txt', 'leaves');
    write(root, 'box/c.txt', 'stays');
    fs.mkdirSync(path.join(root, 'shelf'));
    const library = await addLibrary(root, owner);
    const box = await childNamed(owner, library.folderId, 'box');
    const shelf = await childNamed(owner, library.folderId, 'shelf');
    const a = await childNamed(owner, box.id, 'a.txt');
    const c = await childNamed(owner, box.id, 'c.txt');
    expect((await owner.client.post(`/api/files/${box.id}/members`, { email: member.email, role: 'viewer' })).status).toBe(201);
    const open = async (login: seed.SeededLogin, lastEventId?: string) => {
      const reader = new SseReader(await login.client.get('/api/files/events', lastEventId ? { 'Last-Event-ID': lastEventId } : undefined));
      expect((await reader.nextEvent()).data).toEqual({ type: 'connected' });
      return reader;
    };
    const until = async (reader: SseReader) => {
      const out = [];
      for (let next = await reader.nextEvent(500).catch(() => null); next; next = await reader.nextEvent(500).catch(() => null))
        out.push({ type: next.data.type, data: next.data.data });
      await reader.close();
      return out;
    };
    const from = String(t.server.ctx.services.changes.latestSeq());
    const [owned, shared] = [await open(owner), await open(member)];

    fs.renameSync(path.join(root, 'box/a.txt'), path.join(root, 'shelf/b.txt'));
    fs.renameSync(path.join(root, 'box/c.txt'), path.join(root, 'box/d.txt'));
    expect((await rescan(admin, library.id)).scanError).toBeNull();

    const heard = await until(owned);
    expect(heard.map((e) => [e.type, e.data.id, e.data.name, e.data.parentId, e.data.oldName])).toEqual([
      ['file.moved', a.id, 'b.txt', shelf.id, undefined],
      ['file.renamed', a.id, 'b.txt', shelf.id, 'a.txt'],
      ['file.renamed', c.id, 'd.txt', box.id, 'c.txt'],
    ]);
    expect(await until(shared)).toEqual(heard);
    expect(await until(await open(owner, from))).toEqual(heard);
    expect(await until(await open(member, from))).toEqual(heard);
  });

  test("a library added and removed is heard live on its owner's stream: its folder made (before the first scan's summary), then deleted for good", async () => {
    const owner = await seed.owner(t);
    const root = hostDir();
    write(root, 'a.txt', 'one');
    const stream = new SseReader(await owner.client.get('/api/files/events'));
    expect((await stream.nextEvent()).data).toEqual({ type: 'connected' });
    const library = await addLibrary(root, owner);
    expect((await stream.nextEvent()).data).toMatchObject({
      type: 'folder.created',
      data: { id: library.folderId, name: library.name, type: 'folder', parentId: null, userId: owner.id },
    });
    expect((await stream.nextEvent()).data).toMatchObject({ type: 'file.updated', data: { id: library.folderId, action: 'library-scan' } });
    expect((await admin.client.delete(`/api/admin/libraries/${library.id}`)).status).toBe(200);
    expect((await stream.nextEvent()).data).toMatchObject({
      type: 'file.permanently_deleted',
      data: { id: library.folderId, name: library.name, parentId: null },
    });
    expect(await stream.quietFor(300)).toBe(true);
    await stream.close();
  });

  test('a library removed: the members of its group, and a person it was shared with, lose it at once as an unshare tells them', async () => {
    const owner = await seed.owner(t);
    const [inGroup, person] = [await seed.owner(t), await seed.owner(t)];
    const group = await json(await admin.client.post('/api/admin/groups', { name: `Library readers ${++counter}` }));
    expect((await admin.client.post(`/api/admin/groups/${group.id}/members`, { email: inGroup.email })).status).toBe(201);
    const root = hostDir();
    write(root, 'a.txt', 'one');
    const library = await addLibrary(root, owner, { group: group.name });
    expect((await owner.client.post(`/api/files/${library.folderId}/members`, { email: person.email, role: 'viewer' })).status).toBe(201);
    const streams = [
      new SseReader(await inGroup.client.get('/api/files/events')),
      new SseReader(await person.client.get('/api/files/events')),
    ];
    for (const s of streams) expect((await s.nextEvent()).data).toEqual({ type: 'connected' });
    expect((await admin.client.delete(`/api/admin/libraries/${library.id}`)).status).toBe(200);
    for (const s of streams) {
      const heard = [];
      for (let next = await s.nextEvent(500).catch(() => null); next; next = await s.nextEvent(500).catch(() => null))
        heard.push(next.data);
      await s.close();
      expect(heard).toContainEqual(expect.objectContaining({ type: 'share.removed', data: { id: library.folderId, name: library.name } }));
    }
  });

  test("a scan announced by one summary (the first, one of more than 200 changes) holds back no later event's id", async () => {
    const owner = await seed.owner(t);
    const root = hostDir();
    write(root, 'a.txt', 'one');
    const stream = new SseReader(await owner.client.get('/api/files/events'));
    expect((await stream.nextEvent()).data).toEqual({ type: 'connected' });
    const idOfNextFolder = async (name: string) => {
      expect((await owner.client.post('/api/files/folder', { name })).status).toBe(200);
      for (;;) {
        const event = await stream.nextEvent();
        if (event.data.type === 'folder.created' && event.data.data.name === name) return event.id;
      }
    };
    const library = await addLibrary(root, owner);
    expect(await idOfNextFolder('after the first scan')).toBe(String(t.server.ctx.services.changes.latestSeq()));
    for (let i = 0; i < 201; i++) write(root, `many/${i}.txt`, `${i}`);
    await rescan(admin, library.id);
    expect(await idOfNextFolder('after a large scan')).toBe(String(t.server.ctx.services.changes.latestSeq()));
    await stream.close();
  });

  test('a library folder removed while the server runs: items shown unavailable, not deleted, back when it returns', async () => {
    const owner = await seed.owner(t);
    const parent = hostDir();
    const root = path.join(parent, 'archive');
    write(root, 'x/y.txt', 'why');
    write(root, 'z.txt', 'zed');
    const library = await addLibrary(root, owner);
    const before = await children(owner, library.folderId);
    fs.renameSync(root, path.join(parent, 'archive-away'));
    const away = await rescan(admin, library.id);
    expect(away.available).toBe(false);
    expect(away.scanError).toMatch(/cannot be reached/);
    const during = await children(owner, library.folderId);
    expect(during.map((i) => i.id).sort()).toEqual(before.map((i) => i.id).sort());
    for (const item of during) expect(item.unavailable).toBe(true);
    const z = during.find((i) => i.name === 'z.txt');
    expect((await owner.client.get(`/api/files/${z.id}/download`)).status).toBe(409);

    fs.renameSync(path.join(parent, 'archive-away'), root);
    const back = await rescan(admin, library.id);
    expect(back).toMatchObject({ available: true, scanError: null });
    const after = await children(owner, library.folderId);
    expect(after.map((i) => i.id).sort()).toEqual(before.map((i) => i.id).sort());
    for (const item of after) expect(item.unavailable).toBeUndefined();
    expect(await (await owner.client.get(`/api/files/${z.id}/download`)).text()).toBe('zed');
  });

  test('an empty mount point in place of the indexed folder (a disk unmounted) keeps every item', async () => {
    const owner = await seed.owner(t);
    const parent = hostDir();
    const root = path.join(parent, 'disk');
    write(root, 'photo.jpg', 'jpeg bytes');
    const library = await addLibrary(root, owner);
    const before = await children(owner, library.folderId);
    fs.renameSync(root, path.join(parent, 'disk-away'));
    fs.mkdirSync(root);
    const away = await rescan(admin, library.id);
    expect(away.available).toBe(false);
    expect(away.scanError).toMatch(/mounted/);
    expect((await children(owner, library.folderId)).map((i) => i.id)).toEqual(before.map((i) => i.id));
  });
});

describe('scan after start', () => {
  test('changes made while the server was down are found by the scan after start (inotify off)', async () => {
    const owner = await seed.owner(t);
    const root = hostDir();
    write(root, 'before.txt', 'b');
    const library = await addLibrary(root, owner);
    const before = await childNamed(owner, library.folderId, 'before.txt');
    await t.restart({
      whileDown: async () => {
        write(root, 'while-down.txt', 'new');
        fs.renameSync(path.join(root, 'before.txt'), path.join(root, 'after.txt'));
      },
    });
    admin.client = await seed.login(t, admin.email);
    owner.client = await seed.login(t, owner.email);
    await eventually(async () => Boolean(await childNamed(owner, library.folderId, 'while-down.txt')));
    expect((await childNamed(owner, library.folderId, 'after.txt')).id).toBe(before.id);
  });
});

describe('special files swapped in after a scan', () => {
  test('a file the host turned into a named pipe, a socket, or a link to a device, is refused at once by every door; a ZIP of its folder carries the other files', async () => {
    const owner = await seed.owner(t);
    const root = hostDir();
    write(root, 'keep.txt', 'kept');
    write(root, 'piped.txt', 'about to be a pipe');
    write(root, 'socket.txt', 'about to be a socket');
    write(root, 'device.txt', 'about to be a device');
    const library = await addLibrary(root, owner);
    const piped = await childNamed(owner, library.folderId, 'piped.txt');
    const socket = await childNamed(owner, library.folderId, 'socket.txt');
    const device = await childNamed(owner, library.folderId, 'device.txt');
    fs.rmSync(path.join(root, 'piped.txt'));
    expect(Bun.spawnSync(['mkfifo', path.join(root, 'piped.txt')]).exitCode).toBe(0);
    fs.rmSync(path.join(root, 'socket.txt'));
    const listening = net.createServer();
    await new Promise<void>((resolve) => listening.listen(path.join(root, 'socket.txt'), resolve));
    fs.rmSync(path.join(root, 'device.txt'));
    fs.symlinkSync('/dev/zero', path.join(root, 'device.txt'));

    try {
      const dav = await davLogin(t, owner);
      for (const item of [piped, socket, device]) {
        expect({ name: item.name, status: (await owner.client.get(`/api/files/${item.id}/download`)).status }).toEqual({
          name: item.name,
          status: 409,
        });
        expect((await dav.request('GET', `${encodeURIComponent(library.name)}/${item.name}`)).status).toBe(409);
      }
      const zip = await owner.client.post('/api/files/download/bulk', { ids: [library.folderId] });
      expect(zip.status).toBe(200);
      const entries = readZip(Buffer.from(await zip.arrayBuffer()));
      expect(entries.map((e) => e.name).sort()).toEqual([`${library.name}/`, `${library.name}/keep.txt`]);
      expect(entries.find((e) => e.name.endsWith('keep.txt'))!.data.toString()).toBe('kept');
    } finally {
      listening.close();
    }
  });

  test('a file the host turned into a named pipe is never opened: a program waiting to write into it goes on waiting', async () => {
    const owner = await seed.owner(t);
    const root = hostDir();
    write(root, 'piped.txt', 'about to be a pipe');
    const library = await addLibrary(root, owner);
    const piped = await childNamed(owner, library.folderId, 'piped.txt');
    fs.rmSync(path.join(root, 'piped.txt'));
    expect(Bun.spawnSync(['mkfifo', path.join(root, 'piped.txt')]).exitCode).toBe(0);
    const marker = path.join(hostDir(), 'opened');
    // Its open for writing returns only once a reader opens the pipe.
    const writer = Bun.spawn(['sh', '-c', 'exec 3>"$0"; echo opened > "$1"', path.join(root, 'piped.txt'), marker]);
    try {
      expect((await owner.client.get(`/api/files/${piped.id}/download`)).status).toBe(409);
      const dav = await davLogin(t, owner);
      expect((await dav.request('GET', `${encodeURIComponent(library.name)}/piped.txt`)).status).toBe(409);
      await Bun.sleep(300);
      expect(fs.existsSync(marker)).toBe(false);
    } finally {
      writer.kill();
    }
  });
});

describe('a file made shorter on the host after its scan', () => {
  test('its download (API, WebDAV) is cut off with an error, never a short file sent as whole; a ranged read past its end too', async () => {
    const owner = await seed.owner(t);
    const root = hostDir();
    write(root, 'log.bin', Buffer.alloc(3 * 1024 * 1024, 7));
    const library = await addLibrary(root, owner);
    const file = await childNamed(owner, library.folderId, 'log.bin');
    fs.truncateSync(path.join(root, 'log.bin'), 1000);
    const dav = await davLogin(t, owner);
    // Cut off: before the status line when the error comes first (a reset), else part-way through the body.
    const outcome = (get: () => Promise<Response>) =>
      get()
        .then((r) => r.arrayBuffer())
        .then(
          (b) => `complete: ${b.byteLength} bytes`,
          () => 'cut off',
        );
    for (const get of [
      () => owner.client.get(`/api/files/${file.id}/download`),
      () => dav.request('GET', `${encodeURIComponent(library.name)}/log.bin`),
      () => owner.client.get(`/api/files/${file.id}/download`, { range: 'bytes=500-1999' }),
    ]) {
      expect(await outcome(get)).toBe('cut off');
    }
    const whole = await owner.client.get(`/api/files/${file.id}/download`, { range: 'bytes=0-999' });
    expect((await whole.arrayBuffer()).byteLength).toBe(1000);
  });
});

describe('DELETE /api/admin/libraries/:id', () => {
  test('forgets the library and its items; the host folder stays as it was', async () => {
    const owner = await seed.owner(t);
    const root = hostDir();
    write(root, 'stay.txt', 'stay');
    const library = await addLibrary(root, owner);
    const res = await admin.client.delete(`/api/admin/libraries/${library.id}`);
    expect(res.status).toBe(200);
    expect((await children(owner, '')).length).toBe(0);
    expect(fs.readFileSync(path.join(root, 'stay.txt'), 'utf8')).toBe('stay');
    expect((await admin.client.get(`/api/admin/libraries/${library.id}`)).status).toBe(404);
  });
});
