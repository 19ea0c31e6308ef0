// A worker thread that makes thumbnails, so that decoding a large image never blocks the event loop.
import os from 'node:os';
import exifr from 'exifr';
import type { Sharp } from 'sharp';
import pdfiumWasm from '../../../node_modules/@hyzyla/pdfium/dist/pdfium.wasm' with { type: 'file' };
import type { MakeRequest, MakeResult, PhotoFacts, WorkerSetup } from './formats.ts';
import { decodeHeicReduced, type ReducedHeic } from './heic.ts';
import { loadPdfium, openFirstPage, type Pdfium, type PdfHeap } from './pdf.ts';
import { THUMBNAIL_SIZES } from '../../contract/files.ts';
import { jpegLoadShrink, jpegScans, withReducedJpeg } from './jpeg-reduced.ts';
import { loadSharp } from './sharp.ts';
import { jitAtFullSpeed } from '../../lib/jit-policy.ts';

declare const self: Worker;
jitAtFullSpeed();

// Below request handling: this thread (and the libvips threads it starts, which inherit it) runs niced.
try {
  os.setPriority(10);
} catch {
  // Not permitted in some containers: thumbnails then compete at normal priority.
}
// libheif logs whole error objects on malformed input, pdfium its aborts: the reason is reported in the answer instead.
console.log = () => {};
console.warn = () => {};
console.error = () => {};

// The first message is the setup; every later one a request.
const setup = await new Promise<WorkerSetup>((resolve) => {
  self.onmessage = (event: MessageEvent<WorkerSetup>) => resolve(event.data);
});
const sharp = await loadSharp(setup.cacheDir);
let pdfium: Pdfium | null = null;
const pdfHeap: PdfHeap = { limit: 0 };

class NoThumbnail extends Error {}

// What libvips may decode for a thumbnail (AVIF is its heif): the formats of the image types in formats.ts.
const PICTURE_FORMATS = new Set<string>(['jpeg', 'png', 'webp', 'gif', 'heif']);

// Encoders write 10 or so scans, a few dozen at most; each costs a pass over every block (11 ms at 100 MP).
const MAX_JPEG_SCANS = 500;

const tooLarge = (w: number, h: number, max: number) => {
  if (!(w > 0 && h > 0)) throw new NoThumbnail('the image has no dimensions');
  if (w * h > max) throw new NoThumbnail(`the image has ${w}×${h} pixels, more than ${max}`);
};

/** A source sharp reads, upright, as at most 1600 px raw pixels; then both WebP sizes (no metadata is kept). */
async function encode(input: Sharp): Promise<{ small: Buffer; large: Buffer; width: number; height: number }> {
  const big = THUMBNAIL_SIZES.large;
  // lanczos2: a tenth cheaper than sharp's lanczos3 with the decode, within 0.3 dB of it (docs/performance.md).
  const { data, info } = await input
    .autoOrient()
    .resize(big, big, { fit: 'inside', withoutEnlargement: true, kernel: 'lanczos2' })
    .raw()
    .toBuffer({ resolveWithObject: true });
  const raw = { raw: { width: info.width, height: info.height, channels: info.channels } };
  const small = THUMBNAIL_SIZES.small;
  const [large, smallOut] = await Promise.all([
    // Effort 0: the same quality as 2 for half this encode's CPU, the file 13-27% larger on photos; the small one keeps 2.
    sharp(data, raw).webp({ quality: 80, effort: 0 }).toBuffer(),
    sharp(data, raw).resize(small, small, { fit: 'inside', withoutEnlargement: true }).webp({ quality: 75, effort: 2 }).toBuffer(),
  ]);
  return { small: smallOut, large, width: info.width, height: info.height };
}

// A camera or lens name longer than this is not one: the rest is cut.
const EXIF_TEXT_MAX = 100;

const text = (v: unknown) => (typeof v === 'string' && v.trim() ? v.trim().slice(0, EXIF_TEXT_MAX) : null);

// Before this a date is a blank or garbled field (0000:00:00 reads as 1899), not when a picture was taken.
const EARLIEST_YEAR = 1800;

/**
 * When the photo was taken (ms), from EXIF's "YYYY:MM:DD HH:MM:SS" wall time: at its `offset` ("+09:00") when the
 * camera wrote one, else in this server's time zone; null for a blank, zero or impossible date (month 13, 30 February).
 */
