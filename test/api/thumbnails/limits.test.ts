import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import sharp from 'sharp';
import { json } from '../../helpers/client.ts';
import { folder, upload } from '../../helpers/files.ts';
import * as img from '../../helpers/images.ts';
import * as seed from '../../helpers/seed.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

let t: TestServer;
let owner: seed.SeededLogin;

// One worker, and no background sweep: every thumbnail here is made by the request that asks for it.
beforeAll(async () => {
  t = await startTestServer({ env: { THUMBNAIL_CONCURRENCY: '1' }, startWorker: false });
  owner = await seed.owner(t);
});
afterAll(() => t.stop());

/**
 * Calls `run` with every source the server reads whole from storage counted: `mostHeld` is the most that were
 * in its memory at once. A source handed to a worker is transferred, which leaves its buffer here detached.
 */
async function countHeldSources(run: () => Promise<void>): Promise<number> {
  const storage = t.server.ctx.storage;
  const realRead = storage.readBytes.bind(storage);
  const read: Uint8Array[] = [];
  let mostHeld = 0;
  storage.readBytes = async (...args: Parameters<typeof realRead>) => {
    const bytes = await realRead(...args);
    read.push(bytes);
    mostHeld = Math.max(mostHeld, read.filter((b) => b.buffer.byteLength > 0).length);
    return bytes;
  };
  try {
    await run();
  } finally {
    storage.readBytes = realRead;
  }
  expect(read.length).toBeGreaterThan(0);
  return mostHeld;
}

describe('thumbnails asked for at once', () => {
  test("each source is read in the worker's turn: with one worker, one file is in memory at a time (owner and link alike)", async () => {
    const album = await folder(owner.client, 'at once');
    const files = await Promise.all(
      Array.from({ length: 6 }, async (_, i) =>
        upload(owner.client, `photo-${i}.jpg`, await img.photo(i, 2400, 1800), { type: 'image/jpeg', parentId: album.id }),
      ),
    );
    const shared = await owner.client.post('/api/files/share', { ids: [album.id], shared: true, mode: 'view_upload' });
    const token = /\/s\/([A-Za-z0-9_-]+)/.exec((await json(shared)).links[album.id])![1]!;
    const anonymous = t.client();
    const mostHeld = await countHeldSources(async () => {
      const answers = await Promise.all(
        files.map((file, i) =>
          i % 2 === 0 ? owner.client.get(`/api/files/${file.id}/thumbnail`) : anonymous.get(`/s/${token}/thumbnail/${file.id}`),
        ),
      );
      for (const res of answers) {
        expect(res.status).toBe(200);
        expect(res.headers.get('content-type')).toBe('image/webp');
      }
    });
    expect(mostHeld).toBe(1);
  });
});

const peakRss = () => Number(/VmHWM:\s*(\d+) kB/.exec(fs.readFileSync('/proc/self/status', 'utf8'))![1]) * 1024;

