// HEIC/HEIF decoding through libheif's C API (libheif-js, wasm): a grid photo tile by tile, each tile reduced
// as it comes, so memory follows the thumbnail's size and not the photo's (a phone's 48 MP is 192 tiles).
import libheif, { type LibheifModule } from 'libheif-js/wasm-bundle';
import { HEIC_MAX_PIXELS } from './formats.ts';

/** Pixels (RGB, or RGBA when the photo has alpha) at least `minLongEdge` on the long side unless the photo is smaller. */
export interface ReducedHeic {
  data: Buffer;
  channels: 3 | 4;
  width: number;
  height: number;
  /** The photo's own size, upright. */
  fullWidth: number;
  fullHeight: number;
  /** What libheif says to do after decoding, in order (irot, imir, clap), on the reduced pixels. */
  transforms: Transform[];
}

type Transform =
  | { kind: 'rotate'; degreesCcw: number }
  | { kind: 'mirror'; flipVertically: boolean }
  | { kind: 'crop'; left: number; top: number; width: number; height: number };

const COLORSPACE_RGB = 1;
const CHROMA_INTERLEAVED_RGB = 10;
const CHROMA_INTERLEAVED_RGBA = 11;
const CHANNEL_INTERLEAVED = 10;
const fourcc = (s: string) => (s.charCodeAt(0) << 24) | (s.charCodeAt(1) << 16) | (s.charCodeAt(2) << 8) | s.charCodeAt(3);
const PROPERTY_ROTATION = fourcc('irot');
const PROPERTY_MIRROR = fourcc('imir');
const PROPERTY_CROP = fourcc('clap');
// heif_transform_mirror_direction_vertical: flip top to bottom (libheif's own decode does so).
const MIRROR_VERTICAL = 0;
const MAX_TRANSFORMS = 8;

/** Small scratch allocations in wasm memory, all freed at the end. */
class Scratch {
  private readonly blocks: number[] = [];
  constructor(private readonly m: LibheifModule) {}
  alloc(bytes: number): number {
    const p = this.m._malloc(bytes);
    if (!p) throw new Error('out of memory');
    this.blocks.push(p);
    this.m.HEAPU8.fill(0, p, p + bytes);
    return p;
  }
  u32(p: number): number {
    return this.m.HEAPU32[p >>> 2]!;
  }
  freeAll(): void {
    for (const p of this.blocks) this.m._free(p);
  }
}

/**
 * Decodes the primary image of a HEIC, reduced by the largest power of two that keeps its long edge at
 * least `minLongEdge` and divides the tiles (refused when that leaves more than `maxReduced` pixels). A
 * grid's tiles are decoded one at a time, untransformed as stored; an image that is one coded picture is
 * decoded whole, so one above HEIC_MAX_PIXELS is refused.
 */
export function decodeHeicReduced(
  bytes: Uint8Array,
  { maxPixels, minLongEdge, maxReduced = HEIC_MAX_PIXELS }: { maxPixels: number; minLongEdge: number; maxReduced?: number },
): ReducedHeic {
  const m = libheif;
  const s = new Scratch(m);
  const ctx = m._heif_context_alloc();
  let handle = 0;
  let options = 0;
  try {
    const err = s.alloc(16);
    const check = (what: string) => {
      const code = m.HEAP32[err >>> 2]!;
      if (code !== 0) {
        const message = m.HEAPU32[(err + 8) >>> 2] ? readCString(m, m.HEAPU32[(err + 8) >>> 2]!) : `error ${code}`;
        throw new Error(`${what}: ${message}`);
      }
    };
    const file = s.alloc(bytes.length);
    m.HEAPU8.set(bytes, file);
    m._heif_context_read_from_memory_without_copy(err, ctx, file, bytes.length, 0);
    check('not a HEIF file');
    const handleOut = s.alloc(4);
    m._heif_context_get_primary_image_handle(err, ctx, handleOut);
    check('no primary image');
    handle = s.u32(handleOut);

    const tiling = s.alloc(128);
    m._heif_image_handle_get_image_tiling(err, handle, 0, tiling);
    check('no tiling');
    const [cols, rows, tileW, tileH, imgW, imgH] = [1, 2, 3, 4, 5, 6].map((i) => s.u32(tiling + 4 * i)) as [
      number,
      number,
      number,
      number,
      number,
      number,
    ];
    if (!(imgW > 0 && imgH > 0 && tileW > 0 && tileH > 0)) throw new Error('the image has no dimensions');
    if (imgW * imgH > maxPixels) throw new Error(`the image has ${imgW}×${imgH} pixels, more than ${maxPixels}`);
    const single = cols * rows === 1;
    if (single && tileW * tileH > HEIC_MAX_PIXELS)
      throw new Error(`the image is one coded picture of ${tileW}×${tileH} pixels, more than ${HEIC_MAX_PIXELS}`);

    // The largest power of two that keeps the long edge, and that divides the tiles (an output pixel within one tile).
    let f = 1;
    while (Math.max(imgW, imgH) / (f * 2) >= minLongEdge && (single || (tileW % (f * 2) === 0 && tileH % (f * 2) === 0))) f *= 2;
    const outW = Math.ceil(imgW / f);
    const outH = Math.ceil(imgH / f);
    // Tiles of an odd size cannot be halved: the buffer would be the whole photo's.
    if (outW * outH > maxReduced) throw new Error(`tiles of ${tileW}×${tileH} pixels cannot be reduced to ${maxReduced} pixels or fewer`);
    const channels = m._heif_image_handle_has_alpha_channel(handle) ? 4 : 3;
    const chroma = channels === 4 ? CHROMA_INTERLEAVED_RGBA : CHROMA_INTERLEAVED_RGB;
    const out = Buffer.alloc(outW * outH * channels);

    options = m._heif_decoding_options_alloc();
    // ignore_transformations (the struct's second byte): tiles as stored; the transforms are applied after.
    m.HEAPU8[options + 1] = 1;
    const imageOut = s.alloc(4);
    const strideOut = s.alloc(4);
    for (let ty = 0; ty < rows; ty++) {
      for (let tx = 0; tx < cols; tx++) {
        if (single) m._heif_decode_image(err, handle, imageOut, COLORSPACE_RGB, chroma, options);
        else m._heif_image_handle_decode_image_tile(err, handle, imageOut, COLORSPACE_RGB, chroma, options, tx, ty);
        check(`tile ${tx},${ty}`);
        const image = s.u32(imageOut);
        try {
          const plane = m._heif_image_get_plane_readonly2(image, CHANNEL_INTERLEAVED, strideOut);
          if (!plane) throw new Error(`tile ${tx},${ty} has no pixels`);
          const w = Math.min(m._heif_image_get_width(image, CHANNEL_INTERLEAVED), imgW - tx * tileW);
          const h = Math.min(m._heif_image_get_height(image, CHANNEL_INTERLEAVED), imgH - ty * tileH);
          reduceInto(out, outW, channels, m.HEAPU8, plane, s.u32(strideOut), w, h, (tx * tileW) / f, (ty * tileH) / f, f);
        } finally {
          m._heif_image_release(image);
        }
      }
    }
    return {
      data: out,
      channels,
      width: outW,
      height: outH,
      fullWidth: m._heif_image_handle_get_width(handle),
      fullHeight: m._heif_image_handle_get_height(handle),
      transforms: transformsOf(m, s, ctx, m._heif_image_handle_get_item_id(handle), imgW, imgH, f),
    };
  } finally {
    if (options) m._heif_decoding_options_free(options);
    if (handle) m._heif_image_handle_release(handle);
    m._heif_context_free(ctx);
    s.freeAll();
  }
}

