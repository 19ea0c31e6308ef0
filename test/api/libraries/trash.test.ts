import { describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import { json } from '../../helpers/client.ts';
import { davLogin } from '../../helpers/dav.ts';
import { listAll, upload } from '../../helpers/files.ts';
import * as seed from '../../helpers/seed.ts';
import type { TestServer } from '../../helpers/server.ts';
import { addLibrary, childNamed, children, hostDir, libraryServer, refusalScene, write } from './helpers.ts';

let t: TestServer;
let admin: seed.SeededLogin;

libraryServer((s) => ({ t, admin } = s), { startWorker: false });

const trashOf = (login: seed.SeededLogin) => listAll(login.client, '/api/files/trash');
const bin = (root: string) => path.join(root, '.coffer-trash');

describe('deleting library items: the host file goes into <library>/.coffer-trash/', () => {
  test("API delete moves the file and the folder into the library's trash folder; Coffer's trash lists them; a restore puts them back", async () => {
    const owner = await seed.owner(t);
    const root = hostDir();
    write(root, 'notes.txt', 'my notes');
    write(root, 'Trip/day1.jpg', 'jpeg');
    const library = await addLibrary(admin, root, owner);
    const notes = await childNamed(owner, library.folderId, 'notes.txt');
    const trip = await childNamed(owner, library.folderId, 'Trip');

    const deleted = await owner.client.post('/api/files/delete', { ids: [notes.id, trip.id] });
    expect(deleted.status).toBe(200);
    expect(fs.readdirSync(root)).toEqual(['.coffer-trash']);
    expect(fs.readdirSync(bin(root)).sort()).toEqual([notes.id, trip.id].sort());
    expect(fs.readFileSync(path.join(bin(root), notes.id), 'utf8')).toBe('my notes');
    expect(fs.readFileSync(path.join(bin(root), trip.id, 'day1.jpg'), 'utf8')).toBe('jpeg');
    expect((await trashOf(owner)).map((i) => i.name).sort()).toEqual(['Trip', 'notes.txt']);
    expect(await children(owner, library.folderId)).toEqual([]);
    // Neither a rescan nor WebDAV shows the library's trash folder.
    expect((await admin.client.post(`/api/admin/libraries/${library.id}/rescan`, {})).status).toBeLessThan(300);
    await Bun.sleep(500);
    expect(await children(owner, library.folderId)).toEqual([]);
    const dav = await davLogin(t, owner);
    const listing = await (await dav.request('PROPFIND', encodeURIComponent(library.name), { headers: { depth: '1' } })).text();
    expect(listing).not.toContain('coffer-trash');

    const restored = await owner.client.post('/api/files/trash/restore', { ids: [notes.id, trip.id] });
    expect(restored.status).toBe(200);
    expect(fs.readdirSync(root).sort()).toEqual(['.coffer-trash', 'Trip', 'notes.txt']);
    expect(fs.readdirSync(bin(root))).toEqual([]);
    expect(fs.readFileSync(path.join(root, 'Trip', 'day1.jpg'), 'utf8')).toBe('jpeg');
    expect((await children(owner, library.folderId)).map((i) => [i.id, i.name])).toEqual([
      [trip.id, 'Trip'],
      [notes.id, 'notes.txt'],
    ]);
    expect(await (await owner.client.get(`/api/files/${notes.id}/download`)).text()).toBe('my notes');
  });

  test('a restore onto a name taken meanwhile is renamed, on the host too', async () => {
    const owner = await seed.owner(t);
    const root = hostDir();
    write(root, 'plan.txt', 'first plan');
    const library = await addLibrary(admin, root, owner);
    const plan = await childNamed(owner, library.folderId, 'plan.txt');
    expect((await owner.client.post('/api/files/delete', { ids: [plan.id] })).status).toBe(200);
    const again = new FormData();
    again.append('parentId', library.folderId);
    again.append('files', new File(['second plan'], 'plan.txt'));
    expect((await owner.client.request('/api/files/upload', { method: 'POST', body: again })).status).toBe(200);
    expect((await owner.client.post('/api/files/trash/restore', { ids: [plan.id] })).status).toBe(200);
    expect(fs.readFileSync(path.join(root, 'plan.txt'), 'utf8')).toBe('second plan');
    expect(fs.readFileSync(path.join(root, 'plan (1).txt'), 'utf8')).toBe('first plan');
    expect((await children(owner, library.folderId)).find((i) => i.id === plan.id)?.name).toBe('plan (1).txt');
  });

  test('WebDAV DELETE trashes into the library trash folder; deleting from the trash and emptying it remove the host files', async () => {
    const owner = await seed.owner(t);
    const root = hostDir();
    write(root, 'a.txt', 'a');
    write(root, 'b.txt', 'b');
    write(root, 'Old/c.txt', 'c');
    const library = await addLibrary(admin, root, owner);
    const a = await childNamed(owner, library.folderId, 'a.txt');
    const b = await childNamed(owner, library.folderId, 'b.txt');
    const old = await childNamed(owner, library.folderId, 'Old');
    await upload(owner.client, 'own.txt', 'x'.repeat(100));
    const usedBefore = t.server.ctx.services.quota.usage(owner.id).used;
    expect(usedBefore).toBe(100);
    const dav = await davLogin(t, owner);
    expect((await dav.request('DELETE', `${encodeURIComponent(library.name)}/a.txt`)).status).toBe(204);
    expect(fs.readdirSync(bin(root))).toEqual([a.id]);
    expect((await owner.client.post('/api/files/delete', { ids: [b.id, old.id] })).status).toBe(200);

    expect((await owner.client.post('/api/files/trash/delete', { ids: [a.id] })).status).toBeLessThan(300);
    await t.server.worker.drain();
    expect(fs.readdirSync(bin(root)).sort()).toEqual([b.id, old.id].sort());
    expect((await owner.client.post('/api/files/trash/empty', {})).status).toBeLessThan(300);
    await t.server.worker.drain();
    expect(fs.readdirSync(bin(root))).toEqual([]);
    expect(fs.readdirSync(root)).toEqual(['.coffer-trash']);
    expect(await trashOf(owner)).toEqual([]);
    // Library files never counted in the usage: purging them takes nothing off it.
    expect(t.server.ctx.services.quota.usage(owner.id).used).toBe(usedBefore);
  });

  test('a sub-user without the delete permission gets 403, another account 404; a read-only library 403; nothing moves', async () => {
    const { owner, outsider, sub, root, keep } = await refusalScene(t, admin);
    expect((await sub.client.post('/api/files/delete', { ids: [keep.id] })).status).toBe(403);
    expect((await outsider.client.post('/api/files/delete', { ids: [keep.id] })).status).toBe(404);
    const fixedRoot = hostDir();
    write(fixedRoot, 'fixed.txt', 'fixed');
    const fixed = await addLibrary(admin, fixedRoot, owner, { readOnly: true });
    const fixedFile = await childNamed(owner, fixed.folderId, 'fixed.txt');
    const refused = await owner.client.post('/api/files/delete', { ids: [fixedFile.id] });
    expect(refused.status).toBe(403);
    expect((await json(refused)).message).toBe('This library is read-only');
    expect(fs.readdirSync(root)).toEqual(['keep.txt']);
    expect(fs.readdirSync(fixedRoot)).toEqual(['fixed.txt']);
  });
});
