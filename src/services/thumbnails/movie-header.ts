/** Reads `length` bytes of the (decrypted) video from `start`; fewer at its end. */
export type ReadBytes = (start: number, length: number) => Promise<Uint8Array>;

// Seconds from 1904-01-01 (the QuickTime epoch) to 1970-01-01.
const QUICKTIME_EPOCH_OFFSET = 2_082_844_800;
// A phone's MP4 has 3–6 boxes at the top and a dozen in `moov`; a hostile file gets no longer walk.
const MAX_BOXES = 64;
// Before this a recording date is an unset field or a camera's reset clock, not when it was taken.
const EARLIEST = Date.UTC(1990, 0, 1);

type Box = { type: string; body: number; end: number };

/** What a movie header says: when it was recorded (Unix ms) and how long it plays (seconds); null where it says nothing usable. */
export interface MovieHeader {
  recordedAt: number | null;
  duration: number | null;
}

const NOTHING: MovieHeader = { recordedAt: null, duration: null };
// Longer than this (a week) is a corrupt header, not a recording.
const LONGEST_SECONDS = 7 * 86_400;

/**
 * When an MP4 or QuickTime video was recorded and how long it is: the creation time (UTC) and duration of
 * its movie header (`moov/mvhd`). A date before 1990 or in the future is dropped, as is a duration of 0 or
 * absurd length. Reads only box headers and the header it wants, wherever `moov` lies (a phone writes it
 * after the media data); a file that is not one answers nothing.
 */
export async function movieHeader(size: number, read: ReadBytes, now: number): Promise<MovieHeader> {
  const moov = await find(read, 'moov', 0, size);
  const mvhd = moov && (await find(read, 'mvhd', moov.body, moov.end));
  if (!mvhd) return NOTHING;
  const b = await read(mvhd.body, 32);
  const version = b.byteLength > 0 ? b[0] : -1;
  if ((version !== 0 && version !== 1) || b.byteLength < (version === 1 ? 32 : 20)) return NOTHING;
  const view = new DataView(b.buffer, b.byteOffset, b.byteLength);
  // Version 1 has 64-bit creation, modification and duration; version 0 32-bit ones.
  const seconds = version === 1 ? Number(view.getBigUint64(4)) : view.getUint32(4);
  const timescale = view.getUint32(version === 1 ? 20 : 12);
  const units = version === 1 ? Number(view.getBigUint64(24)) : view.getUint32(16);
  const at = (seconds - QUICKTIME_EPOCH_OFFSET) * 1000;
  const length = timescale > 0 ? units / timescale : 0;
  return {
    recordedAt: seconds > 0 && at >= EARLIEST && at <= now + 86_400_000 ? at : null,
    // An unknown length is written as all ones.
    duration: length > 0 && length <= LONGEST_SECONDS && units !== 0xffffffff ? Math.round(length * 1000) / 1000 : null,
  };
}

/** The first box of `type` among those from `from` to `to`, or null (a malformed box ends the search). */
async function find(read: ReadBytes, type: string, from: number, to: number): Promise<Box | null> {
  let at = from;
  for (let i = 0; i < MAX_BOXES && at + 8 <= to; i++) {
    const box = await boxAt(read, at, to);
    if (!box) return null;
    if (box.type === type) return box;
    at = box.end;
  }
  return null;
}

async function boxAt(read: ReadBytes, start: number, limit: number): Promise<Box | null> {
  const h = await read(start, 16);
  if (h.byteLength < 8) return null;
  const view = new DataView(h.buffer, h.byteOffset, h.byteLength);
  const type = String.fromCharCode(h[4]!, h[5]!, h[6]!, h[7]!);
  if (!/^[\x20-\x7e]{4}$/.test(type)) return null;
  let length = view.getUint32(0);
  let body = start + 8;
  if (length === 1) {
    if (h.byteLength < 16) return null;
    length = Number(view.getBigUint64(8));
    body = start + 16;
  } else if (length === 0) {
    // Reaches to the end of what holds it.
    length = limit - start;
  }
  const end = start + length;
  if (end < body || end > limit) return null;
  return { type, body, end };
}
