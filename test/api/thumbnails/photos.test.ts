import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { json } from '../../helpers/client.ts';
import { eventually } from '../../helpers/eventually.ts';
import { folder, listAll, seedRows, upload } from '../../helpers/files.ts';
import * as img from '../../helpers/images.ts';
import * as seed from '../../helpers/seed.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

let t: TestServer;

beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t.stop());

describe('GET /api/files/photos', () => {
  test('images and videos only, newest taken first (EXIF DateTimeOriginal, else modified), with their fields', async () => {
    const owner = await seed.owner(t);
    const dir = await folder(owner.client, 'Holiday');
    const old = await upload(owner.client, 'beach.jpg', await img.jpegTakenAt('2019:07:14 10:00:00', 300, 200), {
      type: 'image/jpeg',
      parentId: dir.id,
    });
    const png = await upload(owner.client, 'screen.png', await img.png(40, 30), { type: 'image/png' });
    const video = await upload(owner.client, 'clip.mp4', new Uint8Array(64), { type: 'video/mp4' });
    await upload(owner.client, 'doc.pdf', img.pdf(1), { type: 'application/pdf' });
    await upload(owner.client, 'notes.txt', 'text', { type: 'text/plain' });

    // The EXIF time is known once the thumbnail is made (in the background after upload).
    const photos = await eventually(async () => {
      const list = await listAll(owner.client, '/api/files/photos');
      expect(list.find((p) => p.id === old.id)?.width).toBe(300);
      return list;
    });
    expect(photos.map((p) => p.name)).toEqual(['clip.mp4', 'screen.png', 'beach.jpg']);
    expect(photos.map((p) => p.id)).toEqual([video.id, png.id, old.id]);
    expect(photos[2]).toEqual({
      id: old.id,
      name: 'beach.jpg',
      takenAt: new Date(2019, 6, 14, 10, 0, 0).toISOString(),
      width: 300,
      height: 200,
      parentId: dir.id,
      mimeType: 'image/jpeg',
      size: old.size,
      modified: old.modified,
      starred: false,
      hasThumbnail: true,
    });
    expect(photos[0]).toMatchObject({ width: null, height: null, parentId: null, mimeType: 'video/mp4' });
    expect(Date.parse(photos[0].takenAt)).toBeGreaterThanOrEqual(Date.parse(photos[1].takenAt));

    // Trashed files leave the view.
    expect((await owner.client.post('/api/files/delete', { ids: [png.id] })).status).toBe(200);
    expect((await listAll(owner.client, '/api/files/photos')).map((p) => p.id)).toEqual([video.id, old.id]);
  });

  test('keyset pages (default 200) cover every photo once, in order, while newer ones are uploaded between pages', async () => {
    const owner = await seed.owner(t);
    const base = Date.UTC(2025, 0, 1);
    // Pairs share a time, so the id breaks ties inside a page and across a page boundary.
    const ids = seedRows(t, owner.id, null, 450, (i) => ({
      name: `p-${i}.jpg`,
      mimeType: i % 3 ? 'image/jpeg' : 'video/webm',
      modifiedAt: base + Math.floor(i / 2) * 60_000,
    }));
    seedRows(t, owner.id, null, 20, (i) => ({ name: `n-${i}.txt`, modifiedAt: base + i }));

    const first = await owner.client.get('/api/files/photos');
    expect(first.status).toBe(200);
    const seen: Array<{ id: string; takenAt: string }> = await json(first);
    expect(seen).toHaveLength(200);
    let cursor = first.headers.get('x-next-cursor');
    let n = 0;
    while (cursor) {
      // A newer photo arrives between pages: it sorts before the cursor, so later pages neither repeat nor skip.
      await upload(owner.client, `new-${n++}.png`, await img.png(8, 8), { type: 'image/png' });
      const res = await owner.client.get(`/api/files/photos?limit=37&cursor=${encodeURIComponent(cursor)}`);
      expect(res.status).toBe(200);
      seen.push(...(await json(res)));
      cursor = res.headers.get('x-next-cursor');
    }
    expect(n).toBeGreaterThan(1);
    expect(seen.map((p) => p.id).sort()).toEqual([...ids].sort());
    const keys = seen.map((p) => [Date.parse(p.takenAt), p.id] as const);
    for (let i = 1; i < keys.length; i++) {
      const [a, b] = [keys[i - 1]!, keys[i]!];
      expect(a[0] > b[0] || (a[0] === b[0] && a[1] > b[1])).toBe(true);
    }
  });

  test.each([
    ['limit=0', 'limit'],
    ['limit=1001', 'limit'],
    ['limit=abc', 'limit'],
    ['limit=2.5', 'limit'],
    ['cursor=not-a-cursor!', 'cursor'],
    [`cursor=${Buffer.from('["x",1]').toString('base64url')}`, 'cursor'],
  ])('422 for %s', async (query, field) => {
    const owner = await seed.owner(t);
    const res = await owner.client.get(`/api/files/photos?${query}`);
    expect(res.status).toBe(422);
    const body = await json(res);
    expect(typeof body.message).toBe('string');
    expect(JSON.stringify(body.details)).toContain(field);
  });

  test('new content is placed by its own date taken: a replaced photo moves', async () => {
    const owner = await seed.owner(t);
    const file = await upload(owner.client, 'scan.jpg', await img.jpegTakenAt('2019:07:14 10:00:00', 64, 48), { type: 'image/jpeg' });
    const takenAt = async () => (await listAll(owner.client, '/api/files/photos')).find((p) => p.id === file.id)?.takenAt;
    await eventually(async () => (await takenAt()) === new Date(2019, 6, 14, 10, 0, 0).toISOString());
    const form = new FormData();
    form.append('file', new File([await img.jpegTakenAt('2015:03:02 08:30:00', 64, 48)], 'scan.jpg', { type: 'image/jpeg' }));
    expect((await owner.client.request(`/api/files/${file.id}/replace`, { method: 'POST', body: form })).status).toBe(200);
    await eventually(async () => (await takenAt()) === new Date(2015, 2, 2, 8, 30, 0).toISOString());
  });

  test('limit 1,000 is allowed', async () => {
    const owner = await seed.owner(t);
    expect((await owner.client.get('/api/files/photos?limit=1000')).status).toBe(200);
  });

  test("another account's photos never appear; a sub-user without permissions sees its account's", async () => {
    const owner = await seed.owner(t);
    const mine = await upload(owner.client, 'mine.png', await img.png(20, 20), { type: 'image/png' });
    const stranger = await seed.owner(t);
    await upload(stranger.client, 'theirs.png', await img.png(20, 20), { type: 'image/png' });
    expect((await listAll(stranger.client, '/api/files/photos')).map((p) => p.name)).toEqual(['theirs.png']);
    const sub = await seed.subUser(t, owner, []);
    expect((await listAll(sub.client, '/api/files/photos')).map((p) => p.id)).toEqual([mine.id]);
    expect((await t.client().get('/api/files/photos')).status).toBe(401);
  });
});
