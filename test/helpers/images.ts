import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { createDeflate, deflateSync } from 'node:zlib';
import sharp, { type Create } from 'sharp';
import { tempDir } from './server.ts';

/** Test samples for thumbnails, made here (nothing generated is committed). */

const solid = (width: number, height: number, channels: 3 | 4 = 3) =>
  sharp({ create: { width, height, channels, background: channels === 4 ? { r: 200, g: 60, b: 30, alpha: 1 } : '#c83c1e' } });

/** A JPEG stored sideways (EXIF orientation 6: shown rotated 90° clockwise) carrying GPS tags. */
export const rotatedJpegWithGps = (width = 400, height = 300) =>
  solid(width, height)
    .jpeg()
    .withExif({
      IFD0: { Make: 'Coffer test camera' },
      IFD3: { GPSLatitudeRef: 'N', GPSLatitude: '51/1 30/1 0/1', GPSLongitudeRef: 'W', GPSLongitude: '0/1 7/1 0/1' },
    })
    .withMetadata({ orientation: 6 })
    .toBuffer();

/** A JPEG whose EXIF DateTimeOriginal is `taken` ("YYYY:MM:DD HH:MM:SS", camera-local time). */
export const jpegTakenAt = (taken: string, width = 300, height = 200) =>
  solid(width, height)
    .jpeg()
    .withExif({ IFD2: { DateTimeOriginal: taken } })
    .toBuffer();
export const jpeg = (width: number, height: number) => solid(width, height).jpeg({ quality: 90 }).toBuffer();
export const png = (width: number, height: number) => solid(width, height, 4).png().toBuffer();
export const webp = (width: number, height: number) => solid(width, height).webp().toBuffer();
export const avif = (width: number, height: number) => solid(width, height).avif({ effort: 0 }).toBuffer();

/** An animated GIF of two frames of `width`×`height`. */
export async function gif(width: number, height: number): Promise<Buffer> {
  const frame = await solid(width, height * 2, 4)
    .raw()
    .toBuffer();
  return sharp(frame, { raw: { width, height: height * 2, channels: 4, pageHeight: height } })
    .gif({ loop: 0, delay: [100, 100] })
    .toBuffer();
}

/** A PNG chunk: length, type, data and CRC. */
function pngChunk(type: string, data: Buffer): Buffer {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body) >>> 0);
  return Buffer.concat([len, body, crc]);
}

/**
 * A PNG whose header claims `width`×`height` (200 MP by default) and holds one tiny compressed row: a
 * decompression bomb's header, a few dozen bytes on disk.
 */
export function hugePngHeader(width = 20_000, height = 10_000): Buffer {
  const chunk = pngChunk;
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 2; // RGB
  // One row of zlib data; the rest the header claims is missing, as in a bomb cut short.
  const idat = deflateSync(new Uint8Array(width * 3 + 1));
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', idat),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

function crc32(buf: Buffer): number {
  let c = ~0;
  for (const byte of buf) {
    c ^= byte;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0xedb88320 : c >>> 1;
  }
  return ~c;
}

/** A JPEG's first bytes followed by garbage: recognised as a JPEG, decodable by nothing. */
export const malformedJpeg = () =>
  Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 16, 0x4a, 0x46, 0x49, 0x46, 0]), Buffer.alloc(4000, 0x5a)]);

