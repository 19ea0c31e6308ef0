// `bun bench/bare-thumbnail.ts [--rounds N] [--images N]`: where the CPU of a 12 MP JPEG's thumbnails goes,
// stage by stage, with bare sharp on one thread as a thumbnail worker runs it (no cache, one libvips thread).
// The stages take turns in each round; the figure is the median CPU ms per image from the process's own counters.
import os from 'node:os';
import exifr from 'exifr';
import sharp, { type Create, type KernelEnum } from 'sharp';
import { withReducedJpeg } from '../src/services/thumbnails/jpeg-reduced.ts';
import { flag } from './flags.ts';
import { median } from './streams.ts';

sharp.cache(false);
sharp.concurrency(1);

const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

// The thumbnails bench's photo: blurred noise at 12 MP, stored sideways (EXIF orientation 6).
const base = await sharp({
  create: { width: 4000, height: 3000, channels: 3, noise: { type: 'gaussian', mean: 128, sigma: 40 } } as Create,
})
  .blur(1.2)
  .jpeg({ quality: 88 })
  .toBuffer();
const jpeg = await sharp(base).withMetadata({ orientation: 6 }).jpeg({ quality: 88 }).toBuffer();
const meta = await sharp(jpeg).metadata();

const inside = (size: number, kernel: keyof KernelEnum) => ({
  fit: 'inside' as const,
  withoutEnlargement: true,
  kernel,
  width: size,
  height: size,
});
const upright = await sharp(jpeg).autoOrient().resize(inside(1600, 'lanczos3')).raw().toBuffer({ resolveWithObject: true });
const raw = { raw: { width: upright.info.width, height: upright.info.height, channels: upright.info.channels } };

/** The worker's whole encode: upright 1,600 px raw pixels (from the JPEG decoded `shrink` times smaller), then the two WebP sizes. */
async function pipeline(kernel: keyof KernelEnum, effort: number, shrink: 1 | 2 = 1) {
  const { data, info } = await withReducedJpeg(jpeg, shrink, (input) =>
    sharp(input).autoOrient().resize(inside(1600, kernel)).raw().toBuffer({ resolveWithObject: true }),
  );
  const r = { raw: { width: info.width, height: info.height, channels: info.channels } };
  await Promise.all([
    sharp(data, r).webp({ quality: 80, effort }).toBuffer(),
    sharp(data, r).resize(inside(256, 'lanczos3')).webp({ quality: 75, effort: 2 }).toBuffer(),
  ]);
}

const stages: Array<[string, () => Promise<unknown>]> = [
  ['header (sharp metadata)', () => sharp(jpeg).metadata()],
  [
    'EXIF (exifr, the tags kept)',
    () => exifr.parse(jpeg, { pick: ['DateTimeOriginal', 'Make', 'Model', 'LensModel', 'GPSLatitude', 'GPSLongitude'], gps: true }),
  ],
  [
    'decode at full size (nearest to 1,600: shrink 2.5, no shrink-on-load)',
    () => sharp(jpeg).resize(inside(1600, 'nearest')).raw().toBuffer(),
  ],
  ['decode at 1/2 (nearest to 1,333: shrink 3, shrink-on-load 2)', () => sharp(jpeg).resize(inside(1333, 'nearest')).raw().toBuffer()],
  ['decode + autoOrient + lanczos3 to 1,600 (before)', () => sharp(jpeg).autoOrient().resize(inside(1600, 'lanczos3')).raw().toBuffer()],
  ['decode + lanczos3 to 1,600, no orient', () => sharp(jpeg).resize(inside(1600, 'lanczos3')).raw().toBuffer()],
  ['decode + autoOrient + lanczos2 to 1,600 (after)', () => sharp(jpeg).autoOrient().resize(inside(1600, 'lanczos2')).raw().toBuffer()],
  [
    'decode at 1/2 from an in-memory file + autoOrient + lanczos2 to 1,600 (twentieth pass)',
    () => withReducedJpeg(jpeg, 2, (input) => sharp(input).autoOrient().resize(inside(1600, 'lanczos2')).raw().toBuffer()),
  ],
  ['WebP 1,600 q80 effort 2 (before)', () => sharp(upright.data, raw).webp({ quality: 80, effort: 2 }).toBuffer()],
  ['WebP 1,600 q80 effort 0 (after)', () => sharp(upright.data, raw).webp({ quality: 80, effort: 0 }).toBuffer()],
  [
    '256 px WebP from the raw 1,600 px',
    () => sharp(upright.data, raw).resize(inside(256, 'lanczos3')).webp({ quality: 75, effort: 2 }).toBuffer(),
  ],
  ['256 px WebP from the JPEG', () => sharp(jpeg).autoOrient().resize(inside(256, 'lanczos3')).webp({ quality: 75, effort: 2 }).toBuffer()],
  ['copy of the JPEG (a message not transferred)', async () => new Uint8Array(jpeg)],
  ['whole encode, before (lanczos3, effort 2)', () => pipeline('lanczos3', 2)],
  ['whole encode, after (lanczos2, effort 0)', () => pipeline('lanczos2', 0)],
  ['whole encode, twentieth pass (the decode at 1/2)', () => pipeline('lanczos2', 0, 2)],
];

const rounds = flag('rounds', 3);
const images = flag('images', 4);
console.log(
  `12 MP JPEG ${meta.width}×${meta.height}, ${(jpeg.length / 1024 ** 2).toFixed(1)} MiB, ${meta.isProgressive ? 'progressive' : 'baseline'}, chroma ${meta.chromaSubsampling}; ${rounds} rounds × ${images} images, load average ${os.loadavg()[0]!.toFixed(1)}`,
);
const figures = new Map<string, number[]>();
for (const [, run] of stages) await run();
for (let r = 0; r < rounds; r++)
  for (const [name, run] of stages) {
    const c0 = cpuMs();
    for (let i = 0; i < images; i++) await run();
    figures.set(name, [...(figures.get(name) ?? []), (cpuMs() - c0) / images]);
  }
console.log('| stage | CPU ms per image (median, rounds) |\n|---|---|');
for (const [name, ms] of figures) console.log(`| ${name} | ${median(ms).toFixed(1)} (${ms.map((x) => x.toFixed(0)).join(', ')}) |`);
console.log(`load average at the end ${os.loadavg()[0]!.toFixed(1)}`);
