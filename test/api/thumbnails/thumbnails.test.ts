import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import path from 'node:path';
import exifr from 'exifr';
import sharp from 'sharp';
import { closeDatabase, openDatabase } from '../../../src/db/client.ts';
import { Jobs } from '../../../src/jobs/catalog.ts';
import { THUMBNAIL_CATCH_UP_DELAY_MS } from '../../../src/services/thumbnails/index.ts';
import { json } from '../../helpers/client.ts';
import { eventually } from '../../helpers/eventually.ts';
import { folder, listAll, storedKeys, upload } from '../../helpers/files.ts';
import * as img from '../../helpers/images.ts';
import { skipWithout } from '../../helpers/prerequisites.ts';
import * as seed from '../../helpers/seed.ts';
import { writeObjectFile } from '../../helpers/s3.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

let t: TestServer;
let owner: seed.SeededLogin;

beforeAll(async () => {
  t = await startTestServer();
  owner = await seed.owner(t);
});
afterAll(() => t.stop());

const thumb = (id: string, size?: string, client = owner.client, headers?: Record<string, string>) =>
  client.get(`/api/files/${id}/thumbnail${size ? `?size=${size}` : ''}`, headers);

async function picture(res: Response) {
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('image/webp');
  const bytes = Buffer.from(await res.arrayBuffer());
  const meta = await sharp(bytes).metadata();
  return { bytes, meta, width: meta.width!, height: meta.height! };
}

/** The colour (red or blue) of an image's four corners: top-left, top-right, bottom-left, bottom-right. */
async function corners(bytes: Buffer): Promise<string[]> {
  const { data, info } = await sharp(bytes).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  const at = (x: number, y: number) => {
    const o = (y * info.width + x) * 3;
    return data[o]! > 200 && data[o + 2]! < 60
      ? 'red'
      : data[o + 2]! > 200 && data[o]! < 60
        ? 'blue'
        : `rgb(${[...data.subarray(o, o + 3)]})`;
  };
  const [r, b] = [info.width - 3, info.height - 3];
  return [at(2, 2), at(r, 2), at(2, b), at(r, b)];
}

/** Peak signal-to-noise ratio of two 8-bit pictures of the same size, in dB: above 35, a difference few people see. */
function psnr(a: Buffer, b: Buffer): number {
  expect(a.length).toBe(b.length);
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += (a[i]! - b[i]!) ** 2;
  return 10 * Math.log10((255 * 255 * a.length) / sum);
}

