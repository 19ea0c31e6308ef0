import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { json } from '../../helpers/client.ts';
import { eventually } from '../../helpers/eventually.ts';
import { folder, rowCount, storedObjectFiles, upload } from '../../helpers/files.ts';
import * as img from '../../helpers/images.ts';
import * as seed from '../../helpers/seed.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t.stop());

/** Three photos taken a day apart (newest last), a video, a PDF and a folder of `o`. */
async function library(o: seed.SeededLogin) {
  const dir = await folder(o.client, 'Trip');
  const photos = [];
  for (const [i, taken] of ['2024:05:01 10:00:00', '2024:05:02 10:00:00', '2024:05:03 10:00:00'].entries())
    photos.push(await upload(o.client, `p${i}.jpg`, await img.jpegTakenAt(taken, 30, 20), { type: 'image/jpeg', parentId: dir.id }));
  const clip = await upload(o.client, 'clip.mp4', new Uint8Array(64), { type: 'video/mp4' });
  const pdf = await upload(o.client, 'doc.pdf', img.pdf(1), { type: 'application/pdf' });
  // Taken dates are read with the thumbnails, in the background.
  await eventually(async () => {
    const list = await json(await o.client.get('/api/files/photos'));
    expect(list.filter((p: { width: number | null }) => p.width === 30)).toHaveLength(3);
  });
  return { dir, photos, clip, pdf };
}

const names = (page: { items: Array<{ name: string }> }) => page.items.map((i) => i.name);

