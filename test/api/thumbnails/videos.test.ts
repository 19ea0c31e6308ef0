import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { json } from '../../helpers/client.ts';
import { eventually } from '../../helpers/eventually.ts';
import { listAll, storedKeys, upload } from '../../helpers/files.ts';
import * as img from '../../helpers/images.ts';
import { skipWithout } from '../../helpers/prerequisites.ts';
import * as seed from '../../helpers/seed.ts';
import { startTestServer, tempDir, type TestServer } from '../../helpers/server.ts';

async function picture(res: Response) {
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('image/webp');
  const bytes = Buffer.from(await res.arrayBuffer());
  const { width, height } = await sharp(bytes).metadata();
  // The middle pixel of the first frame, which the samples make plain red.
  const { data } = await sharp(bytes)
    .extract({ left: Math.floor(width! / 2), top: Math.floor(height! / 2), width: 1, height: 1 })
    .raw()
    .toBuffer({ resolveWithObject: true });
  return { width, height, rgb: [...data.subarray(0, 3)] };
}

const isRed = ([r, g, b]: number[]) => r! > 200 && g! < 60 && b! < 60;

if (!skipWithout(img.ffmpegMissing(), 'video thumbnails (ffmpeg)')) {
  describe('video first frames with ffmpeg', () => {
    let t: TestServer;
    let owner: seed.SeededLogin;
    beforeAll(async () => {
      t = await startTestServer();
      owner = await seed.owner(t);
    });
    afterAll(() => t.stop());

    test.each([
      ['an MP4 with its index at the end (read by seeking)', 'camera.mp4', 'video/mp4', 'mp4'],
      ['an MP4 with +faststart', 'web.mp4', 'video/mp4', 'mp4-faststart'],
      ['a WebM', 'clip.webm', 'video/webm', 'webm'],
    ] as const)('%s: its first frame in both sizes', async (_label, name, type, format) => {
      const file = await upload(owner.client, name, img.video(format, 640, 360), { type });
      expect(file.mimeType).toBe(type);
      expect(file.hasThumbnail).toBe(true);
      const small = await picture(await owner.client.get(`/api/files/${file.id}/thumbnail`));
      expect([small.width, small.height]).toEqual([256, 144]);
      expect(isRed(small.rgb)).toBe(true);
      // Never upscaled: a 640×360 frame stays 640×360.
      const large = await picture(await owner.client.get(`/api/files/${file.id}/thumbnail?size=large`));
      expect([large.width, large.height]).toEqual([640, 360]);
      expect(isRed(large.rgb)).toBe(true);
    });

    test('made in the background after upload and stored sealed; the Photos view gets the frame size', async () => {
      const file = await upload(owner.client, 'background.mp4', img.video('mp4', 320, 240), { type: 'video/mp4' });
      const key = t.server.ctx.repos.items.getLive(owner.id, file.id)!.storageKey!;
      await eventually(() => t.server.ctx.repos.thumbnails.get(key)?.status === 'ready', { timeoutMs: 60_000 });
      const keys = await storedKeys(t);
      expect(keys).toContain(`${key}_thumb_small`);
      for (const k of [`${key}_thumb_small`, `${key}_thumb_large`]) {
        const stored = Buffer.from(await new Response(await t.server.ctx.driver.get(k)).arrayBuffer());
        expect(stored.subarray(0, 4).toString('latin1')).toBe('CFSE');
      }
      const photos = await listAll(owner.client, '/api/files/photos');
      expect(photos.find((p) => p.id === file.id)).toMatchObject({ width: 320, height: 240 });
    });

    test('Photos orders an MP4 or WebM by when it was recorded (its movie header, its Info’s DateUTC), a video without a date by its modification time', async () => {
      const recorded = '2019-05-04T10:20:30.000Z';
      const camera = await upload(owner.client, 'recorded.mp4', img.video('mp4', 160, 90, recorded), { type: 'video/mp4' });
      const web = await upload(owner.client, 'recorded-faststart.mp4', img.video('mp4-faststart', 160, 90, recorded), {
        type: 'video/mp4',
      });
      const unset = await upload(owner.client, 'no-date.mp4', img.video('mp4', 160, 90), { type: 'video/mp4' });
      const webm = await upload(owner.client, 'recorded.webm', img.video('webm', 160, 90, recorded), { type: 'video/webm' });
      const ids = [camera.id, web.id, unset.id, webm.id];
      const photos = await eventually(
        async () => {
          const all = await listAll(owner.client, '/api/files/photos');
          const mine = ids.map((id) => all.find((p) => p.id === id));
          return mine.every((p) => p?.width === 160) && mine;
        },
        { timeoutMs: 60_000 },
      );
      expect(photos.map((p) => p.takenAt)).toEqual([recorded, recorded, unset.modified, recorded]);
      // The oldest recording sorts after everything uploaded today.
      const order = (await listAll(owner.client, '/api/files/photos')).map((p) => p.id);
      expect(order.indexOf(camera.id)).toBeGreaterThan(order.indexOf(unset.id));
    });

    test('a video’s duration (an MP4’s movie header, a WebM’s or MKV’s Segment Info) is kept with its thumbnail: in Photos and in its details; a picture has none', async () => {
      const clip = await upload(owner.client, 'length.mp4', img.video('mp4', 160, 90), { type: 'video/mp4' });
      const webm = await upload(owner.client, 'length.webm', img.video('webm', 160, 90), { type: 'video/webm' });
      const still = await upload(owner.client, 'still.jpg', await img.photo(3, 160, 120), { type: 'image/jpeg' });
      const mkv = await upload(owner.client, 'length.mkv', img.video('mkv', 160, 90), { type: 'video/x-matroska' });
      const ids = [clip.id, webm.id, still.id, mkv.id];
      const photos = await eventually(
        async () => {
          const all = await listAll(owner.client, '/api/files/photos');
          const mine = ids.map((id) => all.find((p) => p.id === id));
          return mine.every((p) => p?.width) && mine;
        },
        { timeoutMs: 60_000 },
      );
      // Half a second of red, then 10 s of test pattern.
      expect(photos[0]!.duration).toBe(10.5);
      expect(photos[1]!.duration).toBe(10.5);
      expect('duration' in photos[2]!).toBe(false);
      expect(photos[3]!.duration).toBe(10.5);
      const info = async (id: string) => (await json(await owner.client.get(`/api/files/${id}/info`))).photo;
      expect(await info(clip.id)).toMatchObject({ width: 160, height: 90, duration: 10.5 });
      expect(await info(webm.id)).toMatchObject({ duration: 10.5 });
      // A folder's listing carries it too (an optional field of the item, for the grid's tiles); a picture's has none.
      const listed = await listAll(owner.client, '/api/files');
      const inList = (id: string) => listed.find((i) => i.id === id) as Record<string, unknown>;
      expect([clip.id, webm.id, mkv.id].map((id) => inList(id).duration)).toEqual([10.5, 10.5, 10.5]);
      expect('duration' in inList(still.id)).toBe(false);
      expect('duration' in (await info(still.id))).toBe(false);
      // Another account finds neither the video nor its details.
      const other = await seed.owner(t);
      expect((await other.client.get(`/api/files/${clip.id}/info`)).status).toBe(404);
      expect((await listAll(other.client, '/api/files/photos')).map((p) => p.id)).not.toContain(clip.id);
    });

    test('a file that only claims to be a video gets no thumbnail (404), and the server stays healthy', async () => {
      const fake = await upload(owner.client, 'fake.mp4', new Uint8Array(4096).fill(7), { type: 'video/mp4' });
      expect(fake.hasThumbnail).toBe(true);
      const res = await owner.client.get(`/api/files/${fake.id}/thumbnail`);
      expect(res.status).toBe(404);
      expect((await json(res)).message).toBe('This file has no thumbnail');
      expect((await t.client().get('/health')).status).toBe(200);
    });

    test('a video frame above THUMBNAIL_MAX_PIXELS gets none', async () => {
      const small = await startTestServer({ env: { THUMBNAIL_MAX_PIXELS: '100000' } });
      try {
        const user = await seed.owner(small);
        const file = await upload(user.client, 'wide.mp4', img.video('mp4-faststart', 640, 360), { type: 'video/mp4' });
        expect((await user.client.get(`/api/files/${file.id}/thumbnail`)).status).toBe(404);
        expect((await small.client().get('/health')).status).toBe(200);
      } finally {
        await small.stop();
      }
    });
  });
}