describe('PNG metadata', () => {
  test('an ICC profile chunk inflating to 768 MiB (a 0.7 MiB file) is never inflated: the thumbnail and the EXIF date, memory held', async () => {
    const bomb = await img.pngWithIccpInflatingTo(768 * 1024 * 1024, '2019:05:04 10:11:12');
    expect(bomb.length).toBeLessThan(1024 * 1024);
    const file = await upload(owner.client, 'profiled.png', bomb, { type: 'image/png' });
    // The peak resident size is counted from here (Linux: 5 resets it to the present size).
    fs.writeFileSync('/proc/self/clear_refs', '5');
    const before = process.memoryUsage().rss;
    const res = await owner.client.get(`/api/files/${file.id}/thumbnail`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/webp');
    expect(peakRss() - before).toBeLessThan(200 * 1024 * 1024);
    const details = await json(await owner.client.get(`/api/files/${file.id}/info`));
    expect(details.photo).toMatchObject({ width: 40, height: 30 });
    expect(new Date(details.photo.takenAt).getFullYear()).toBe(2019);
  });
});

describe('progressive JPEGs: at most 500 scans', () => {
  const thumb = async (name: string, bytes: Buffer) => {
    const file = await upload(owner.client, name, bytes, { type: 'image/jpeg' });
    return owner.client.get(`/api/files/${file.id}/thumbnail`);
  };

  test('3,000 scans over 100 MP (0.5 MiB; 33 s of a core, which no timeout could stop) get none at once; 500 get one', async () => {
    const cpu = process.cpuUsage();
    const started = performance.now();
    const res = await thumb('scans.jpg', img.progressiveJpegWithScans(10_000, 3000));
    expect(res.status).toBe(404);
    expect((await json(res)).message).toBe('This file has no thumbnail');
    const spent = process.cpuUsage(cpu);
    expect({ slow: performance.now() - started > 5000, cpu: (spent.user + spent.system) / 1e6 > 5 }).toEqual({ slow: false, cpu: false });
    expect((await thumb('500-scans.jpg', img.progressiveJpegWithScans(1000, 500))).status).toBe(200);
    expect((await thumb('501-scans.jpg', img.progressiveJpegWithScans(1000, 501))).status).toBe(404);
    // Bytes libjpeg skips (a marker without a length, a stray byte before each scan) hide none of them.
    expect((await thumb('hidden-scans.jpg', img.progressiveJpegWithScans(10_000, 3000, true))).status).toBe(404);
    expect((await thumb('hidden-500-scans.jpg', img.progressiveJpegWithScans(1000, 500, true))).status).toBe(200);
    const written = await sharp(await img.photo(1, 2400, 1800))
      .jpeg({ progressive: true })
      .toBuffer();
    expect((await sharp(written).metadata()).isProgressive).toBe(true);
    expect((await thumb('progressive.jpg', written)).status).toBe(200);
  });
});

describe('PDFs: THUMBNAIL_MAX_PIXELS (100 MP) counts the images the first page draws', () => {
  const thumb = async (name: string, bytes: Buffer) => {
    const file = await upload(owner.client, name, bytes, { type: 'application/pdf' });
    return owner.client.get(`/api/files/${file.id}/thumbnail`);
  };

  test('a 400 MP image drawn ten times gets no thumbnail (404), and the worker goes on to the next PDF', async () => {
    const res = await thumb('bomb.pdf', img.pdfDrawingImage(20_000, 20_000, 10));
    expect(res.status).toBe(404);
    expect((await json(res)).message).toBe('This file has no thumbnail');
    expect((await thumb('fine.pdf', img.pdf(2))).status).toBe(200);
  });

  test("a page whose content inflates to 768 MiB (a 0.7 MiB file) gets no thumbnail, pdfium's heap held to the file and its slack; the next PDF gets one", async () => {
    const bomb = await img.pdfInflatingTo(768 * 1024 * 1024);
    expect(bomb.length).toBeLessThan(1024 * 1024);
    const file = await upload(owner.client, 'inflating.pdf', bomb, { type: 'application/pdf' });
    // The peak resident size is counted from here (Linux: 5 resets it to the present size).
    fs.writeFileSync('/proc/self/clear_refs', '5');
    const before = process.memoryUsage().rss;
    const res = await owner.client.get(`/api/files/${file.id}/thumbnail`);
    expect(res.status).toBe(404);
    expect((await json(res)).message).toBe('This file has no thumbnail');
    expect(peakRss() - before).toBeLessThan(400 * 1024 * 1024);
    expect((await thumb('after-inflating.pdf', img.pdf(2))).status).toBe(200);
  });

  test.each(['page', 'form', 'annotation'] as const)(
    '16 MP drawn 7 times (112 MP) in the %s: none; 6 times (96 MP): a thumbnail',
    async (via) => {
      expect((await thumb(`over-${via}.pdf`, img.pdfDrawingImage(4000, 4000, 7, via))).status).toBe(404);
      const under = await thumb(`under-${via}.pdf`, img.pdfDrawingImage(4000, 4000, 6, via));
      expect(under.status).toBe(200);
      expect(under.headers.get('content-type')).toBe('image/webp');
    },
  );
});