/** Box filter: each `f`×`f` block of a tile's pixels (`c` bytes each, rows of `stride` bytes) averaged into one pixel of `out`. */
function reduceInto(
  out: Buffer,
  outW: number,
  c: number,
  heap: Uint8Array,
  plane: number,
  stride: number,
  w: number,
  h: number,
  ox: number,
  oy: number,
  f: number,
) {
  const bw = Math.ceil(w / f);
  const bh = Math.ceil(h / f);
  for (let by = 0; by < bh; by++) {
    const y0 = by * f;
    const y1 = Math.min(y0 + f, h);
    for (let bx = 0; bx < bw; bx++) {
      const x0 = bx * f;
      const x1 = Math.min(x0 + f, w);
      let r = 0;
      let g = 0;
      let b = 0;
      let a = 0;
      for (let y = y0; y < y1; y++) {
        let p = plane + y * stride + x0 * c;
        for (let x = x0; x < x1; x++, p += c) {
          r += heap[p]!;
          g += heap[p + 1]!;
          b += heap[p + 2]!;
          if (c === 4) a += heap[p + 3]!;
        }
      }
      const n = (y1 - y0) * (x1 - x0);
      const o = ((oy + by) * outW + ox + bx) * c;
      out[o] = Math.round(r / n);
      out[o + 1] = Math.round(g / n);
      out[o + 2] = Math.round(b / n);
      if (c === 4) out[o + 3] = Math.round(a / n);
    }
  }
}

/** The item's transformative properties in their order, crops given in reduced pixels. */
function transformsOf(m: LibheifModule, s: Scratch, ctx: number, item: number, imgW: number, imgH: number, f: number): Transform[] {
  const list = s.alloc(4 * MAX_TRANSFORMS);
  const n = m._heif_item_get_transformation_properties(ctx, item, list, MAX_TRANSFORMS);
  const found: Transform[] = [];
  let w = imgW;
  let h = imgH;
  for (let i = 0; i < n; i++) {
    const property = s.u32(list + 4 * i);
    const type = m._heif_item_get_property_type(ctx, item, property);
    if (type === PROPERTY_ROTATION) {
      const degreesCcw = m._heif_item_get_property_transform_rotation_ccw(ctx, item, property);
      if (degreesCcw % 180 !== 0) [w, h] = [h, w];
      found.push({ kind: 'rotate', degreesCcw });
    } else if (type === PROPERTY_MIRROR) {
      found.push({ kind: 'mirror', flipVertically: m._heif_item_get_property_transform_mirror(ctx, item, property) === MIRROR_VERTICAL });
    } else if (type === PROPERTY_CROP) {
      const borders = s.alloc(16);
      m._heif_item_get_property_transform_crop_borders(ctx, item, property, w, h, borders, borders + 4, borders + 8, borders + 12);
      const [left, top, right, bottom] = [0, 1, 2, 3].map((k) => m.HEAP32[(borders >>> 2) + k]!) as [number, number, number, number];
      const cw = w - left - right;
      const ch = h - top - bottom;
      if (!(cw > 0 && ch > 0)) throw new Error('the crop leaves no pixels');
      found.push({
        kind: 'crop',
        left: Math.floor(left / f),
        top: Math.floor(top / f),
        width: Math.max(1, Math.round(cw / f)),
        height: Math.max(1, Math.round(ch / f)),
      });
      [w, h] = [cw, ch];
    } else throw new Error(`an unknown transformation (${type})`);
  }
  return found;
}

function readCString(m: LibheifModule, p: number): string {
  let end = p;
  while (m.HEAPU8[end] !== 0 && end - p < 200) end++;
  return Buffer.from(m.HEAPU8.subarray(p, end)).toString('utf8');
}