describe('GET /api/files/:id/thumbnail', () => {
  test('a sideways JPEG with GPS tags is served upright, 256 and 1,600 px on the long edge, with no metadata left', async () => {
    const file = await upload(owner.client, 'sideways.jpg', await img.rotatedJpegWithGps(2400, 1800), { type: 'image/jpeg' });
    expect(file.hasThumbnail).toBe(true);
    const small = await picture(await thumb(file.id));
    // Stored 2400 wide and 1800 high with orientation 6: upright it is 1800 wide and 2400 high.
    expect([small.width, small.height]).toEqual([192, 256]);
    const large = await picture(await thumb(file.id, 'large'));
    expect([large.width, large.height]).toEqual([1200, 1600]);
    for (const { bytes, meta } of [small, large]) {
      expect(meta.exif).toBeUndefined();
      expect(meta.xmp).toBeUndefined();
      expect(await exifr.gps(bytes).catch(() => undefined)).toBeUndefined();
    }
  });

  test('both sizes keep the picture: a sideways 12 MP photo comes out upright and close to an exact resize of it', async () => {
    const upright = await img.photo(3, 4000, 3000);
    // Stored sideways: shown upright only when orientation 6 is applied (turned the other way it differs everywhere).
    const stored = await sharp(upright).rotate(270).withMetadata({ orientation: 6 }).jpeg({ quality: 90 }).toBuffer();
    const file = await upload(owner.client, 'IMG_0003.jpg', stored, { type: 'image/jpeg' });
    expect(file.hasThumbnail).toBe(true);
    const exact = sharp(upright).resize(1600, 1600, { fit: 'inside' }).raw();
    const exactLarge = await exact.toBuffer({ resolveWithObject: true });
    const exactSmall = await sharp(exactLarge.data, { raw: exactLarge.info }).resize(256, 256, { fit: 'inside' }).raw().toBuffer();
    for (const [size, reference, width, height] of [
      ['large', exactLarge.data, 1600, 1200],
      ['small', exactSmall, 256, 192],
    ] as const) {
      const got = await picture(await thumb(file.id, size));
      expect([got.width, got.height]).toEqual([width, height]);
      const pixels = await sharp(got.bytes).removeAlpha().raw().toBuffer();
      expect(psnr(pixels, reference)).toBeGreaterThan(35);
    }
  });

  test('caching: an ETag keyed by the content, immutable for a year, 304 on If-None-Match', async () => {
    const file = await upload(owner.client, 'cache.png', await img.png(300, 200), { type: 'image/png' });
    const res = await thumb(file.id);
    await picture(res);
    const etag = res.headers.get('etag')!;
    expect(etag).toMatch(/^".+"$/);
    expect(res.headers.get('cache-control')).toBe('private, max-age=31536000, immutable');
    const unchanged = await thumb(file.id, 'small', owner.client, { 'if-none-match': `"other", ${etag}` });
    expect(unchanged.status).toBe(304);
    // A 304 names the ETag and caching a 200 would have sent (RFC 9110 15.4.5).
    expect(unchanged.headers.get('etag')).toBe(etag);
    expect(unchanged.headers.get('cache-control')).toBe('private, max-age=31536000, immutable');
    expect((await thumb(file.id, 'large')).headers.get('etag')).not.toBe(etag);
    // New content is a new object, so a new ETag: a browser never shows the old picture.
    const form = new FormData();
    form.append('file', new File([await img.png(120, 240)], 'cache.png', { type: 'image/png' }));
    const replaced = await owner.client.request(`/api/files/${file.id}/replace`, { method: 'POST', body: form });
    expect(replaced.status).toBe(200);
    const after = await thumb(file.id, 'small', owner.client, { 'if-none-match': etag });
    const fresh = await picture(after);
    expect(after.headers.get('etag')).not.toBe(etag);
    expect([fresh.width, fresh.height]).toEqual([120, 240]);
  });

  test.each([
    ['PNG', 'p.png', 'image/png', () => img.png(300, 200), [256, 171]],
    ['WebP', 'w.webp', 'image/webp', () => img.webp(200, 300), [171, 256]],
    ['GIF (first frame)', 'g.gif', 'image/gif', () => img.gif(400, 100), [256, 64]],
    ['AVIF', 'a.avif', 'image/avif', () => img.avif(512, 512), [256, 256]],
    ['a small image, never upscaled', 'tiny.png', 'image/png', () => img.png(40, 30), [40, 30]],
  ] as const)('%s', async (_label, name, type, make, [w, h]) => {
    const file = await upload(owner.client, name, await make(), { type });
    expect(file.hasThumbnail).toBe(true);
    const small = await picture(await thumb(file.id));
    expect([small.width, small.height]).toEqual([w, h]);
  });

  test('a PDF of 20 pages: its first page, 1,600 px on the long edge', async () => {
    const file = await upload(owner.client, 'doc.pdf', img.pdf(20, 300, 400), { type: 'application/pdf' });
    expect(file.mimeType).toBe('application/pdf');
    expect(file.hasThumbnail).toBe(true);
    const large = await picture(await thumb(file.id, 'large'));
    expect([large.width, large.height]).toEqual([1200, 1600]);
    const small = await picture(await thumb(file.id, 'small'));
    expect([small.width, small.height]).toEqual([192, 256]);
    // The page's blue rectangle (RGB 0.2, 0.4, 0.8) in its colours, and its white margin.
    const { data } = await sharp(large.bytes).raw().toBuffer({ resolveWithObject: true });
    const at = (x: number, y: number) => [...data.subarray((y * 1200 + x) * 3, (y * 1200 + x) * 3 + 3)];
    const [r, g, b] = at(600, 1000);
    expect(Math.abs(r! - 51) < 12 && Math.abs(g! - 102) < 12 && Math.abs(b! - 204) < 12).toBe(true);
    expect(at(5, 5).every((c) => c > 240)).toBe(true);
  });

  if (!skipWithout(img.heifEncMissing(), 'HEIC thumbnails')) {
    test('a HEIC phone photo', async () => {
      const file = await upload(owner.client, 'phone.heic', await img.heic(640, 480), { type: 'image/heic' });
      expect(file.hasThumbnail).toBe(true);
      const small = await picture(await thumb(file.id));
      expect([small.width, small.height]).toEqual([256, 192]);
      const large = await picture(await thumb(file.id, 'large'));
      expect([large.width, large.height]).toEqual([640, 480]);
    });

    test('a HEIC with an alpha image keeps its transparency', async () => {
      const file = await upload(owner.client, 'glass.heic', await img.heic(300, 200, 0.5), { type: 'image/heic' });
      const small = await picture(await thumb(file.id));
      expect(small.meta.hasAlpha).toBe(true);
      const { data } = await sharp(small.bytes).raw().toBuffer({ resolveWithObject: true });
      expect(Math.abs(data[3]! - 128)).toBeLessThan(16);
    });

    test("a 24 MP phone HEIC, a grid of 512 px tiles: both sizes, the photo's own size recorded", async () => {
      const file = await upload(owner.client, 'phone24.heic', await img.heicGrid(6000, 4000), { type: 'image/heic' });
      const large = await picture(await thumb(file.id, 'large'));
      expect([large.width, large.height]).toEqual([1600, 1067]);
      const small = await picture(await thumb(file.id));
      expect([small.width, small.height]).toEqual([256, 171]);
      // The top-left tile is red, the rest blue.
      expect(await corners(large.bytes)).toEqual(['red', 'blue', 'blue', 'blue']);
      const key = t.server.ctx.repos.items.getLive(owner.id, file.id)!.storageKey!;
      expect(t.server.ctx.repos.thumbnails.get(key)).toMatchObject({ status: 'ready', width: 6000, height: 4000 });
    });

    test('a tiled HEIC of 200 MP and a cut-off one get no thumbnail (404), and the server stays healthy', async () => {
      const whole = await img.heicGrid(2000, 1500);
      const huge = await upload(owner.client, 'huge.heic', await img.heicGrid(20_000, 10_000), { type: 'image/heic' });
      const cut = await upload(owner.client, 'cut.heic', whole.subarray(0, whole.length - 200), { type: 'image/heic' });
      for (const file of [huge, cut]) expect((await thumb(file.id)).status).toBe(404);
      expect((await t.client().get('/health')).status).toBe(200);
      const fine = await upload(owner.client, 'fine.heic', whole, { type: 'image/heic' });
      expect((await picture(await thumb(fine.id))).width).toBe(256);
    });

    // Each as libheif itself shows it (heif-convert decodes the whole image with its transforms).
    test.each([
      ['irot 90', { rotateCcw: 90 }],
      ['irot 180', { rotateCcw: 180 }],
      ['irot 270', { rotateCcw: 270 }],
      ['imir axis 0', { mirrorAxis: 0 }],
      ['imir axis 1', { mirrorAxis: 1 }],
      ['irot 90 then imir 0', { rotateCcw: 90, mirrorAxis: 0 }],
      ['clap, then irot 270 and imir 1', { crop: { width: 300, height: 200 }, rotateCcw: 270, mirrorAxis: 1 }],
    ] as const)('a tiled HEIC with %s is upright as libheif shows it', async (_label, transform) => {
      const bytes = await img.heicGrid(500, 300, 128, transform);
      const expected = await img.heifConvert(bytes);
      const file = await upload(owner.client, 'turned.heic', bytes, { type: 'image/heic' });
      const large = await picture(await thumb(file.id, 'large'));
      const reference = await sharp(expected).metadata();
      expect([large.width, large.height]).toEqual([reference.width, reference.height]);
      expect(await corners(large.bytes)).toEqual(await corners(expected));
    });
  }

  test('a malformed image and a 200 MP header get no thumbnail (404), and the server stays healthy', async () => {
    const broken = await upload(owner.client, 'broken.jpg', img.malformedJpeg(), { type: 'image/jpeg' });
    const bomb = await upload(owner.client, 'bomb.png', img.hugePngHeader(), { type: 'image/png' });
    for (const file of [broken, bomb]) {
      const res = await thumb(file.id);
      expect(res.status).toBe(404);
      expect((await json(res)).message).toBe('This file has no thumbnail');
    }
    expect((await t.client().get('/health')).status).toBe(200);
    const after = await upload(owner.client, 'after.png', await img.png(64, 64), { type: 'image/png' });
    await picture(await thumb(after.id));
  });

  test('a type that cannot have one: hasThumbnail false and 404; a folder 404; a bad size 422', async () => {
    const text = await upload(owner.client, 'notes.txt', 'hello', { type: 'text/plain' });
    expect(text.hasThumbnail).toBe(false);
    expect((await thumb(text.id)).status).toBe(404);
    const dir = await folder(owner.client, 'plain folder');
    expect((await thumb(dir.id)).status).toBe(404);
    const photo = await upload(owner.client, 'size.png', await img.png(20, 20), { type: 'image/png' });
    const bad = await thumb(photo.id, 'huge');
    expect(bad.status).toBe(422);
    expect(JSON.stringify(await json(bad))).toContain('size must be small or large');
  });

  test('listings carry hasThumbnail on files (and not on folders)', async () => {
    const parent = await folder(owner.client, 'listing');
    await upload(owner.client, 'x.png', await img.png(10, 10), { type: 'image/png', parentId: parent.id });
    await upload(owner.client, 'x.txt', 'x', { type: 'text/plain', parentId: parent.id });
    await folder(owner.client, 'sub', parent.id);
    const items = await listAll(owner.client, `/api/files?parentId=${parent.id}`);
    expect(Object.fromEntries(items.map((i) => [i.name, i.hasThumbnail]))).toEqual({ sub: undefined, 'x.png': true, 'x.txt': false });
  });

  test("another account's file is 404; a sub-user without files.download is 403 naming it", async () => {
    const file = await upload(owner.client, 'private.png', await img.png(30, 30), { type: 'image/png' });
    const other = await seed.owner(t);
    const res = await thumb(file.id, 'small', other.client);
    expect(res.status).toBe(404);
    const sub = await seed.subUser(t, { id: owner.id }, ['files.upload']);
    const refused = await thumb(file.id, 'small', sub.client);
    expect(refused.status).toBe(403);
    expect((await json(refused)).message).toContain('"Download"');
    const allowed = await seed.subUser(t, { id: owner.id }, ['files.download']);
    await picture(await thumb(file.id, 'small', allowed.client));
    expect((await t.client().get(`/api/files/${file.id}/thumbnail`)).status).toBe(401);
  });
});

