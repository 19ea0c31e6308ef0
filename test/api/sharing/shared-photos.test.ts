import { describe, expect, test } from 'bun:test';
import { json } from '../../helpers/client.ts';
import { folder, upload } from '../../helpers/files.ts';
import * as img from '../../helpers/images.ts';
import { uploadPhoto } from '../../helpers/photos.ts';
import * as seed from '../../helpers/seed.ts';
import type { TestServer } from '../../helpers/server.ts';
import { serverWithAdmin } from '../../helpers/suite.ts';

let t: TestServer;
let admin: seed.SeededLogin;
serverWithAdmin((s) => ({ t, admin } = s));

/** A photo taken on day `day` of May 2024, its taken date read (Photos orders by it). */
const photo = async (o: seed.SeededLogin, name: string, day: number, parentId?: string) =>
  uploadPhoto(o.client, name, await img.jpegTakenAt(`2024:05:${String(day).padStart(2, '0')} 10:00:00`, 20, 20), 20, {
    parentId,
    listing: '/api/files/photos?limit=1000',
  });

type P = { name: string; owner?: { id: string; name: string }; albumId?: string };
/** Every page of a Photos listing, `limit` at a time. */
async function all(client: seed.SeededLogin['client'], whose: string, limit = 1000): Promise<P[]> {
  const out: P[] = [];
  let cursor = '';
  for (;;) {
    const res = await client.get(`/api/files/photos?whose=${whose}&limit=${limit}${cursor}`);
    expect(res.status).toBe(200);
    out.push(...(await json(res)));
    const next = res.headers.get('x-next-cursor');
    if (!next) return out;
    cursor = `&cursor=${next}`;
  }
}
const names = (list: P[]) => list.map((p) => p.name);

