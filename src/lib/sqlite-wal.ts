import fs from 'node:fs';

/**
 * Reading an SQLite write-ahead log as SQLite's own recovery does (https://sqlite.org/fileformat.html#the_write_ahead_log):
 * a 32-byte header, then frames of a 24-byte header and one page. A frame belongs to the log when its
 * salts match the header's and its cumulative checksum holds; the log ends at the last such frame that
 * commits (a non-zero database size), so frames being written, or left from before a restart, never count.
 */
const WAL_HEADER = 32;
const FRAME_HEADER = 24;
const MAGIC_LE = 0x377f0682;
const MAGIC_BE = 0x377f0683;

type Checksum = readonly [number, number];

export interface WalHeader {
  pageSize: number;
  bigEndian: boolean;
  salt1: number;
  salt2: number;
  /** The checksum the first frame continues from. */
  checksum: Checksum;
}

export interface WalPosition {
  salt1: number;
  salt2: number;
  /** The next frame to read, from 1. */
  nextFrame: number;
  /** The cumulative checksum through frame nextFrame - 1. */
  checksum: Checksum;
}

export interface CommittedRun {
  /** The last frame of the last whole transaction found. */
  lastFrame: number;
  /** The database's size in pages after that transaction. */
  dbPages: number;
  checksum: Checksum;
}

const LITTLE_ENDIAN_HOST = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

function checksum(data: Uint8Array, bigEndian: boolean, start: Checksum): [number, number] {
  let s0 = start[0];
  let s1 = start[1];
  if (bigEndian !== LITTLE_ENDIAN_HOST && data.byteOffset % 4 === 0) {
    // The log's byte order is the machine's (as SQLite writes it): whole words in 32-bit integer arithmetic,
    // which the JIT keeps in registers (about eight times faster than a DataView and doubles).
    const words = new Int32Array(data.buffer, data.byteOffset, data.byteLength >>> 2);
    let t0 = s0 | 0;
    let t1 = s1 | 0;
    const end = words.length - 1;
    for (let i = 0; i < end; i += 2) {
      t0 = (t0 + words[i]! + t1) | 0;
      t1 = (t1 + words[i + 1]! + t0) | 0;
    }
    return [t0 >>> 0, t1 >>> 0];
  }
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const little = !bigEndian;
  for (let i = 0; i + 8 <= data.byteLength; i += 8) {
    s0 = (s0 + view.getUint32(i, little) + s1) >>> 0;
    s1 = (s1 + view.getUint32(i + 4, little) + s0) >>> 0;
  }
  return [s0, s1];
}

function readExactly(fd: number, length: number, offset: number): Buffer | null {
  const buf = Buffer.allocUnsafe(length);
  let done = 0;
  while (done < length) {
    const n = fs.readSync(fd, buf, done, length - done, offset + done);
    if (n === 0) return null;
    done += n;
  }
  return buf;
}

/** The log's header, or null when the file is absent, empty or its header does not check out. */
export function readWalHeader(fd: number): WalHeader | null {
  const h = readExactly(fd, WAL_HEADER, 0);
  if (!h) return null;
  const magic = h.readUInt32BE(0);
  if (magic !== MAGIC_LE && magic !== MAGIC_BE) return null;
  const bigEndian = magic === MAGIC_BE;
  const raw = h.readUInt32BE(8);
  const pageSize = raw === 1 ? 65536 : raw;
  if (pageSize < 512 || pageSize > 65536 || (pageSize & (pageSize - 1)) !== 0) return null;
  const sum = checksum(h.subarray(0, 24), bigEndian, [0, 0]);
  if (sum[0] !== h.readUInt32BE(24) || sum[1] !== h.readUInt32BE(28)) return null;
  return { pageSize, bigEndian, salt1: h.readUInt32BE(16), salt2: h.readUInt32BE(20), checksum: sum };
}

/** Where reading starts in this log: at `position` when it is the same log, else (a restarted log) at its first frame. */
export function positionIn(header: WalHeader, position: WalPosition | null): WalPosition {
  if (position && position.salt1 === header.salt1 && position.salt2 === header.salt2) return position;
  return { salt1: header.salt1, salt2: header.salt2, nextFrame: 1, checksum: header.checksum };
}

function frameOffset(header: WalHeader, frame: number): number {
  return WAL_HEADER + (frame - 1) * (FRAME_HEADER + header.pageSize);
}