describe('made in the background, stored sealed, removed with the file', () => {
  test('an upload gets both sizes without being asked, sealed like every object; purging removes them', async () => {
    const marker = Buffer.from('WEBPVP8');
    const file = await upload(owner.client, 'background.jpg', await img.jpeg(800, 600), { type: 'image/jpeg' });
    const row = t.server.ctx.repos.items.getLive(owner.id, file.id)!;
    const key = row.storageKey!;
    await eventually(() => t.server.ctx.repos.thumbnails.get(key)?.status === 'ready', { timeoutMs: 30_000 });
    const keys = await storedKeys(t);
    expect(keys).toContain(`${key}_thumb_small`);
    expect(keys).toContain(`${key}_thumb_large`);
    // No plaintext on disk: the stored thumbnail holds no WebP header.
    for (const k of [`${key}_thumb_small`, `${key}_thumb_large`]) {
      const stored = Buffer.from(await new Response(await t.server.ctx.driver.get(k)).arrayBuffer());
      expect(stored.subarray(0, 4).toString('latin1')).toBe('CFSE');
      expect(stored.includes(marker)).toBe(false);
    }
    // Orphan review knows them: not orphans, not even "too recent to judge", while their file exists. Waited for:
    // an earlier test's thumbnail written just after its file was purged is "too recent" until it is removed.
    await eventually(async () => (await t.server.ctx.services.orphans.scan({ graceMinutes: 60 })).totals.skippedTooRecent === 0, {
      timeoutMs: 30_000,
    });
    const scan = await t.server.ctx.services.orphans.scan({ graceMinutes: 60 });
    expect(scan.totals.skippedTooRecent).toBe(0);
    expect(scan.storageOrphans.count).toBe(0);
    expect((await owner.client.post('/api/files/delete', { ids: [file.id] })).status).toBe(200);
    expect((await owner.client.post('/api/files/trash/delete', { ids: [file.id] })).status).toBe(202);
    // The job deletes the objects, then the row: both are waited for (under load the row trailed the listing).
    await eventually(async () => !(await storedKeys(t)).some((k) => k.startsWith(key)) && t.server.ctx.repos.thumbnails.get(key) === null, {
      timeoutMs: 30_000,
    });
  });
});

