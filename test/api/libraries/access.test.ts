import { describe, expect, test } from 'bun:test';
import { json } from '../../helpers/client.ts';
import * as seed from '../../helpers/seed.ts';
import type { TestServer } from '../../helpers/server.ts';
import { addLibrary, childNamed, children, hostDir, libraryServer, write } from './helpers.ts';

let t: TestServer;
let admin: seed.SeededLogin;

libraryServer((s) => ({ t, admin } = s), { env: { LIBRARY_WATCH: '0', LIBRARY_RESCAN_MINUTES: '0' } });

const tokenOf = (url: string) => /\/s\/([A-Za-z0-9_-]+)/.exec(url)![1]!;

describe('library items through the door matrix', () => {
  test('sub-users: download needs files.download (403 without); search finds library files by name', async () => {
    const owner = await seed.owner(t);
    const root = hostDir();
    write(root, 'albums/holiday-beach.txt', 'sand');
    const library = await addLibrary(admin, root, owner);
    const albums = await childNamed(owner, library.folderId, 'albums');
    const file = await childNamed(owner, albums.id, 'holiday-beach.txt');
    const reader = await seed.subUser(t, owner, ['files.download']);
    const blind = await seed.subUser(t, owner, []);
    expect(await (await reader.client.get(`/api/files/${file.id}/download`)).text()).toBe('sand');
    const denied = await blind.client.get(`/api/files/${file.id}/download`);
    expect(denied.status).toBe(403);
    expect((await json(denied)).message).toContain('Download');
    const hits = await json(await owner.client.get('/api/files/search?q=holiday-beach'));
    expect(hits.map((h: { id: string }) => h.id)).toContain(file.id);
    const stranger = await seed.owner(t);
    expect(await json(await stranger.client.get('/api/files/search?q=holiday-beach'))).toEqual([]);
  });

  test('a share link to a library file serves the host bytes; unsharing ends it', async () => {
    const owner = await seed.owner(t);
    const root = hostDir();
    write(root, 'letter.txt', 'dear reader');
    const library = await addLibrary(admin, root, owner);
    const file = await childNamed(owner, library.folderId, 'letter.txt');
    const res = await owner.client.post('/api/files/share', { ids: [file.id], shared: true });
    expect(res.status).toBe(200);
    const token = tokenOf((await json(res)).links[file.id]);
    const got = await fetch(`${t.url}/s/${token}/file/${file.id}`);
    expect(got.status).toBe(200);
    expect(await got.text()).toBe('dear reader');
    expect((await owner.client.post('/api/files/share', { ids: [file.id], shared: false })).status).toBe(200);
    expect((await fetch(`${t.url}/s/${token}/file/${file.id}`)).status).toBe(404);
  });

  test('a read-only library given to a group: its members find it at the top of My files, read it, and cannot write (403)', async () => {
    const owner = await seed.owner(t);
    const member = await seed.owner(t);
    const outsider = await seed.owner(t);
    const group = await json(await admin.client.post('/api/admin/groups', { name: `Family ${Date.now()}` }));
    expect((await admin.client.post(`/api/admin/groups/${group.id}/members`, { email: member.email })).status).toBe(201);
    const root = hostDir();
    write(root, 'scan-001.txt', 'family archive');
    const library = await addLibrary(admin, root, owner, { readOnly: true, group: group.name });
    const top = await children(member, '');
    expect(top.map((i) => i.id)).toContain(library.folderId);
    expect(top.find((i) => i.id === library.folderId).library).toBe(true);
    const file = await childNamed(member, library.folderId, 'scan-001.txt');
    expect(await (await member.client.get(`/api/files/${file.id}/download`)).text()).toBe('family archive');
    const rename = await member.client.post('/api/files/rename', { id: file.id, name: 'other.txt' });
    expect(rename.status).toBe(403);
    expect((await children(outsider, '')).map((i) => i.id)).not.toContain(library.folderId);
    expect((await outsider.client.get(`/api/files/${file.id}/download`)).status).toBe(404);
  });
});