/** Bytes read from the log at a time: a few hundred frames per system call rather than one. */
const CHUNK = 1024 * 1024;
/** One buffer for every read (they are synchronous); not from the pool, so word-aligned for checksum(). */
let chunkBuffer: Buffer | null = null;

/**
 * Reads whole frames from `first` through `last` (or the file's end), a chunk at a time, until `visit`
 * returns false; the frame given to `visit` is only valid during the call.
 */
function eachFrame(fd: number, header: WalHeader, first: number, last: number, visit: (frame: number, buf: Buffer) => boolean): void {
  const size = FRAME_HEADER + header.pageSize;
  chunkBuffer ??= Buffer.allocUnsafeSlow(CHUNK + FRAME_HEADER + 65536);
  const perChunk = Math.max(1, Math.floor(CHUNK / size));
  for (let frame = first; frame <= last; ) {
    const wanted = Math.min(perChunk, last - frame + 1);
    const n = readUpTo(fd, chunkBuffer.subarray(0, wanted * size), frameOffset(header, frame));
    const frames = Math.floor(n / size);
    for (let i = 0; i < frames; i++, frame++) {
      if (!visit(frame, chunkBuffer.subarray(i * size, (i + 1) * size))) return;
    }
    if (frames < wanted) return;
  }
}

function readUpTo(fd: number, buf: Buffer, offset: number): number {
  let done = 0;
  while (done < buf.length) {
    const n = fs.readSync(fd, buf, done, buf.length - done, offset + done);
    if (n === 0) break;
    done += n;
  }
  return done;
}

/**
 * The committed frames from `from` on: null when none follow it. `pages[i]` is the page frame
 * `from.nextFrame + i` holds, through `lastFrame`.
 */
export function scanCommitted(fd: number, header: WalHeader, from: WalPosition): (CommittedRun & { pages: number[] }) | null {
  let sum: Checksum = from.checksum;
  let found: CommittedRun | null = null;
  const pages: number[] = [];
  eachFrame(fd, header, from.nextFrame, Number.POSITIVE_INFINITY, (frame, buf) => {
    if (buf.readUInt32BE(8) !== header.salt1 || buf.readUInt32BE(12) !== header.salt2) return false;
    sum = checksum(buf.subarray(0, 8), header.bigEndian, sum);
    sum = checksum(buf.subarray(FRAME_HEADER), header.bigEndian, sum);
    if (sum[0] !== buf.readUInt32BE(16) || sum[1] !== buf.readUInt32BE(20)) return false;
    pages.push(buf.readUInt32BE(0));
    const commit = buf.readUInt32BE(4);
    if (commit !== 0) found = { lastFrame: frame, dbPages: commit, checksum: sum };
    return true;
  });
  if (!found) return null;
  const run: CommittedRun = found;
  pages.length = run.lastFrame - from.nextFrame + 1;
  return { ...run, pages };
}

/**
 * The frames from `first` on (whose pages scanCommitted listed) that hold the last version of their page
 * in that run, in log order: applying only these gives the same database as applying them all.
 */
export function lastFramePerPage(first: number, pages: readonly number[]): number[] {
  const latest = new Map<number, number>();
  for (let i = 0; i < pages.length; i++) latest.set(pages[i]!, first + i);
  return [...latest.values()].sort((a, b) => a - b);
}

/**
 * Each of `frames` (ascending, already checked by scanCommitted), its page number and page, read a chunk at
 * a time; the page is only valid during the call.
 */
export function readFrames(fd: number, header: WalHeader, frames: readonly number[], each: (pgno: number, page: Buffer) => void): void {
  for (let k = 0; k < frames.length; ) {
    // One read covers a run of wanted frames no more than 64 apart; beyond that, a new read starts at the next.
    let end = k;
    while (end + 1 < frames.length && frames[end + 1]! - frames[end]! <= 64) end++;
    let next = k;
    eachFrame(fd, header, frames[k]!, frames[end]!, (frame, buf) => {
      if (frame !== frames[next]) return true;
      if (buf.readUInt32BE(8) !== header.salt1 || buf.readUInt32BE(12) !== header.salt2) throw lost(frame);
      each(buf.readUInt32BE(0), buf.subarray(FRAME_HEADER));
      next++;
      return true;
    });
    if (next <= end) throw lost(frames[next]!);
    k = end + 1;
  }
}

function lost(frame: number): Error {
  return new Error(`the write-ahead log lost frame ${frame} while it was read`);
}
