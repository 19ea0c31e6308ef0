import fs from 'node:fs';
import { FFIType, toArrayBuffer } from 'bun:ffi';
import { openLibc } from '../lib/libc.ts';

const HEADER = 48;
const WORDS = HEADER / 4;
const PROT_READ = 1;
const MAP_SHARED = 1;

const MMAP = {
  mmap: { args: [FFIType.ptr, FFIType.u64, FFIType.i32, FFIType.i32, FFIType.i32, FFIType.i64], returns: FFIType.ptr },
} as const;

let libc: ReturnType<typeof openLibc<typeof MMAP>> | undefined;

/**
 * The file's first `length` bytes mapped shared (each read sees the last write of any process), through the
 * descriptor given; null where the C library cannot be loaded or the file is shorter. `Bun.mmap` takes a path
 * and closes the descriptor it opens, which would drop this process's locks on the file (see below).
 */
function mapShared(fd: number, length: number): Int32Array | null {
  if (fs.fstatSync(fd).size < length) return null;
  if (libc === undefined) libc = openLibc(MMAP);
  // MAP_FAILED ((void *) -1) comes back as a bigint, not a number.
  const at = libc?.mmap(null, length, PROT_READ, MAP_SHARED, fd, 0);
  return typeof at === 'number' && at !== 0 ? new Int32Array(toArrayBuffer(at, 0, length)) : null;
}

/** Whether the header's words in `a` from `at` equal the first ones of `b`. */
function sameWords(a: Int32Array, at: number, b: Int32Array): boolean {
  for (let i = 0; i < WORDS; i++) if (a[at + i] !== b[i]) return false;
  return true;
}

/**
 * The header of a WAL database's index (its `-shm` file; sqlite.org/walformat.html § 2.1), which every commit by
 * any connection, this process's or another's (the CLI), rewrites before it returns: change counter, frame count
 * and checksums. Comparing it tells whether anything was committed since, where a statement costs a read
 * transaction (a statement, two `fcntl` locks and an `fstat`).
 *
 * Mapped from a descriptor held open for the life of the process, never closed: closing any descriptor of the
 * file drops every POSIX lock this process holds on it, SQLite's own included (the fifth pass mapped the file
 * with `Bun.mmap`, which opens and closes it, and a CLI commit then went unseen); read with one `pread` from
 * it where it cannot be mapped. Reading the mapping cannot fault: SQLite truncates the file only when a
 * connection opens it with no other holding it (never while this process's connection is open), and then to
 * 3 bytes, inside the one page mapped here (docs/performance.md, the ninth pass: the profile route).
 */
export class WalIndexHeader {
  private fd: number | null | undefined;
  private mapped: Int32Array | null = null;
  // Compared a word at a time in JavaScript: two Buffer.compare calls per check were most of its cost.
  private readonly now = new Int32Array(2 * WORDS);
  private readonly bytes = new Uint8Array(this.now.buffer);

  constructor(private readonly file: string) {}

  /**
   * `read`, answered from what it returned last while nothing was committed since, by any connection. Read
   * again inside a transaction (this connection's own writes are not in the header yet) and wherever the header
   * cannot be read. The header is noted before `read` runs, so a commit in between moves it again.
   */
  untilCommit<T>(read: () => T, inTransaction: () => boolean): () => T {
    const noted = new Int32Array(WORDS);
    let value: T | undefined;
    return () => {
      if (inTransaction()) return read();
      const now = this.read();
      if (now === null) {
        value = undefined;
        return read();
      }
      if (value !== undefined && sameWords(now, 0, noted)) return value;
      for (let i = 0; i < WORDS; i++) noted[i] = now[i]!;
      value = read();
      return value;
    };
  }

  /** The header, its first copy; null where there is no index (no file, not WAL) or a commit is writing it now. */
  private read(): Int32Array | null {
    if (this.fd === undefined) {
      try {
        this.fd = fs.openSync(this.file, 'r');
        this.mapped = mapShared(this.fd, 2 * HEADER);
      } catch {
        this.fd ??= null;
      }
    }
    if (this.mapped) this.now.set(this.mapped);
    else if (this.fd === null || fs.readSync(this.fd, this.bytes, 0, 2 * HEADER, 0) < 2 * HEADER) return null;
    // A commit writes the second copy, then the first: copies that differ are being written. Byte 12 is isInit.
    if (this.bytes[12] !== 1 || !sameWords(this.now, WORDS, this.now)) return null;
    return this.now;
  }
}