describe('key rotation', () => {
  test("a thumbnail is sealed under its file's data key: after a rotation rewraps it, the same thumbnail is served", async () => {
    const file = await upload(owner.client, 'rotate.png', await img.png(300, 300), { type: 'image/png' });
    const before = await thumb(file.id);
    const bytes = (await picture(before)).bytes;
    const keyId = () => t.server.ctx.repos.items.getLive(owner.id, file.id)!.keyId;
    const old = keyId();
    const rotation = await t.server.ctx.services.keys.rotate();
    expect(rotation.completed).toBe(true);
    expect(keyId()).toBe(rotation.keyId);
    expect(keyId()).not.toBe(old);
    const after = await thumb(file.id);
    expect((await picture(after)).bytes.equals(bytes)).toBe(true);
    expect(after.headers.get('etag')).toBe(before.headers.get('etag'));
  });
});

describe('GET /s/:token/thumbnail/:id', () => {
  test("through the link only: items of the share, not others; no session; the link's expiry", async () => {
    const album = await folder(owner.client, 'album');
    const inside = await upload(owner.client, 'in.png', await img.png(500, 250), { type: 'image/png', parentId: album.id });
    const outside = await upload(owner.client, 'out.png', await img.png(50, 50), { type: 'image/png' });
    const res = await owner.client.post('/api/files/share', { ids: [album.id], shared: true });
    const link: string = (await json(res)).links[album.id];
    const token = /\/s\/([A-Za-z0-9_-]+)/.exec(link)![1]!;
    const anon = t.client();
    const listed = await json(await anon.get(`/s/${token}`, { accept: 'application/json' }));
    expect(listed.items.map((i: { name: string; hasThumbnail?: boolean }) => [i.name, i.hasThumbnail])).toEqual([['in.png', true]]);
    const small = await picture(await anon.get(`/s/${token}/thumbnail/${inside.id}`));
    expect([small.width, small.height]).toEqual([256, 128]);
    const large = await picture(await anon.get(`/s/${token}/thumbnail/${inside.id}?size=large`));
    expect([large.width, large.height]).toEqual([500, 250]);
    expect((await anon.get(`/s/${token}/thumbnail/${outside.id}`)).status).toBe(404);
    expect((await anon.get(`/s/${token}/thumbnail/${inside.id}?size=medium`)).status).toBe(422);
    expect((await anon.get(`/s/not-a-token-at-all-xyz/thumbnail/${inside.id}`)).status).toBe(404);
    // Unshared: the link is gone, and its thumbnails with it.
    await owner.client.post('/api/files/share', { ids: [album.id], shared: false });
    expect((await anon.get(`/s/${token}/thumbnail/${inside.id}`)).status).toBe(404);
  });

  test("kept by the browser but asked about each time (as the link's downloads): a revoked link or a new password stops showing it", async () => {
    const file = await upload(owner.client, 'kept.png', await img.png(300, 200), { type: 'image/png' });
    const res = await owner.client.post('/api/files/share', { ids: [file.id], shared: true });
    const token = /\/s\/([A-Za-z0-9_-]+)/.exec((await json(res)).links[file.id])![1]!;
    const anon = t.client();
    const first = await anon.get(`/s/${token}/thumbnail/${file.id}`);
    await picture(first);
    const etag = first.headers.get('etag')!;
    expect(first.headers.get('cache-control')).toBe('private, no-cache');
    const again = await anon.get(`/s/${token}/thumbnail/${file.id}`, { 'if-none-match': etag });
    expect([again.status, again.headers.get('cache-control')]).toEqual([304, 'private, no-cache']);
    // A password set on the link: the browser's revalidation is refused, not answered 304.
    expect((await owner.client.send('PATCH', `/api/files/share/links/${token}`, { password: 'a new secret' })).status).toBe(200);
    expect((await anon.get(`/s/${token}/thumbnail/${file.id}`, { 'if-none-match': etag })).status).toBe(401);
    await owner.client.post('/api/files/share', { ids: [file.id], shared: false });
    expect((await anon.get(`/s/${token}/thumbnail/${file.id}`, { 'if-none-match': etag })).status).toBe(404);
    // The owner's own thumbnails keep their year-long caching.
    expect((await thumb(file.id)).headers.get('cache-control')).toBe('private, max-age=31536000, immutable');
  });
});

