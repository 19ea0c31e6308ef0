import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { json } from '../../helpers/client.ts';
import * as img from '../../helpers/images.ts';
import { uploadPhoto } from '../../helpers/photos.ts';
import * as seed from '../../helpers/seed.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t.stop());

/** A photo of `o` whose thumbnail is made (its width known to Photos). */
const photo = async (o: seed.SeededLogin, name: string) => uploadPhoto(o.client, name, await img.jpeg(24, 16), 24);

const thumb = (albumId: string, itemId: string) => `/api/albums/${albumId}/items/${itemId}/thumbnail`;

describe('albums shared with people', () => {
  test('a viewer sees the album and its photos through the album only; an editor adds and removes; a removed member gets 404', async () => {
    const o = await seed.owner(t);
    const member = await seed.owner(t, undefined, 'Grace Hopper');
    const [a, b] = [await photo(o, 'a.jpg'), await photo(o, 'b.jpg')];
    const { album } = await json(await o.client.post('/api/albums', { name: 'Lisbon', ids: [a.id, b.id] }));

    const added = await o.client.post(`/api/albums/${album.id}/members`, { email: member.email, role: 'viewer' });
    expect(added.status).toBe(201);
    expect((await json(added)).member).toMatchObject({ accountId: member.id, email: member.email, name: 'Grace Hopper', role: 'viewer' });
    expect((await json(await o.client.get(`/api/albums/${album.id}/members`))).members).toHaveLength(1);

    const shared = (await json(await member.client.get('/api/albums?whose=shared'))).albums;
    expect(shared).toEqual([
      expect.objectContaining({ id: album.id, name: 'Lisbon', itemCount: 2, role: 'viewer', owner: { id: o.id, name: 'Owner' } }),
    ]);
    expect((await json(await member.client.get('/api/albums'))).albums).toEqual([]);
    const page = await json(await member.client.get(`/api/albums/${album.id}`));
    expect(page.album.role).toBe('viewer');
    expect(page.items.map((i: { id: string }) => i.id).sort()).toEqual([a.id, b.id].sort());
    // The album is the door: the same file by its own door is another account's, 404.
    const door = await member.client.get(thumb(album.id, a.id));
    expect(door.status).toBe(200);
    expect(door.headers.get('content-type')).toBe('image/webp');
    expect((await member.client.get(`/api/files/${a.id}/thumbnail`)).status).toBe(404);
    expect((await member.client.get(`/api/files/${a.id}/download`)).status).toBe(404);
    const download = await member.client.get(`/api/albums/${album.id}/items/${a.id}/download`);
    expect(download.status).toBe(200);
    expect((await download.arrayBuffer()).byteLength).toBe(a.size);

    // A viewer changes nothing.
    const theirs = await photo(member, 'theirs.jpg');
    for (const [method, path, body] of [
      ['PATCH', `/api/albums/${album.id}`, { name: 'Mine now' }],
      ['DELETE', `/api/albums/${album.id}`, undefined],
      ['POST', `/api/albums/${album.id}/items`, { ids: [theirs.id] }],
      ['DELETE', `/api/albums/${album.id}/items`, { ids: [a.id] }],
      ['POST', `/api/albums/${album.id}/members`, { email: o.email, role: 'editor' }],
      ['DELETE', `/api/albums/${album.id}/members/${member.id}`, undefined],
    ] as const) {
      const res = await member.client.send(method, path, body);
      expect(res.status, `${method} ${path}`).toBe(403);
      expect((await json(res)).message).toBeTruthy();
    }

    // Made an editor (the same POST changes the role): adds a photo of its own and takes one out.
    expect((await json(await o.client.post(`/api/albums/${album.id}/members`, { accountId: member.id, role: 'editor' }))).member.role).toBe(
      'editor',
    );
    expect((await json(await member.client.post(`/api/albums/${album.id}/items`, { ids: [theirs.id] }))).added).toBe(1);
    expect((await json(await member.client.send('DELETE', `/api/albums/${album.id}/items`, { ids: [b.id] }))).removed).toBe(1);
    // An editor still neither renames, deletes nor shares the album.
    expect((await member.client.send('PATCH', `/api/albums/${album.id}`, { name: 'Mine now' })).status).toBe(403);
    expect((await member.client.send('DELETE', `/api/albums/${album.id}`)).status).toBe(403);
    // The owner sees the editor's photo through the album, and only there.
    const owned = await json(await o.client.get(`/api/albums/${album.id}`));
    expect(owned.items.map((i: { id: string }) => i.id).sort()).toEqual([a.id, theirs.id].sort());
    expect((await o.client.get(thumb(album.id, theirs.id))).status).toBe(200);
    expect((await o.client.get(`/api/files/${theirs.id}/thumbnail`)).status).toBe(404);
    // A file taken out of the album is no longer reachable through it.
    expect((await member.client.get(thumb(album.id, b.id))).status).toBe(404);
    // A member's sub-user without Download sees neither the photo nor its thumbnail through the album.
    const blind = await seed.subUser(t, { id: member.id }, []);
    for (const path of [thumb(album.id, a.id), `/api/albums/${album.id}/items/${a.id}/download`])
      expect((await blind.client.get(path)).status, path).toBe(403);

    // Made a viewer again, it may still take out its own photo, and only its own.
    const also = await photo(member, 'also.jpg');
    expect((await member.client.post(`/api/albums/${album.id}/items`, { ids: [also.id] })).status).toBe(200);
    expect((await o.client.post(`/api/albums/${album.id}/members`, { accountId: member.id, role: 'viewer' })).status).toBe(201);
    expect((await member.client.send('DELETE', `/api/albums/${album.id}/items`, { ids: [also.id, a.id] })).status).toBe(403);
    expect((await member.client.send('DELETE', `/api/albums/${album.id}/items`, { ids: [a.id] })).status).toBe(403);
    expect((await json(await member.client.send('DELETE', `/api/albums/${album.id}/items`, { ids: [also.id] }))).removed).toBe(1);

    expect((await o.client.send('DELETE', `/api/albums/${album.id}/members/${member.id}`)).status).toBe(200);
    // The removed member's own photo leaves the album with it: it could no longer take it out.
    const after = await json(await o.client.get(`/api/albums/${album.id}`));
    expect(after.items.map((i: { id: string }) => i.id)).toEqual([a.id]);
    expect((await o.client.get(thumb(album.id, theirs.id))).status).toBe(404);
    expect((await o.client.get(`/api/albums/${album.id}/items/${theirs.id}/download`)).status).toBe(404);
    for (const path of [
      `/api/albums/${album.id}`,
      thumb(album.id, a.id),
      `/api/albums/${album.id}/members`,
      `/api/albums/${album.id}/items/${a.id}/download`,
    ]) {
      const res = await member.client.get(path);
      expect(res.status, path).toBe(404);
    }
    expect((await member.client.post(`/api/albums/${album.id}/items`, { ids: [theirs.id] })).status).toBe(404);
    expect((await json(await member.client.get('/api/albums?whose=shared'))).albums).toEqual([]);
    expect((await o.client.send('DELETE', `/api/albums/${album.id}/members/${member.id}`)).status).toBe(404);
  });

  test('each file of an album says whose it is when it is not the caller’s: the owner sees an editor’s, the editor the owner’s', async () => {
    const o = await seed.owner(t, undefined, 'Ada Lovelace');
    const editor = await seed.owner(t, undefined, 'Grace Hopper');
    const mine = await photo(o, 'mine.jpg');
    const { album } = await json(await o.client.post('/api/albums', { name: 'Together', ids: [mine.id] }));
    await o.client.post(`/api/albums/${album.id}/members`, { accountId: editor.id, role: 'editor' });
    const theirs = await photo(editor, 'theirs.jpg');
    await editor.client.post(`/api/albums/${album.id}/items`, { ids: [theirs.id] });

    const owners = async (who: seed.SeededLogin) =>
      Object.fromEntries(
        (await json(await who.client.get(`/api/albums/${album.id}`))).items.map((i: { id: string; owner?: unknown }) => [
          i.id,
          i.owner ?? null,
        ]),
      );
    expect(await owners(o)).toEqual({ [mine.id]: null, [theirs.id]: { id: editor.id, name: 'Grace Hopper' } });
    expect(await owners(editor)).toEqual({ [mine.id]: { id: o.id, name: 'Ada Lovelace' }, [theirs.id]: null });
    // What is marked as another's answers 404 by its own door and is downloaded through the album's.
    expect((await o.client.get(`/api/files/${theirs.id}/download`)).status).toBe(404);
    expect((await o.client.get(`/api/albums/${album.id}/items/${theirs.id}/download`)).status).toBe(200);
    expect((await editor.client.get(`/api/files/${mine.id}/download`)).status).toBe(404);
    expect((await editor.client.get(`/api/albums/${album.id}/items/${mine.id}/download?inline=1`)).status).toBe(200);
  });

  test('the door: another account 404 everywhere, a sub-user without Share 403, bad people 404/409, bad input 422', async () => {
    const o = await seed.owner(t);
    const other = await seed.owner(t);
    const a = await photo(o, 'a.jpg');
    const { album } = await json(await o.client.post('/api/albums', { name: 'Private', ids: [a.id] }));
    for (const [method, path, body] of [
      ['GET', `/api/albums/${album.id}/members`, undefined],
      ['POST', `/api/albums/${album.id}/members`, { email: other.email, role: 'viewer' }],
      ['DELETE', `/api/albums/${album.id}/members/${o.id}`, undefined],
      ['GET', thumb(album.id, a.id), undefined],
      ['GET', `/api/albums/${album.id}/items/${a.id}/download`, undefined],
    ] as const) {
      const res = await other.client.send(method, path, body);
      expect(res.status, `${method} ${path}`).toBe(404);
    }

    const helper = await seed.subUser(t, { id: o.id }, ['files.download', 'files.edit']);
    for (const [method, path, body] of [
      ['POST', `/api/albums/${album.id}/members`, { email: other.email, role: 'viewer' }],
      ['DELETE', `/api/albums/${album.id}/members/${other.id}`, undefined],
    ] as const) {
      const res = await helper.client.send(method, path, body);
      expect(res.status).toBe(403);
      expect((await json(res)).message).toContain('"Share"');
    }
    // Downloading through the album needs Download, as any download does, and so does its thumbnail (it shows the content).
    const looker = await seed.subUser(t, { id: o.id }, []);
    for (const path of [`/api/albums/${album.id}/items/${a.id}/download`, thumb(album.id, a.id)]) {
      const res = await looker.client.get(path);
      expect(res.status, path).toBe(403);
      expect((await json(res)).message).toContain('"Download"');
    }
    expect((await helper.client.get(thumb(album.id, a.id))).status).toBe(200);
    expect((await helper.client.get(`/api/albums/${album.id}/items/${a.id}/download`)).status).toBe(200);
    // Reading is no sharing: the sub-user sees its account's album and its members.
    expect((await helper.client.get(`/api/albums/${album.id}/members`)).status).toBe(200);
    const sharer = await seed.subUser(t, { id: o.id }, ['files.share']);
    expect((await sharer.client.post(`/api/albums/${album.id}/members`, { email: other.email, role: 'viewer' })).status).toBe(201);
    // An editor changes the album, which Share alone may not: the sub-user makes one only with Modify too.
    const made = await sharer.client.post(`/api/albums/${album.id}/members`, { email: other.email, role: 'editor' });
    expect(made.status).toBe(403);
    expect((await json(made)).message).toContain('"Modify"');
    expect((await json(await o.client.get(`/api/albums/${album.id}/members`))).members.map((m: { role: string }) => m.role)).toEqual([
      'viewer',
    ]);
    const organizer = await seed.subUser(t, { id: o.id }, ['files.share', 'files.edit']);
    expect((await organizer.client.post(`/api/albums/${album.id}/members`, { email: other.email, role: 'editor' })).status).toBe(201);
    expect((await organizer.client.post(`/api/albums/${album.id}/members`, { email: other.email, role: 'viewer' })).status).toBe(201);

    expect((await o.client.post(`/api/albums/${album.id}/members`, { email: 'nobody@example.test', role: 'viewer' })).status).toBe(404);
    expect((await o.client.post(`/api/albums/${album.id}/members`, { accountId: helper.id, role: 'viewer' })).status).toBe(404);
    expect((await o.client.post(`/api/albums/${album.id}/members`, { email: o.email, role: 'viewer' })).status).toBe(409);
    for (const body of [
      { email: other.email, role: 'owner' },
      { role: 'viewer' },
      { email: other.email, accountId: other.id, role: 'viewer' },
    ]) {
      const res = await o.client.post(`/api/albums/${album.id}/members`, body);
      expect(res.status).toBe(422);
      expect((await json(res)).details?.length).toBeGreaterThan(0);
    }
    expect((await o.client.get(`/api/albums?whose=theirs`)).status).toBe(422);
    expect((await o.client.get(thumb(album.id, 'not-in-it'))).status).toBe(404);
    // A file in the trash is not reachable through the album either.
    await o.client.post('/api/files/delete', { ids: [a.id] });
    expect((await other.client.get(thumb(album.id, a.id))).status).toBe(404);
  });

  test('while the admin has sharing with people turned off, an album shared with people is closed to its members (403) and none is shared anew', async () => {
    const o = await seed.owner(t);
    const member = await seed.owner(t);
    const later = await seed.owner(t);
    const a = await photo(o, 'a.jpg');
    const { album } = await json(await o.client.post('/api/albums', { name: 'Paused', ids: [a.id] }));
    expect((await o.client.post(`/api/albums/${album.id}/members`, { accountId: member.id, role: 'editor' })).status).toBe(201);
    const settings = t.server.ctx.services.settings;
    settings.set('peopleSharing', false);
    try {
      for (const path of [
        `/api/albums/${album.id}`,
        `/api/albums/${album.id}/members`,
        thumb(album.id, a.id),
        `/api/albums/${album.id}/items/${a.id}/download`,
      ]) {
        const res = await member.client.get(path);
        expect(res.status, path).toBe(403);
        expect((await json(res)).message).toContain('Sharing with people is turned off');
      }
      expect((await member.client.send('DELETE', `/api/albums/${album.id}/items`, { ids: [a.id] })).status).toBe(403);
      expect((await json(await member.client.get('/api/albums?whose=shared'))).albums).toEqual([]);
      expect(await json(await member.client.get('/api/files/photos?whose=shared'))).toEqual([]);
      const added = await o.client.post(`/api/albums/${album.id}/members`, { accountId: later.id, role: 'viewer' });
      expect(added.status).toBe(403);
      expect(
        (await json(await o.client.get(`/api/albums/${album.id}/members`))).members.map((m: { accountId: string }) => m.accountId),
      ).toEqual([member.id]);
      // The owner keeps its album, and may still stop sharing it.
      expect((await json(await o.client.get(`/api/albums/${album.id}`))).items.map((i: { id: string }) => i.id)).toEqual([a.id]);
    } finally {
      settings.set('peopleSharing', true);
    }
    expect((await member.client.get(thumb(album.id, a.id))).status).toBe(200);
    expect((await json(await member.client.get('/api/albums?whose=shared'))).albums.map((x: { id: string }) => x.id)).toEqual([album.id]);
  });

  test('while its owner’s account is disabled, an album shared with people is closed to its members (404), as the owner’s shares are', async () => {
    await seed.owner(t); // The first account is the admin, which cannot be disabled.
    const o = await seed.owner(t);
    const member = await seed.owner(t);
    const a = await photo(o, 'a.jpg');
    const { album } = await json(await o.client.post('/api/albums', { name: 'Away', ids: [a.id] }));
    expect((await o.client.post(`/api/albums/${album.id}/members`, { accountId: member.id, role: 'viewer' })).status).toBe(201);
    const users = t.server.ctx.services.users;
    users.setDisabled(o.id, true, 'cli');
    try {
      for (const path of [`/api/albums/${album.id}`, `/api/albums/${album.id}/members`, thumb(album.id, a.id)])
        expect((await member.client.get(path)).status, path).toBe(404);
      expect((await json(await member.client.get('/api/albums?whose=shared'))).albums).toEqual([]);
    } finally {
      users.setDisabled(o.id, false, 'cli');
    }
    expect((await member.client.get(`/api/albums/${album.id}`)).status).toBe(200);
    expect((await json(await member.client.get('/api/albums?whose=shared'))).albums.map((x: { id: string }) => x.id)).toEqual([album.id]);
  });
});
