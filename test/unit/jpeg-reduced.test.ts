import { expect, test } from 'bun:test';
import fs from 'node:fs';
import sharp from 'sharp';
import { createLogger } from '../../src/log.ts';
import { jpegLoadShrink, withReducedJpeg } from '../../src/services/thumbnails/jpeg-reduced.ts';
import { ThumbnailPool } from '../../src/services/thumbnails/pool.ts';
import { tempDir } from '../helpers/run-root.ts';

/** A 4000×3000 photo-like JPEG stored sideways (orientation 6): its stored left half red, its right half blue, noise over both. */
async function sidewaysPhoto(): Promise<Buffer> {
  const [width, height] = [4000, 3000];
  const px = Buffer.alloc(width * height * 3);
  let seed = 1;
  for (let i = 0; i < px.length; i += 3) {
    seed = (seed * 1_103_515_245 + 12_345) >>> 0;
    const grain = (seed >>> 24) % 40;
    const red = (i / 3) % width < width / 2;
    px[i] = (red ? 200 : 20) + grain;
    px[i + 1] = 40 + grain;
    px[i + 2] = (red ? 20 : 200) + grain;
  }
  return sharp(px, { raw: { width, height, channels: 3 } })
    .withMetadata({ orientation: 6 })
    .jpeg({ quality: 88 })
    .toBuffer();
}

/** The in-memory files withReducedJpeg has open (other tests of the process open and close descriptors meanwhile). */
const memfds = () =>
  fs.readdirSync('/proc/self/fd').filter((fd) => {
    try {
      return fs.readlinkSync(`/proc/self/fd/${fd}`).startsWith('/memfd:coffer-thumbnail');
    } catch {
      return false;
    }
  }).length;

test('the decode is shrunk by the largest power of two that leaves the long edge at the size asked for', () => {
  expect(jpegLoadShrink(1600, 1600)).toBe(1);
  expect(jpegLoadShrink(3199, 1600)).toBe(1);
  expect(jpegLoadShrink(3200, 1600)).toBe(2);
  expect(jpegLoadShrink(4000, 1600)).toBe(2);
  expect(jpegLoadShrink(6400, 1600)).toBe(4);
  expect(jpegLoadShrink(12_799, 1600)).toBe(4);
  expect(jpegLoadShrink(12_800, 1600)).toBe(8);
  expect(jpegLoadShrink(60_000, 1600)).toBe(8);
});

test('a JPEG read through withReducedJpeg is decoded at half size, and no descriptor is left open', async () => {
  const jpeg = await sidewaysPhoto();
  for (let i = 0; i < 5; i++) {
    const meta = await withReducedJpeg(jpeg, 2, (input) => {
      expect(memfds()).toBe(1);
      return sharp(input).metadata();
    });
    expect([meta.width, meta.height, meta.orientation]).toEqual([2000, 1500, 6]);
    const pixels = await withReducedJpeg(jpeg, 4, (input) => sharp(input).raw().toBuffer({ resolveWithObject: true }));
    expect([pixels.info.width, pixels.info.height]).toEqual([1000, 750]);
  }
  expect(memfds()).toBe(0);
  // A shrink of 1 hands over the bytes themselves.
  expect(await withReducedJpeg(jpeg, 1, async (input) => input)).toBe(jpeg);
});

test('a 12 MP JPEG thumbnail from the reduced decode is upright, full size for the large one, and matches the full decode', async () => {
  const jpeg = await sidewaysPhoto();
  const cacheDir = tempDir('coffer-jpeg-reduced-');
  const pool = new ThumbnailPool({ cacheDir, maxPixels: 100_000_000 }, 1, createLogger('silent'));
  try {
    const made = await pool.make('image', async () => new Uint8Array(jpeg), true);
    if (!made.ok) throw new Error(made.reason);
    expect([made.width, made.height]).toEqual([3000, 4000]);
    const large = await sharp(made.large).raw().toBuffer({ resolveWithObject: true });
    expect([large.info.width, large.info.height]).toEqual([1200, 1600]);
    // Stored left (red) is shown on top once turned upright; stored right (blue) at the bottom.
    const mean = (top: number, channel: number) => {
      let sum = 0;
      for (let y = top; y < top + 200; y++) for (let x = 500; x < 700; x++) sum += large.data[(y * 1200 + x) * 3 + channel]!;
      return sum / 40_000;
    };
    expect(mean(100, 0) - mean(100, 2)).toBeGreaterThan(100);
    expect(mean(1300, 2) - mean(1300, 0)).toBeGreaterThan(100);
    // Against the whole-size decode resized the same way: the same picture, within what WebP's own loss moves.
    const full = await sharp(jpeg).autoOrient().resize(1600, 1600, { fit: 'inside', kernel: 'lanczos2' }).raw().toBuffer();
    let squared = 0;
    for (let i = 0; i < full.length; i++) squared += (full[i]! - large.data[i]!) ** 2;
    const psnr = 10 * Math.log10((255 * 255) / (squared / full.length));
    expect(psnr).toBeGreaterThan(30);
  } finally {
    pool.stop();
    fs.rmSync(cacheDir, { recursive: true, force: true });
  }
});