describe('files stored without thumbnails (an upgrade, a restore)', () => {
  test('are looked for only after start-up (not before the first request), then swept', async () => {
    const s = await startTestServer({ startWorker: false });
    try {
      const login = await seed.owner(s);
      await upload(login.client, 'before.png', await img.png(400, 300), { type: 'image/png' });
      await s.server.worker.drain();
      await s.restart({
        whileDown: async () => {
          const db = openDatabase(path.join(s.dataDir, 'coffer.db'));
          db.$client.run('DELETE FROM thumbnails');
          closeDatabase(db);
        },
      });
      expect(s.server.ctx.queue.hasWaiting(Jobs.thumbnailsSweep)).toBe(false);
      await eventually(() => s.server.ctx.queue.hasWaiting(Jobs.thumbnailsSweep), { timeoutMs: THUMBNAIL_CATCH_UP_DELAY_MS + 5000 });
      await s.server.worker.drain();
      expect(s.server.ctx.db.$client.query<{ n: number }, []>('SELECT count(*) AS n FROM thumbnails').get()!.n).toBeGreaterThan(0);
    } finally {
      await s.stop();
    }
  });
});

describe('a file whose stored object is damaged or lost', () => {
  test('has no thumbnail (404, not 500), recorded once; the photos uploaded after it still get theirs in the background', async () => {
    const s = await startTestServer({ startWorker: false, env: { THUMBNAIL_CONCURRENCY: '1' } });
    try {
      const login = await seed.owner(s);
      const keyOf = (id: string) => s.server.ctx.repos.items.getLive(login.id, id)!.storageKey!;
      const damaged = await upload(login.client, 'damaged.jpg', await img.jpeg(300, 200), { type: 'image/jpeg' });
      const lost = await upload(login.client, 'lost.jpg', await img.jpeg(300, 200), { type: 'image/jpeg' });
      writeObjectFile(s.server.ctx.driver, keyOf(damaged.id), Buffer.alloc(4000, 7), new Date());
      await s.server.ctx.driver.delete(keyOf(lost.id));
      const later = [];
      for (let i = 0; i < 3; i++)
        later.push(await upload(login.client, `later-${i}.jpg`, await img.jpeg(320, 240), { type: 'image/jpeg' }));
      await s.server.worker.drain();
      for (const file of later) expect(s.server.ctx.repos.thumbnails.get(keyOf(file.id))?.status).toBe('ready');
      for (const file of [damaged, lost]) {
        expect(s.server.ctx.repos.thumbnails.get(keyOf(file.id))?.status).toBe('none');
        const res = await login.client.get(`/api/files/${file.id}/thumbnail`);
        expect(res.status).toBe(404);
        expect((await json(res)).message).toBe('This file has no thumbnail');
      }
      const tiles = await listAll(login.client, '/api/files');
      expect(
        tiles
          .filter((f) => !f.hasThumbnail)
          .map((f) => f.name)
          .sort(),
      ).toEqual(['damaged.jpg', 'lost.jpg']);
      expect(s.server.ctx.queue.hasWaiting(Jobs.thumbnailsSweep)).toBe(false);
    } finally {
      await s.stop();
    }
  });
});
