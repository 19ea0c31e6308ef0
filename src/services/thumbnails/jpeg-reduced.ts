import fs from 'node:fs';
import { FFIType, ptr } from 'bun:ffi';
import { openLibc } from '../../lib/libc.ts';

const MFD_CLOEXEC = 1;
const NAME = Buffer.from('coffer-thumbnail\0');

// sharp reads a file, not a buffer, with libjpeg's scaled decode: an anonymous in-memory file names the bytes.
const libc = fs.existsSync('/proc/self/fd') ? openLibc({ memfd_create: { args: [FFIType.ptr, FFIType.u32], returns: FFIType.i32 } }) : null;

/** The power of two libjpeg may decode a JPEG smaller by and still leave its long edge at least `target`. */
export function jpegLoadShrink(longEdge: number, target: number): 1 | 2 | 4 | 8 {
  for (const p of [8, 4, 2] as const) if (longEdge / p >= target) return p;
  return 1;
}

/**
 * Runs `use` with a JPEG's source decoded `shrink` times smaller on load: a path with libvips' `[shrink=N]`
 * (sharp asks for it itself only when its shrink's integer part is above the factor, so never from 4000 to
 * 1,600 px: half the decode's CPU); the bytes themselves where the shrink is 1 or no in-memory file can be made.
 */
export async function withReducedJpeg<T>(
  bytes: Uint8Array,
  shrink: 1 | 2 | 4 | 8,
  use: (input: string | Uint8Array) => Promise<T>,
): Promise<T> {
  const fd = shrink > 1 && libc ? libc.memfd_create(ptr(NAME), MFD_CLOEXEC) : -1;
  if (fd < 0) return use(bytes);
  try {
    for (let done = 0; done < bytes.length; ) done += fs.writeSync(fd, bytes, done);
    return await use(`/proc/self/fd/${fd}[shrink=${shrink}]`);
  } finally {
    fs.closeSync(fd);
  }
}

const SOS = 0xda;
const EOI = 0xd9;
// Markers without a length: TEM and the restarts RST0-7.
const standalone = (marker: number) => marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7);

/**
 * How many scans (SOS markers) a JPEG has, counting no further than `limit + 1`: a progressive JPEG is decoded scan
 * by scan over the whole picture, and libjpeg sets no limit (10,000 empty scans over 100 MP are 110 s of CPU). Read as
 * libjpeg reads it: bytes between segments and markers without a length are skipped, so none hides a scan.
 */
export function jpegScans(bytes: Uint8Array, limit: number): number {
  let scans = 0;
  for (let at = 2; scans <= limit; ) {
    at = bytes.indexOf(0xff, at);
    if (at < 0 || at + 1 >= bytes.length) return scans;
    const marker = bytes[at + 1]!;
    if (marker === EOI) return scans;
    // Fill bytes, a stuffed zero or a marker without a length: the next byte.
    if (marker === 0xff || marker === 0 || standalone(marker)) {
      at += marker === 0xff ? 1 : 2;
      continue;
    }
    if (at + 4 > bytes.length) return scans;
    at += 2 + ((bytes[at + 2]! << 8) | bytes[at + 3]!);
    if (marker !== SOS) continue;
    scans++;
    // The entropy-coded data runs to the next marker that is neither a stuffed 0xFF00 nor a restart.
    for (at = bytes.indexOf(0xff, at); at >= 0; at = bytes.indexOf(0xff, at + 1)) {
      const next = bytes[at + 1];
      if (next === undefined || (next !== 0 && !standalone(next))) break;
    }
    if (at < 0) return scans;
  }
  return scans;
}