function takenAtOf(date: unknown, offset: unknown): number | null {
  const m = typeof date === 'string' ? /^(\d{4})[:-](\d{2})[:-](\d{2})[ T](\d{2}):(\d{2}):(\d{2})/.exec(date.trim()) : null;
  if (!m) return null;
  const [y, mo, d, h, mi, sec] = m.slice(1).map(Number) as [number, number, number, number, number, number];
  if (y < EARLIEST_YEAR || mo < 1 || mo > 12 || d < 1 || d > new Date(Date.UTC(y, mo, 0)).getUTCDate() || h > 23 || mi > 59 || sec > 59)
    return null;
  const zone = typeof offset === 'string' ? /^([+-])(\d{2}):(\d{2})$/.exec(offset.trim()) : null;
  if (zone && Number(zone[2]) <= 14 && Number(zone[3]) <= 59) {
    const minutes = (zone[1] === '-' ? -1 : 1) * (Number(zone[2]) * 60 + Number(zone[3]));
    return Date.UTC(y, mo - 1, d, h, mi, sec) - minutes * 60_000;
  }
  return new Date(y, mo - 1, d, h, mi, sec).getTime();
}

/** Degrees, minutes and seconds as GPS writes them: minutes and seconds under 60. */
const dms = (v: unknown) => Array.isArray(v) && v.length === 3 && v.every((n, i) => Number.isFinite(n) && n >= 0 && (i === 0 || n < 60));

/**
 * Where the photo was taken; null when the GPS says nothing usable: no hemisphere, out of range, or exactly 0,0
 * (what phones write without a fix, not a place anyone was).
 */
function placeOf(tags: Record<string, unknown>): { latitude: number; longitude: number } | null {
  const { latitude, longitude, GPSLatitudeRef: ns, GPSLongitudeRef: ew } = tags;
  if (typeof latitude !== 'number' || typeof longitude !== 'number' || !dms(tags.GPSLatitude) || !dms(tags.GPSLongitude)) return null;
  if (!(ns === 'N' || ns === 'S') || !(ew === 'E' || ew === 'W')) return null;
  if (Math.abs(latitude) > 90 || Math.abs(longitude) > 180 || (latitude === 0 && longitude === 0)) return null;
  return { latitude, longitude };
}

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

/**
 * What exifr is given: a PNG's eXIf chunk alone (a TIFF), since exifr inflates a PNG's iCCP chunk whatever it is asked
 * (half a MiB inflating to 1 GiB took the server past 1 GiB); null for a PNG without one. Other types as they are.
 */
function exifSource(bytes: Uint8Array): Uint8Array | null {
  if (!PNG_SIGNATURE.every((b, i) => bytes[i] === b)) return bytes;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let at = PNG_SIGNATURE.length; at + 8 <= bytes.byteLength; at += view.getUint32(at) + 12) {
    if (view.getUint32(at + 4) === 0x65584966) return bytes.subarray(at + 8, Math.min(bytes.byteLength, at + 8 + view.getUint32(at)));
  }
  return null;
}

/** What the photo's EXIF says of when it was taken, with what, and where; nulls where it says nothing. */
async function exifOf(bytes: Uint8Array): Promise<PhotoFacts> {
  const source = exifSource(bytes);
  if (!source) return NO_FACTS;
  let tags: Record<string, unknown> | undefined;
  try {
    // Values as written: the date is read here, with its offset, rather than as this thread's local time.
    tags = await exifr.parse(source, { pick: [...EXIF_TAGS], gps: true, reviveValues: false });
  } catch {
    return NO_FACTS;
  }
  if (!tags) return NO_FACTS;
  const make = text(tags.Make);
  const model = text(tags.Model);
  // Most cameras repeat the maker in the model ("Canon" + "Canon EOS R6").
  const camera = model && make && !model.toLowerCase().startsWith(make.toLowerCase()) ? `${make} ${model}` : (model ?? make);
  const place = placeOf(tags);
  return {
    takenAt: takenAtOf(tags.DateTimeOriginal, tags.OffsetTimeOriginal),
    camera: camera ? camera.slice(0, EXIF_TEXT_MAX) : null,
    lens: text(tags.LensModel),
    latitude: place?.latitude ?? null,
    longitude: place?.longitude ?? null,
  };
}

const EXIF_TAGS = [
  'DateTimeOriginal',
  'OffsetTimeOriginal',
  'Make',
  'Model',
  'LensModel',
  'GPSLatitude',
  'GPSLongitude',
  'GPSLatitudeRef',
  'GPSLongitudeRef',
];
const NO_FACTS: PhotoFacts = { takenAt: null, camera: null, lens: null, latitude: null, longitude: null };