describe('Photos: what others share with you', () => {
  test('photos in folders shared with you (also through a group, also deep), and in albums shared with you, marked with the owner; mine, shared, all; keyset pages', async () => {
    const o = await seed.owner(t, undefined, 'Ada');
    const me = await seed.owner(t);
    const stranger = await seed.owner(t);
    const trip = await folder(o.client, 'Trip');
    const deep = await folder(o.client, 'Day 2', trip.id);
    const team = await folder(o.client, 'Team');
    await photo(o, 'trip-1.jpg', 1, trip.id);
    await photo(o, 'trip-4.jpg', 4, deep.id);
    await photo(o, 'team-6.jpg', 6, team.id);
    const loose = await photo(o, 'album-only-3.jpg', 3);
    await photo(o, 'private-7.jpg', 7);
    await photo(me, 'mine-2.jpg', 2);
    await photo(me, 'mine-5.jpg', 5);
    await upload(o.client, 'notes.txt', 'not a photo', { parentId: trip.id });

    expect((await o.client.post(`/api/files/${trip.id}/members`, { email: me.email, role: 'viewer' })).status).toBe(201);
    const group = await json(await admin.client.post('/api/admin/groups', { name: 'Crew' }));
    expect((await admin.client.post(`/api/admin/groups/${group.id}/members`, { email: me.email })).status).toBe(201);
    expect((await o.client.post(`/api/files/${team.id}/members`, { groupId: group.id, role: 'viewer' })).status).toBe(201);
    const { album } = await json(await o.client.post('/api/albums', { name: 'Picks', ids: [loose.id] }));
    await o.client.post(`/api/albums/${album.id}/members`, { email: me.email, role: 'viewer' });

    const shared = await all(me.client, 'shared');
    expect(names(shared)).toEqual(['team-6.jpg', 'trip-4.jpg', 'album-only-3.jpg', 'trip-1.jpg']);
    expect(shared.every((p) => p.owner?.id === o.id && p.owner.name === 'Ada')).toBe(true);
    expect(shared.map((p) => p.albumId ?? null)).toEqual([null, null, album.id, null]);
    expect(names(await all(me.client, 'mine'))).toEqual(['mine-5.jpg', 'mine-2.jpg']);
    // The default stays the account's own, as before.
    expect(names(await json(await me.client.get('/api/files/photos')))).toEqual(['mine-5.jpg', 'mine-2.jpg']);
    const everything = ['team-6.jpg', 'mine-5.jpg', 'trip-4.jpg', 'album-only-3.jpg', 'mine-2.jpg', 'trip-1.jpg'];
    expect(names(await all(me.client, 'all'))).toEqual(everything);
    // Small pages: the first source to fill a page bounds how far back the others read (the floor), never what they give.
    for (const limit of [1, 2, 3, 4, 5]) expect(names(await all(me.client, 'all', limit))).toEqual(everything);
    for (const limit of [1, 2, 3]) expect(names(await all(me.client, 'shared', limit))).toEqual(names(shared));
    expect((await all(me.client, 'all')).find((p) => p.name === 'mine-5.jpg')?.owner).toBeUndefined();

    // What is shared is readable through its door: the folder's photos by their own, the album's through the album.
    const four = shared.find((p) => p.name === 'trip-4.jpg') as P & { id: string };
    expect((await me.client.get(`/api/files/${four.id}/thumbnail`)).status).toBe(200);
    expect((await me.client.get(`/api/files/${loose.id}/thumbnail`)).status).toBe(404);
    expect((await me.client.get(`/api/albums/${album.id}/items/${loose.id}/thumbnail`)).status).toBe(200);

    // A sub-user of the account sees what is shared with its account; a stranger sees nothing of it.
    const helper = await seed.subUser(t, { id: me.id }, []);
    expect(names(await all(helper.client, 'shared'))).toEqual(names(shared));
    expect(await all(stranger.client, 'shared')).toEqual([]);
    expect((await me.client.get('/api/files/photos?whose=theirs')).status).toBe(422);

    // Trashed, unshared or left: gone at once.
    await o.client.post('/api/files/delete', { ids: [four.id] });
    await o.client.send('DELETE', `/api/files/${trip.id}/members/${me.id}`);
    await o.client.send('DELETE', `/api/albums/${album.id}/members/${me.id}`);
    expect(names(await all(me.client, 'shared'))).toEqual(['team-6.jpg']);
    await admin.client.send('DELETE', `/api/admin/groups/${group.id}/members/${me.id}`);
    expect(await all(me.client, 'shared')).toEqual([]);
  });
});

describe('Photos: albums shared with you', () => {
  test('an album’s photos of a disabled account (its owner’s, an editor’s) are not listed, as its door shows none of them', async () => {
    const o = await seed.owner(t, undefined, 'Ada');
    const me = await seed.owner(t);
    const editor = await seed.owner(t, undefined, 'Grace');
    const ours = await photo(o, 'owner-1.jpg', 1);
    const theirs = await photo(editor, 'editor-2.jpg', 2);
    const { album } = await json(await o.client.post('/api/albums', { name: 'Together', ids: [ours.id] }));
    await o.client.post(`/api/albums/${album.id}/members`, { email: me.email, role: 'viewer' });
    await o.client.post(`/api/albums/${album.id}/members`, { email: editor.email, role: 'editor' });
    expect((await editor.client.post(`/api/albums/${album.id}/items`, { ids: [theirs.id] })).status).toBe(200);
    expect(names(await all(me.client, 'shared'))).toEqual(['editor-2.jpg', 'owner-1.jpg']);

    const users = t.server.ctx.services.users;
    users.setDisabled(editor.id, true, 'cli');
    expect((await me.client.get(`/api/albums/${album.id}/items/${theirs.id}/thumbnail`)).status).toBe(404);
    expect(names(await all(me.client, 'shared'))).toEqual(['owner-1.jpg']);
    users.setDisabled(o.id, true, 'cli');
    expect(await all(me.client, 'shared')).toEqual([]);
    users.setDisabled(o.id, false, 'cli');
    users.setDisabled(editor.id, false, 'cli');
    expect(names(await all(me.client, 'shared'))).toEqual(['editor-2.jpg', 'owner-1.jpg']);
  });
});