describe('albums', () => {
  test('made from a selection, listed, added to and taken from, with a cover; files stay where they are and no bytes are copied', async () => {
    const o = await seed.owner(t);
    const { dir, photos, clip } = await library(o);
    const objects = storedObjectFiles(t).objects.length;

    const made = await o.client.post('/api/albums', { name: '  Spring  ', ids: [photos[0].id, photos[2].id] });
    expect(made.status).toBe(201);
    const { album } = await json(made);
    expect(album).toMatchObject({ name: 'Spring', itemCount: 2, coverItemId: null, coverId: photos[2].id });
    expect(names(await json(await o.client.get(`/api/albums/${album.id}`)))).toEqual(['p2.jpg', 'p0.jpg']);

    const added = await json(await o.client.post(`/api/albums/${album.id}/items`, { ids: [photos[1].id, clip.id, photos[0].id] }));
    expect(added).toMatchObject({ added: 2, album: { itemCount: 4 } });
    const page = await json(await o.client.get(`/api/albums/${album.id}`));
    expect(names(page)).toEqual(['clip.mp4', 'p2.jpg', 'p1.jpg', 'p0.jpg']);
    expect(page.items[1]).toMatchObject({ id: photos[2].id, parentId: dir.id, mimeType: 'image/jpeg', width: 30, height: 20 });

    // Paged by the taken date, as Photos is.
    const first = await json(await o.client.get(`/api/albums/${album.id}?limit=3`));
    expect(names(first)).toEqual(['clip.mp4', 'p2.jpg', 'p1.jpg']);
    expect(names(await json(await o.client.get(`/api/albums/${album.id}?limit=3&cursor=${first.nextCursor}`)))).toEqual(['p0.jpg']);

    const covered = await json(await o.client.send('PATCH', `/api/albums/${album.id}`, { coverItemId: photos[0].id, name: 'Spring 2024' }));
    expect(covered.album).toMatchObject({ name: 'Spring 2024', coverItemId: photos[0].id, coverId: photos[0].id });
    const removed = await json(await o.client.send('DELETE', `/api/albums/${album.id}/items`, { ids: [photos[0].id, 'not-in-it'] }));
    expect(removed).toMatchObject({ removed: 1, album: { itemCount: 3, coverItemId: null, coverId: clip.id } });
    expect((await o.client.send('PATCH', `/api/albums/${album.id}`, { coverItemId: photos[0].id })).status).toBe(400);

    const second = (await json(await o.client.post('/api/albums', { name: 'Empty' }))).album;
    expect(second).toMatchObject({ itemCount: 0, coverId: null });
    const list = await json(await o.client.get('/api/albums'));
    expect(list.albums.map((a: { name: string }) => a.name)).toEqual(['Empty', 'Spring 2024']);
    expect(list.nextCursor).toBeNull();
    const paged = await json(await o.client.get('/api/albums?limit=1'));
    expect((await json(await o.client.get(`/api/albums?limit=1&cursor=${paged.nextCursor}`))).albums[0].id).toBe(album.id);

    expect(storedObjectFiles(t).objects.length).toBe(objects);
    expect((await o.client.delete(`/api/albums/${album.id}`)).status).toBe(200);
    expect((await o.client.get(`/api/albums/${album.id}`)).status).toBe(404);
    expect((await json(await o.client.get('/api/files/photos'))).length).toBe(4);
    expect(t.server.ctx.repos.albums.contains(album.id, photos[2].id)).toBe(false);
  });

  test('a file in the trash is left out of its albums and back when restored; purged, it leaves them', async () => {
    const o = await seed.owner(t);
    const { photos } = await library(o);
    const { album } = await json(await o.client.post('/api/albums', { name: 'Kept', ids: photos.map((p) => p.id) }));
    await o.client.send('PATCH', `/api/albums/${album.id}`, { coverItemId: photos[1].id });
    expect((await o.client.post('/api/files/delete', { ids: [photos[1].id] })).status).toBe(200);
    const trashed = await json(await o.client.get(`/api/albums/${album.id}`));
    expect(names(trashed)).toEqual(['p2.jpg', 'p0.jpg']);
    expect(trashed.album).toMatchObject({ itemCount: 2, coverId: photos[2].id });
    expect((await o.client.post(`/api/albums/${album.id}/items`, { ids: [photos[1].id] })).status).toBe(404);

    await o.client.post('/api/files/trash/restore', { ids: [photos[1].id] });
    expect((await json(await o.client.get(`/api/albums/${album.id}`))).album).toMatchObject({ itemCount: 3, coverId: photos[1].id });

    await o.client.post('/api/files/delete', { ids: [photos[1].id] });
    await o.client.post('/api/files/trash/delete', { ids: [photos[1].id] });
    await eventually(() => expect(rowCount(t, 'id = ?', photos[1].id)).toBe(0));
    const after = await json(await o.client.get(`/api/albums/${album.id}`));
    expect(after.album).toMatchObject({ itemCount: 2, coverItemId: null });
    expect(t.server.ctx.repos.albums.contains(album.id, photos[1].id)).toBe(false);
  });

  test('the door: another account gets 404 everywhere; only photos and videos of the account go in; sub-users need Modify to change albums', async () => {
    const o = await seed.owner(t);
    const other = await seed.owner(t);
    const { photos, pdf, dir } = await library(o);
    const theirs = await upload(other.client, 'theirs.jpg', await img.jpeg(20, 20), { type: 'image/jpeg' });
    const { album } = await json(await o.client.post('/api/albums', { name: 'Mine', ids: [photos[0].id] }));

    for (const [method, path, body] of [
      ['GET', `/api/albums/${album.id}`, undefined],
      ['PATCH', `/api/albums/${album.id}`, { name: 'Taken' }],
      ['DELETE', `/api/albums/${album.id}`, undefined],
      ['POST', `/api/albums/${album.id}/items`, { ids: [theirs.id] }],
      ['DELETE', `/api/albums/${album.id}/items`, { ids: [photos[0].id] }],
    ] as const) {
      const res = await other.client.send(method, path, body);
      expect(res.status).toBe(404);
      expect((await json(res)).message).toBe('Album not found');
    }
    expect((await json(await other.client.get('/api/albums'))).albums).toEqual([]);
    expect((await o.client.post(`/api/albums/${album.id}/items`, { ids: [theirs.id] })).status).toBe(404);
    expect((await o.client.post('/api/albums', { name: 'Sneaky', ids: [theirs.id] })).status).toBe(404);
    expect((await json(await o.client.get('/api/albums'))).albums).toHaveLength(1);
    for (const id of [pdf.id, dir.id]) {
      const res = await o.client.post(`/api/albums/${album.id}/items`, { ids: [id] });
      expect(res.status).toBe(400);
      expect((await json(res)).message).toContain('Only photos and videos');
    }

    const viewer = await seed.subUser(t, { id: o.id }, ['files.download']);
    expect((await json(await viewer.client.get('/api/albums'))).albums).toHaveLength(1);
    expect((await viewer.client.get(`/api/albums/${album.id}`)).status).toBe(200);
    for (const [method, path, body] of [
      ['POST', '/api/albums', { name: 'No' }],
      ['PATCH', `/api/albums/${album.id}`, { name: 'No' }],
      ['DELETE', `/api/albums/${album.id}`, undefined],
      ['POST', `/api/albums/${album.id}/items`, { ids: [photos[1].id] }],
      ['DELETE', `/api/albums/${album.id}/items`, { ids: [photos[0].id] }],
    ] as const) {
      const res = await viewer.client.send(method, path, body);
      expect(res.status).toBe(403);
      expect((await json(res)).message).toContain('"Modify"');
    }
    const editor = await seed.subUser(t, { id: o.id }, ['files.edit']);
    expect((await editor.client.post(`/api/albums/${album.id}/items`, { ids: [photos[1].id] })).status).toBe(200);
    expect((await editor.client.post('/api/albums', { name: 'By the helper' })).status).toBe(201);
    expect((await t.client().get('/api/albums')).status).toBe(401);
  });

  test('bad input is a 422 that says what to fix', async () => {
    const o = await seed.owner(t);
    const { album } = await json(await o.client.post('/api/albums', { name: 'A' }));
    for (const [method, path, body] of [
      ['POST', '/api/albums', { name: '   ' }],
      ['POST', '/api/albums', { name: 'x'.repeat(201) }],
      ['POST', '/api/albums', {}],
      ['POST', `/api/albums/${album.id}/items`, { ids: [] }],
      ['POST', `/api/albums/${album.id}/items`, { ids: Array.from({ length: 501 }, (_, i) => `id${i}`) }],
      ['GET', '/api/albums?limit=0', undefined],
      ['GET', `/api/albums/${album.id}?cursor=nonsense`, undefined],
    ] as const) {
      const res = await o.client.send(method, path, body);
      expect([path, res.status]).toEqual([path, 422]);
    }
  });
});
