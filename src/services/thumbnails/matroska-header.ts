import type { MovieHeader, ReadBytes } from './movie-header.ts';

const EBML = 0x1a45dfa3;
const SEGMENT = 0x18538067;
const INFO = 0x1549a966;
const CLUSTER = 0x1f43b675;
const TIMECODE_SCALE = 0x2ad7b1;
const DURATION = 0x4489;
const DATE_UTC = 0x4461;
// Nanoseconds a Duration unit lasts when the file does not say (Matroska's default TimecodeScale).
const DEFAULT_SCALE = 1_000_000;
// Unix ms of 2001-01-01T00:00:00Z, from which DateUTC counts nanoseconds.
const MATROSKA_EPOCH = Date.UTC(2001, 0, 1);
// A muxer writes a few elements (SeekHead, Void, Info, Tracks...) before the first Cluster; a hostile file gets no longer walk.
const MAX_ELEMENTS = 64;
// Info holds a dozen small fields; more than this is not an Info worth reading.
const MAX_INFO_BYTES = 64 * 1024;
// Longer than this (a week) is a corrupt header, not a recording.
const LONGEST_SECONDS = 7 * 86_400;
// Before this a recording date is an unset field or a camera's reset clock, not when it was taken.
const EARLIEST = Date.UTC(1990, 0, 1);

const NOTHING: MovieHeader = { recordedAt: null, duration: null };

type Element = { id: number; body: number; end: number | null };

/** Whether the file's first bytes are an EBML header: a Matroska or WebM video. */
export function isMatroska(head: Uint8Array): boolean {
  return head.byteLength >= 4 && ((head[0]! << 24) | (head[1]! << 16) | (head[2]! << 8) | head[3]!) >>> 0 === EBML;
}

/**
 * How long a WebM or Matroska video plays (Segment/Info/Duration × TimecodeScale, in seconds) and when it
 * was recorded (Info/DateUTC), null where it says nothing usable. Walks at most 64 elements of the Segment,
 * stopping at the first Cluster (Info comes before the media), and reads only their headers and Info's body;
 * a malformed file answers nothing.
 */
export async function matroskaHeader(size: number, read: ReadBytes, now: number): Promise<MovieHeader> {
  const header = await elementAt(read, 0, size);
  if (!header || header.id !== EBML || header.end === null) return NOTHING;
  const segment = await elementAt(read, header.end, size);
  if (!segment || segment.id !== SEGMENT) return NOTHING;
  const end = segment.end ?? size;
  let at = segment.body;
  for (let i = 0; i < MAX_ELEMENTS && at < end; i++) {
    const child = await elementAt(read, at, end);
    if (!child || child.id === CLUSTER || child.end === null) return NOTHING;
    if (child.id === INFO)
      return child.end - child.body > MAX_INFO_BYTES ? NOTHING : info(await read(child.body, child.end - child.body), now);
    at = child.end;
  }
  return NOTHING;
}

/** The fields of an Info element's body that say how long and when. */
function info(b: Uint8Array, now: number): MovieHeader {
  let scale = DEFAULT_SCALE;
  let units: number | null = null;
  let date: number | null = null;
  for (let at = 0; at < b.byteLength; ) {
    const id = elementId(b, at);
    const length = id && vint(b, at + id.length, 8, true);
    if (!id || !length || length.value === null) break;
    const body = at + id.length + length.length;
    const end = body + length.value;
    if (end > b.byteLength) break;
    const view = new DataView(b.buffer, b.byteOffset + body, length.value);
    if (id.value === TIMECODE_SCALE && length.value >= 1 && length.value <= 8) scale = Number(uint(b, body, length.value));
    else if (id.value === DURATION && length.value === 4) units = view.getFloat32(0);
    else if (id.value === DURATION && length.value === 8) units = view.getFloat64(0);
    else if (id.value === DATE_UTC && length.value === 8) date = MATROSKA_EPOCH + Number(view.getBigInt64(0) / 1_000_000n);
    at = end;
  }
  const seconds = units !== null && scale > 0 ? (units * scale) / 1e9 : 0;
  return {
    recordedAt: date !== null && date >= EARLIEST && date <= now + 86_400_000 ? date : null,
    duration: Number.isFinite(seconds) && seconds > 0 && seconds <= LONGEST_SECONDS ? Math.round(seconds * 1000) / 1000 : null,
  };
}

/** The element at `start`: its id, where its body starts and ends (null: an unknown size, up to what holds it). */
async function elementAt(read: ReadBytes, start: number, limit: number): Promise<Element | null> {
  const h = await read(start, 12);
  const id = elementId(h, 0);
  const length = id && vint(h, id.length, 8, true);
  if (!id || !length) return null;
  const body = start + id.length + length.length;
  if (length.value === null) return { id: id.value, body, end: null };
  const end = body + length.value;
  return end > limit ? null : { id: id.value, body, end };
}

/** An element's id: a variable-length integer of at most 4 bytes, its length marker kept. */
function elementId(b: Uint8Array, at: number): { value: number; length: number } | null {
  const id = vint(b, at, 4, false);
  return id && id.value !== null ? { value: id.value, length: id.length } : null;
}

/**
 * An EBML variable-length integer at `at`: its leading zeros give its length (at most `max` bytes). An id keeps
 * its length marker; a size drops it, and all ones means an unknown size (null).
 */
function vint(b: Uint8Array, at: number, max: number, isSize: boolean): { value: number | null; length: number } | null {
  const first = b[at];
  if (first === undefined || first === 0) return null;
  const length = Math.clz32(first) - 23;
  if (length > max || at + length > b.byteLength) return null;
  let value = isSize ? first & (0xff >> length) : first;
  let ones = value === 0xff >> length;
  for (let i = 1; i < length; i++) {
    value = value * 256 + b[at + i]!;
    ones &&= b[at + i] === 0xff;
  }
  if (isSize && ones) return { value: null, length };
  return Number.isSafeInteger(value) ? { value, length } : null;
}

function uint(b: Uint8Array, at: number, length: number): bigint {
  let v = 0n;
  for (let i = 0; i < length; i++) v = (v << 8n) | BigInt(b[at + i]!);
  return v;
}
