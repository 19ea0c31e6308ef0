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

function checksum(data: Uint8Array, bigEndian: boolean, start: Checksum): [number, number] {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  let s0 = start[0];
  let s1 = start[1];
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

/** The committed frames from `from` on: null when none follow it. */
export function scanCommitted(fd: number, header: WalHeader, from: WalPosition): CommittedRun | null {
  let sum: Checksum = from.checksum;
  let found: CommittedRun | null = null;
  const size = FRAME_HEADER + header.pageSize;
  for (let frame = from.nextFrame; ; frame++) {
    const buf = readExactly(fd, size, frameOffset(header, frame));
    if (!buf) break;
    if (buf.readUInt32BE(8) !== header.salt1 || buf.readUInt32BE(12) !== header.salt2) break;
    sum = checksum(buf.subarray(0, 8), header.bigEndian, sum);
    sum = checksum(buf.subarray(FRAME_HEADER), header.bigEndian, sum);
    if (sum[0] !== buf.readUInt32BE(16) || sum[1] !== buf.readUInt32BE(20)) break;
    const commit = buf.readUInt32BE(4);
    if (commit !== 0) found = { lastFrame: frame, dbPages: commit, checksum: sum };
  }
  return found;
}

/**
 * The frames from `first` through `last` (already checked by scanCommitted) that hold the last version of
 * their page in that run, in log order: applying only these gives the same database as applying them all.
 */
export function lastFramePerPage(fd: number, header: WalHeader, first: number, last: number): number[] {
  const latest = new Map<number, number>();
  const head = Buffer.allocUnsafe(FRAME_HEADER);
  for (let frame = first; frame <= last; frame++) {
    if (fs.readSync(fd, head, 0, FRAME_HEADER, frameOffset(header, frame)) !== FRAME_HEADER) throw lost(frame);
    latest.set(head.readUInt32BE(0), frame);
  }
  return [...latest.values()].sort((a, b) => a - b);
}

function lost(frame: number): Error {
  return new Error(`the write-ahead log lost frame ${frame} while it was read`);
}

/** One frame's page number and page. */
export function readFrame(fd: number, header: WalHeader, frame: number): { pgno: number; page: Buffer } {
  const buf = readExactly(fd, FRAME_HEADER + header.pageSize, frameOffset(header, frame));
  if (!buf || buf.readUInt32BE(8) !== header.salt1 || buf.readUInt32BE(12) !== header.salt2) throw lost(frame);
  return { pgno: buf.readUInt32BE(0), page: buf.subarray(FRAME_HEADER) };
}