/** A PDF of `pages` pages of `width`×`height` points, each a filled rectangle (written by hand: no library needed). */
export function pdf(pages = 20, width = 300, height = 400): Buffer {
  const objects: string[] = [];
  const kids: string[] = [];
  // 1: catalog, 2: pages; each page is a page object and its content stream.
  for (let i = 0; i < pages; i++) {
    const pageObj = 3 + i * 2;
    kids.push(`${pageObj} 0 R`);
    const content = `0.2 0.4 0.8 rg 20 20 ${width - 40} ${height - 40} re f 1 1 1 rg 40 ${height - 80} ${20 + i * 5} 20 re f`;
    objects[pageObj] = `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 ${width} ${height}] /Contents ${pageObj + 1} 0 R >>`;
    objects[pageObj + 1] = `<< /Length ${content.length} >>\nstream\n${content}\nendstream`;
  }
  objects[1] = '<< /Type /Catalog /Pages 2 0 R >>';
  objects[2] = `<< /Type /Pages /Kids [${kids.join(' ')}] /Count ${pages} >>`;
  let out = '%PDF-1.4\n';
  const offsets: number[] = [];
  for (let n = 1; n < objects.length; n++) {
    offsets[n] = out.length;
    out += `${n} 0 obj\n${objects[n]}\nendobj\n`;
  }
  const xref = out.length;
  out += `xref\n0 ${objects.length}\n0000000000 65535 f \n`;
  for (let n = 1; n < objects.length; n++) out += `${String(offsets[n]).padStart(10, '0')} 00000 n \n`;
  out += `trailer\n<< /Size ${objects.length} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}

/**
 * A one-page PDF (300×400 points) that draws one black-and-white image of `width`×`height` pixels `draws` times:
 * in its page content, inside a form XObject the page draws once, or as a stamp annotation's appearance.
 * The image is 1 bit a pixel and deflated, so 400 MP take about 50 KiB.
 */
export function pdfDrawingImage(width: number, height: number, draws: number, via: 'page' | 'form' | 'annotation' = 'page'): Buffer {
  const image = deflateSync(new Uint8Array(Math.ceil(width / 8) * height));
  const drawing = Array.from({ length: draws }, (_, i) => `q 200 0 0 200 ${50 + i} ${100 + i} cm /Im1 Do Q`).join('\n');
  const form = via === 'page' ? null : Buffer.from(drawing, 'latin1');
  const page = via === 'form' ? 'q /Fm1 Do Q' : via === 'page' ? drawing : '0 0 1 rg 20 20 260 360 re f';
  const stream = (dict: string, data: Buffer) =>
    Buffer.concat([Buffer.from(`<< ${dict} /Length ${data.length} >>\nstream\n`, 'latin1'), data, Buffer.from('\nendstream', 'latin1')]);
  const objects: Buffer[] = [
    Buffer.from('<< /Type /Catalog /Pages 2 0 R >>', 'latin1'),
    Buffer.from('<< /Type /Pages /Kids [3 0 R] /Count 1 >>', 'latin1'),
    Buffer.from(
      `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 300 400] /Resources << /XObject << /Im1 5 0 R${form ? ' /Fm1 6 0 R' : ''} >> >> /Contents 4 0 R${via === 'annotation' ? ' /Annots [7 0 R]' : ''} >>`,
      'latin1',
    ),
    stream('', Buffer.from(page, 'latin1')),
    stream(
      `/Type /XObject /Subtype /Image /Width ${width} /Height ${height} /ColorSpace /DeviceGray /BitsPerComponent 1 /Filter /FlateDecode`,
      image,
    ),
  ];
  if (form) objects.push(stream('/Type /XObject /Subtype /Form /BBox [0 0 300 400] /Resources << /XObject << /Im1 5 0 R >> >>', form));
  if (via === 'annotation')
    objects.push(Buffer.from('<< /Type /Annot /Subtype /Stamp /Rect [0 0 300 400] /F 4 /AP << /N 6 0 R >> >>', 'latin1'));
  return pdfOf(objects);
}

/** A PDF of these objects (object 1 the catalog), each numbered by its place, with its cross-reference table. */
function pdfOf(objects: Buffer[], trailer = ''): Buffer {
  const parts: Buffer[] = [Buffer.from('%PDF-1.4\n', 'latin1')];
  let length = parts[0]!.length;
  const offsets = objects.map((body, i) => {
    const at = length;
    const obj = Buffer.concat([Buffer.from(`${i + 1} 0 obj\n`, 'latin1'), body, Buffer.from('\nendobj\n', 'latin1')]);
    parts.push(obj);
    length += obj.length;
    return at;
  });
  const xref = `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`;
  parts.push(
    Buffer.from(`${xref}trailer\n<< /Size ${objects.length + 1} /Root 1 0 R${trailer} >>\nstartxref\n${length}\n%%EOF\n`, 'latin1'),
  );
  return Buffer.concat(parts);
}

/**
 * A one-page PDF of `width`×`height` points turned by `/Rotate`: blue, with a red square at the page's own top left
 * (so at the top right once turned 90° clockwise).
 */
export function pdfRotated(rotate: number, width = 300, height = 400): Buffer {
  const content = `0 0 1 rg 0 0 ${width} ${height} re f 1 0 0 rg 0 ${height - 60} 60 60 re f`;
  return pdfOf([
    Buffer.from('<< /Type /Catalog /Pages 2 0 R >>', 'latin1'),
    Buffer.from('<< /Type /Pages /Kids [3 0 R] /Count 1 >>', 'latin1'),
    Buffer.from(`<< /Type /Page /Parent 2 0 R /MediaBox [0 0 ${width} ${height}] /Rotate ${rotate} /Contents 4 0 R >>`, 'latin1'),
    Buffer.from(`<< /Length ${content.length} >>\nstream\n${content}\nendstream`, 'latin1'),
  ]);
}

/** A PDF whose page tree has no page. */
export const pdfWithoutPages = () =>
  pdfOf([Buffer.from('<< /Type /Catalog /Pages 2 0 R >>', 'latin1'), Buffer.from('<< /Type /Pages /Kids [] /Count 0 >>', 'latin1')]);

/** A PDF under the standard security handler whose user password is not empty: it opens only with the password. */
export function pdfEncrypted(): Buffer {
  const hex = (seed: number) => Buffer.from(Array.from({ length: 32 }, (_, i) => (i * 37 + seed) & 0xff)).toString('hex');
  return pdfOf(
    [
      Buffer.from('<< /Type /Catalog /Pages 2 0 R >>', 'latin1'),
      Buffer.from('<< /Type /Pages /Kids [3 0 R] /Count 1 >>', 'latin1'),
      Buffer.from('<< /Type /Page /Parent 2 0 R /MediaBox [0 0 300 400] >>', 'latin1'),
      Buffer.from(`<< /Filter /Standard /V 1 /R 2 /O <${hex(1)}> /U <${hex(2)}> /P -4 >>`, 'latin1'),
    ],
    ` /Encrypt 4 0 R /ID [<${hex(3).slice(0, 32)}> <${hex(3).slice(0, 32)}>]`,
  );
}

/**
 * A one-page PDF whose content stream, a filled square and then spaces, inflates to `bytes`: deflated a MiB at a time,
 * so neither side holds it whole (768 MiB take about 0.7 MiB).
 */
export async function pdfInflatingTo(bytes: number): Promise<Buffer> {
  const content = await deflatedSpaces(bytes, Buffer.from('0 0 1 rg 20 20 260 360 re f\n', 'latin1'));
  const stream = Buffer.concat([
    Buffer.from(`<< /Filter /FlateDecode /Length ${content.length} >>\nstream\n`, 'latin1'),
    content,
    Buffer.from('\nendstream', 'latin1'),
  ]);
  const objects = [
    Buffer.from('<< /Type /Catalog /Pages 2 0 R >>', 'latin1'),
    Buffer.from('<< /Type /Pages /Kids [3 0 R] /Count 1 >>', 'latin1'),
    Buffer.from('<< /Type /Page /Parent 2 0 R /MediaBox [0 0 300 400] /Contents 4 0 R >>', 'latin1'),
    stream,
  ];
  return pdfOf(objects);
}

/** `head` then spaces up to `bytes`, zlib-deflated a MiB at a time, so neither side holds it whole. */
async function deflatedSpaces(bytes: number, head: Buffer): Promise<Buffer> {
  const deflate = createDeflate({ level: 9 });
  const out: Buffer[] = [];
  deflate.on('data', (chunk: Buffer) => out.push(chunk));
  const done = new Promise((resolve) => deflate.on('end', resolve));
  const chunk = Buffer.alloc(1024 * 1024, 0x20);
  deflate.write(head);
  for (let i = 0; i < bytes / chunk.length; i++) if (!deflate.write(chunk)) await new Promise((resolve) => deflate.once('drain', resolve));
  deflate.end();
  await done;
  return Buffer.concat(out);
}

/** A 40×30 PNG taken at `taken` (EXIF, its eXIf chunk) whose ICC profile chunk (iCCP) inflates to `bytes`. */
export async function pngWithIccpInflatingTo(bytes: number, taken: string): Promise<Buffer> {
  const plain = await solid(40, 30)
    .png()
    .withExif({ IFD2: { DateTimeOriginal: taken } })
    .toBuffer();
  const iccp = pngChunk('iCCP', Buffer.concat([Buffer.from('icc\0\0', 'latin1'), await deflatedSpaces(bytes, Buffer.alloc(0))]));
  // After the signature and IHDR (8 + 25 bytes), as writers place it.
  return Buffer.concat([plain.subarray(0, 33), iccp, plain.subarray(33)]);
}

/** Whether Debian's heif-enc (package libheif-examples) is here to make HEIC samples; null when it is. */
export function heifEncMissing(): string | null {
  return spawnSync('heif-enc', ['--version']).error ? 'heif-enc is not installed (apt-get install libheif-examples)' : null;
}

/** A HEIC photo of `width`×`height`, encoded by heif-enc from a PNG (`alpha` below 1: see-through, kept as an alpha image). */
export async function heic(width: number, height: number, alpha = 1): Promise<Buffer> {
  const dir = tempDir('coffer-heic-');
  const input = path.join(dir, 'in.png');
  const output = path.join(dir, 'out.heic');
  const picture =
    alpha < 1 ? sharp({ create: { width, height, channels: 4, background: { r: 200, g: 60, b: 30, alpha } } }) : solid(width, height);
  fs.writeFileSync(input, await picture.png().toBuffer());
  const r = spawnSync('heif-enc', ['-q', '50', '-o', output, input]);
  if (r.status !== 0) throw new Error(`heif-enc failed: ${r.stderr}`);
  const bytes = fs.readFileSync(output);
  fs.rmSync(dir, { recursive: true, force: true });
  return bytes;
}

/**
 * A JPEG "photo" of a colour picked by `index` with a lighter band across it, so grids of them tell apart;
 * `taken` ("YYYY:MM:DD HH:MM:SS") becomes its EXIF DateTimeOriginal.
 */
export function photo(index: number, width = 640, height = 480, taken?: string): Promise<Buffer> {
  const hue = (index * 47) % 360;
  const band = Buffer.from(
    `<svg width="${width}" height="${height}"><rect width="100%" height="100%" fill="hsl(${hue},55%,45%)"/><circle cx="${width * 0.7}" cy="${height * 0.35}" r="${height * 0.18}" fill="hsl(${(hue + 40) % 360},80%,75%)"/><rect y="${height * 0.7}" width="100%" height="${height * 0.3}" fill="hsl(${(hue + 180) % 360},35%,30%)"/></svg>`,
  );
  const jpeg = sharp(band).jpeg({ quality: 80 });
  return (taken ? jpeg.withExif({ IFD2: { DateTimeOriginal: taken } }) : jpeg).toBuffer();
}

export function ffmpegMissing(): string | null {
  return spawnSync('ffmpeg', ['-version']).error ? 'ffmpeg is not installed (apt-get install ffmpeg)' : null;
}

/**
 * A video of `width`×`height` made by ffmpeg (lavfi): half a second of red, then 10 s of testsrc, so its
 * first frame is plain red. `mp4` keeps the index (moov) at the end, as cameras write it, and is large
 * enough (lossless, ≈ 0.5 MB) that ffmpeg cannot read it from a pipe; `mp4-faststart` moves the index first;
 * `webm` and `mkv` are VP9 in Matroska.
 * `recorded` (an ISO time) goes in the container as its creation time.
 */
export function video(format: 'mp4' | 'mp4-faststart' | 'webm' | 'mkv', width = 640, height = 360, recorded?: string): Buffer {
  const dir = tempDir('coffer-video-');
  const output = path.join(dir, format === 'webm' || format === 'mkv' ? `out.${format}` : 'out.mp4');
  const codec =
    format === 'webm' || format === 'mkv'
      ? ['-c:v', 'libvpx-vp9', '-deadline', 'realtime', '-cpu-used', '8', '-b:v', '200k']
      : ['-c:v', 'libx264', '-preset', 'ultrafast', '-qp', '0', ...(format === 'mp4-faststart' ? ['-movflags', '+faststart'] : [])];
  const size = `${width}x${height}`;
  const r = spawnSync('ffmpeg', [
    ...['-hide_banner', '-loglevel', 'error', '-y'],
    ...['-f', 'lavfi', '-i', `color=c=red:s=${size}:r=10:d=0.5`, '-f', 'lavfi', '-i', `testsrc=s=${size}:r=10:d=10`],
    ...['-filter_complex', '[0][1]concat=n=2:v=1[v]', '-map', '[v]', '-pix_fmt', 'yuv420p', ...codec],
    ...(recorded ? ['-metadata', `creation_time=${recorded}`] : []),
    output,
  ]);
  if (r.status !== 0) throw new Error(`ffmpeg failed: ${r.stderr}`);
  const bytes = fs.readFileSync(output);
  fs.rmSync(dir, { recursive: true, force: true });
  return bytes;
}

/** A HEIC decoded whole by heif-convert (libheif-examples, beside heif-enc), its transformations applied: a PNG. */
export function heifConvert(heic: Buffer): Promise<Buffer> {
  const dir = tempDir('coffer-heif-convert-');
  try {
    fs.writeFileSync(path.join(dir, 'in.heic'), heic);
    const r = spawnSync('heif-convert', [path.join(dir, 'in.heic'), path.join(dir, 'out.png')]);
    if (r.status !== 0) throw new Error(`heif-convert failed: ${r.stderr}`);
    return Promise.resolve(fs.readFileSync(path.join(dir, 'out.png')));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** One HEVC-coded picture from heif-enc: its hvcC property box and its coded data (the file's only item). */
async function hevcTile(dir: string, name: string, size: number, colour: string, photoLike: boolean) {
  const input = path.join(dir, `${name}.png`);
  const output = path.join(dir, `${name}.heic`);
  const flat = { width: size, height: size, channels: 3 as const, background: colour };
  // Blurred noise costs a decoder about what a camera's picture does; a flat colour almost nothing.
  const picture = photoLike
    ? sharp({ create: { ...flat, noise: { type: 'gaussian', mean: 128, sigma: 40 } } as Create }).blur(1.2)
    : sharp({ create: flat });
  fs.writeFileSync(input, await picture.png().toBuffer());
  const r = spawnSync('heif-enc', ['-q', '50', '-o', output, input]);
  if (r.status !== 0) throw new Error(`heif-enc failed: ${r.stderr}`);
  const file = fs.readFileSync(output);
  const boxAt = (type: string) => {
    const at = file.indexOf(type, 0, 'latin1') - 4;
    return file.subarray(at, at + file.readUInt32BE(at));
  };
  return { hvcC: Buffer.from(boxAt('hvcC')), data: Buffer.from(boxAt('mdat').subarray(8)) };
}

const u16 = (n: number) => Buffer.from([n >> 8, n & 255]);
const u32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
};
const box = (type: string, ...parts: Buffer[]) => {
  const payload = Buffer.concat(parts);
  return Buffer.concat([u32(payload.length + 8), Buffer.from(type, 'latin1'), payload]);
};
const fullBox = (type: string, version: number, flags: number, ...parts: Buffer[]) => box(type, u32((version << 24) | flags), ...parts);

export interface HeicGridOptions {
  /** The `irot` property: degrees counter-clockwise (0, 90, 180, 270). */
  rotateCcw?: number;
  /** The `imir` property's axis bit, when given. */
  mirrorAxis?: 0 | 1;
  /** Tiles of blurred noise (decoding costs what a photo's does) instead of flat red and blue. */
  photoLike?: boolean;
  /** A `clap` property first: the centred crop's width and height. */
  crop?: { width: number; height: number };
}

/**
 * A HEIC laid out as phones write them: a `grid` item of `tile`×`tile` HEVC tiles (the top-left tile red,
 * the others blue), cropped to `width`×`height`, with the `irot`/`imir` properties asked for. heif-enc
 * (1.15) writes no grids, so two tiles are encoded by it and the container is written here, every tile
 * item pointing at one of the two coded pictures.
 */
export async function heicGrid(width: number, height: number, tile = 512, opts: HeicGridOptions = {}): Promise<Buffer> {
  const dir = tempDir('coffer-heic-grid-');
  try {
    const corner = await hevcTile(dir, 'corner', tile, '#ff0000', opts.photoLike === true);
    const plain = await hevcTile(dir, 'plain', tile, '#0000ff', opts.photoLike === true);
    const cols = Math.ceil(width / tile);
    const rows = Math.ceil(height / tile);
    const tiles = cols * rows;
    // Item 1 is the grid, 2.. its tiles in row order. Properties: 1 corner hvcC, 2 plain hvcC, 3 tile ispe, 4 grid ispe, 5.. transforms.
    const transforms: Buffer[] = [];
    if (opts.crop) {
      const { width: cw, height: ch } = opts.crop;
      // Fractions: the clean aperture's size, then its centre's offset from the image's centre.
      const offset = (full: number, part: number) => [part - full, 2];
      transforms.push(box('clap', ...[cw, 1, ch, 1, ...offset(width, cw), ...offset(height, ch)].map((n) => u32(n >>> 0))));
    }
    if (opts.rotateCcw !== undefined) transforms.push(box('irot', Buffer.from([(opts.rotateCcw / 90) & 3])));
    if (opts.mirrorAxis !== undefined) transforms.push(box('imir', Buffer.from([opts.mirrorAxis])));
    const ipco = box(
      'ipco',
      corner.hvcC,
      plain.hvcC,
      fullBox('ispe', 0, 0, u32(tile), u32(tile)),
      fullBox('ispe', 0, 0, u32(width), u32(height)),
      ...transforms,
    );
    const gridProps = [4, ...transforms.map((_, i) => 0x80 | (5 + i))];
    const ipma = fullBox(
      'ipma',
      0,
      0,
      u32(tiles + 1),
      u16(1),
      Buffer.from([gridProps.length, ...gridProps]),
      ...Array.from({ length: tiles }, (_, i) => Buffer.concat([u16(i + 2), Buffer.from([2, 0x80 | (i === 0 ? 1 : 2), 3])])),
    );
    const infe = (id: number, type: string, hidden: boolean) =>
      fullBox('infe', 2, hidden ? 1 : 0, u16(id), u16(0), Buffer.from(type, 'latin1'), Buffer.from([0]));
    const iinf = fullBox(
      'iinf',
      0,
      0,
      u16(tiles + 1),
      infe(1, 'grid', false),
      ...Array.from({ length: tiles }, (_, i) => infe(i + 2, 'hvc1', true)),
    );
    const iref = fullBox('iref', 0, 0, box('dimg', u16(1), u16(tiles), ...Array.from({ length: tiles }, (_, i) => u16(i + 2))));
    const grid = Buffer.concat([Buffer.from([0, 0, rows - 1, cols - 1]), u16(width), u16(height)]);
    const ftyp = box('ftyp', Buffer.from('heic', 'latin1'), u32(0), Buffer.from('mif1heic', 'latin1'));
    const meta = (dataAt: number) => {
      const extent = (id: number, offset: number, length: number) => Buffer.concat([u16(id), u16(0), u16(1), u32(offset), u32(length)]);
      const cornerAt = dataAt + grid.length;
      const plainAt = cornerAt + corner.data.length;
      const iloc = fullBox(
        'iloc',
        0,
        0,
        Buffer.from([0x44, 0x00]),
        u16(tiles + 1),
        extent(1, dataAt, grid.length),
        ...Array.from({ length: tiles }, (_, i) =>
          i === 0 ? extent(2, cornerAt, corner.data.length) : extent(i + 2, plainAt, plain.data.length),
        ),
      );
      const hdlr = fullBox('hdlr', 0, 0, u32(0), Buffer.from('pict', 'latin1'), Buffer.alloc(12), Buffer.from([0]));
      return fullBox('meta', 0, 0, hdlr, fullBox('pitm', 0, 0, u16(1)), iinf, iref, box('iprp', ipco, ipma), iloc);
    };
    const dataAt = ftyp.length + meta(0).length + 8;
    return Buffer.concat([ftyp, meta(dataAt), box('mdat', grid, corner.data, plain.data)]);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * A grey progressive JPEG of `side`×`side` with `scans` scans: a DC scan, then AC scans that each skip every block
 * with end-of-band runs (a few dozen bytes each), as a hostile file repeats them (written by hand: encoders never do).
 * `hidden`: a marker without a length (RST0) after the start and a stray byte before each scan, which libjpeg skips.
 */
export function progressiveJpegWithScans(side: number, scans: number, hidden = false): Buffer {
  const segment = (marker: number, body: number[]) => [0xff, marker, (body.length + 2) >> 8, (body.length + 2) & 255, ...body];
  const bits = () => {
    const out: number[] = [];
    let acc = 0;
    let n = 0;
    const put = (value: number, length: number) => {
      for (let i = length - 1; i >= 0; i--) {
        acc = (acc << 1) | ((value >> i) & 1);
        if (++n === 8) {
          out.push(acc, ...(acc === 0xff ? [0] : []));
          acc = 0;
          n = 0;
        }
      }
    };
    // Padded with ones, as the standard says.
    const end = () => (n > 0 ? (put(0x7f >> (n - 1), 8 - n), out) : out);
    return { put, end };
  };
  const blocks = Math.ceil(side / 8) ** 2;
  const dc = bits();
  // One Huffman code (a 0 bit) for "no difference": every block's DC.
  for (let i = 0; i < blocks; i++) dc.put(0, 1);
  const ac = bits();
  // Symbol 0xE0 (a 0 bit): an end-of-band run of 16,384 + the 14 bits that follow blocks; 0x2AAA holds no 0xFF byte.
  for (let left = blocks; left > 0; left -= 16_384 + 0x2aaa) ac.put(0x2aaa, 15);
  const acScan = [...(hidden ? [0x20] : []), ...segment(0xda, [1, 1, 0x00, 1, 63, 0x00]), ...ac.end()];
  const parts = [
    [0xff, 0xd8, ...(hidden ? [0xff, 0xd0] : [])],
    segment(0xdb, [0, ...new Array(64).fill(1)]),
    segment(0xc2, [8, side >> 8, side & 255, side >> 8, side & 255, 1, 1, 0x11, 0]),
    segment(0xc4, [0x00, 1, ...new Array(15).fill(0), 0x00]),
    segment(0xc4, [0x10, 1, ...new Array(15).fill(0), 0xe0]),
    segment(0xda, [1, 1, 0x00, 0, 0, 0x00]),
    dc.end(),
  ].map((p) => Buffer.from(p));
  return Buffer.concat([...parts, ...new Array(scans - 1).fill(Buffer.from(acScan)), Buffer.from([0xff, 0xd9])]);
}