describe('without ffmpeg', () => {
  test('FFMPEG_PATH naming nothing: videos have no thumbnail (hasThumbnail false, 404), images still do, the server is fine', async () => {
    const missing = path.join(tempDir('coffer-no-ffmpeg-'), 'ffmpeg');
    const t = await startTestServer({ env: { FFMPEG_PATH: missing } });
    try {
      const owner = await seed.owner(t);
      expect(fs.existsSync(missing)).toBe(false);
      const clip = await upload(owner.client, 'clip.mp4', new Uint8Array(2048), { type: 'video/mp4' });
      expect(clip.hasThumbnail).toBe(false);
      const res = await owner.client.get(`/api/files/${clip.id}/thumbnail`);
      expect(res.status).toBe(404);
      expect((await json(res)).message).toBe('This file has no thumbnail');
      const listed = await listAll(owner.client, '/api/files');
      expect(listed.find((i) => i.id === clip.id)?.hasThumbnail).toBe(false);
      const photo = await upload(owner.client, 'still.png', await img.png(64, 64), { type: 'image/png' });
      expect((await owner.client.get(`/api/files/${photo.id}/thumbnail`)).status).toBe(200);
      expect((await t.client().get('/health')).status).toBe(200);
    } finally {
      await t.stop();
    }
  });
});