async function fromImage(bytes: Uint8Array) {
  const opts = { failOn: 'error' as const, limitInputPixels: setup.maxPixels, pages: 1 };
  const meta = await sharp(bytes, opts).metadata();
  // libvips loads whatever it recognises: an SVG stored as image/png (its type the client's word) would be drawn by librsvg.
  if (!PICTURE_FORMATS.has(meta.format))
    throw new NoThumbnail(`the content is ${meta.format}, not a picture of the types that have thumbnails`);
  // The header's size, before any pixel is decoded: a decompression bomb stops here.
  tooLarge(meta.width ?? 0, meta.pageHeight ?? meta.height ?? 0, setup.maxPixels);
  // A decode cannot be stopped once begun (ending this thread leaves libvips running), so its cost is bounded before.
  if (meta.format === 'jpeg' && meta.isProgressive && jpegScans(bytes, MAX_JPEG_SCANS) > MAX_JPEG_SCANS)
    throw new NoThumbnail(`the JPEG has more than ${MAX_JPEG_SCANS} scans`);
  const shrink = meta.format === 'jpeg' ? jpegLoadShrink(Math.max(meta.width ?? 0, meta.height ?? 0), THUMBNAIL_SIZES.large) : 1;
  const out = await withReducedJpeg(bytes, shrink, (input) => encode(sharp(input, opts)));
  // Orientations 5-8 swap the sides.
  const swap = (meta.orientation ?? 1) >= 5;
  const w = meta.width ?? out.width;
  const h = meta.pageHeight ?? meta.height ?? out.height;
  return { ...out, width: swap ? h : w, height: swap ? w : h, ...(await exifOf(bytes)) };
}

/** The reduced pixels turned upright as libheif would: each transform in its order, one pass each. */
async function applyTransforms(heic: ReducedHeic): Promise<Sharp> {
  let data = heic.data;
  let width = heic.width;
  let height = heic.height;
  for (const t of heic.transforms) {
    let step = sharp(data, { raw: { width, height, channels: heic.channels } });
    if (t.kind === 'rotate') step = step.rotate((360 - t.degreesCcw) % 360);
    else if (t.kind === 'mirror') step = t.flipVertically ? step.flip() : step.flop();
    else {
      const left = Math.min(t.left, width - 1);
      const top = Math.min(t.top, height - 1);
      step = step.extract({ left, top, width: Math.min(t.width, width - left), height: Math.min(t.height, height - top) });
    }
    const done = await step.raw().toBuffer({ resolveWithObject: true });
    data = done.data;
    width = done.info.width;
    height = done.info.height;
  }
  return sharp(data, { raw: { width, height, channels: heic.channels } });
}

async function fromHeic(bytes: Uint8Array) {
  const heic = decodeHeicReduced(bytes, { maxPixels: setup.maxPixels, minLongEdge: THUMBNAIL_SIZES.large });
  const out = await encode(await applyTransforms(heic));
  return { ...out, width: heic.fullWidth, height: heic.fullHeight, ...(await exifOf(bytes)) };
}

async function fromPdf(bytes: Uint8Array) {
  pdfium ??= await loadPdfium(await Bun.file(pdfiumWasm).arrayBuffer(), () => pdfHeap.limit);
  try {
    return await firstPageOf(pdfium, bytes);
  } catch (err) {
    if (!(err instanceof WebAssembly.RuntimeError)) throw err;
    throw new NoThumbnail(`pdfium stopped (${err.message}): the first page needs more memory than its file and images allow`);
  }
}

async function firstPageOf(pdfium: Pdfium, bytes: Uint8Array) {
  const { page, close } = openFirstPage(pdfium, bytes, setup.maxPixels, pdfHeap);
  try {
    const { originalWidth: w, originalHeight: h } = page.getOriginalSize();
    if (!(w > 0 && h > 0)) throw new NoThumbnail('the first page has no size');
    // A page is drawn, not decoded: always at the large size, both sides given or the aspect is lost.
    const scale = THUMBNAIL_SIZES.large / Math.max(w, h);
    const width = Math.max(1, Math.round(w * scale));
    const height = Math.max(1, Math.round(h * scale));
    const bitmap = await page.render({ width, height, render: 'bitmap', colorSpace: 'BGRA' });
    // The library hands the bitmap over as RGBA whatever it drew in.
    const px = Buffer.from(bitmap.data);
    const out = await encode(
      sharp(px, { raw: { width: bitmap.width, height: bitmap.height, channels: 4 } }).flatten({ background: '#ffffff' }),
    );
    return { ...out, width: Math.round(w), height: Math.round(h), ...NO_FACTS };
  } finally {
    close();
  }
}

/** A video's first frame, a PNG from ffmpeg: the image pipeline (its pixel cap too); the date is the file's. */
async function fromVideoFrame(bytes: Uint8Array) {
  return { ...(await fromImage(bytes)), ...NO_FACTS };
}

const MAKERS = { image: fromImage, heic: fromHeic, pdf: fromPdf, video: fromVideoFrame };

self.onmessage = async (event: MessageEvent<MakeRequest>) => {
  const { kind, bytes } = event.data;
  let answer: MakeResult;
  try {
    const made = await MAKERS[kind](bytes);
    answer = { ok: true, ...made };
  } catch (err) {
    answer = { ok: false, reason: err instanceof Error ? err.message.split('\n')[0]!.slice(0, 200) : String(err).slice(0, 200) };
  }
  self.postMessage(answer);
};
self.postMessage({ ready: true });
