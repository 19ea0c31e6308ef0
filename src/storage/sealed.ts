import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { grownFor, handOver, releaseChunk } from '../lib/buffers.ts';
import {
  ObjectIntegrityError,
  RangeNotSatisfiableError,
  type ByteRange,
  type ObjectReader,
  type PutOptions,
  type StorageDriver,
} from './driver.ts';
import { KeyIntegrityError, wrappedKeyId, type Keyring } from './keyring.ts';

/**
 * Encryption at rest over any driver (a streaming AEAD in the manner of Tink and age).
 *
 * Stored object = header ‖ segment 0 ‖ … ‖ segment n-1. Header (16 bytes): magic `CFSE`, version 1,
 * log2 of the segment size, two zero bytes, a 7-byte random nonce prefix, one zero byte. Each segment
 * is up to 64 KiB of plaintext sealed with AES-256-GCM under the object's own data key, with nonce =
 * prefix ‖ segment index (u32 BE) ‖ last-segment flag and the header as associated data. Reordering,
 * truncation, extension and bit flips therefore fail authentication. The data key is wrapped by the
 * master key and kept by the caller (the file's database row), so rotation never rewrites an object.
 */
export const SEGMENT_SIZE = 64 * 1024;
export const HEADER_SIZE = 16;
const TAG_SIZE = 16;
export const SEALED_SEGMENT = SEGMENT_SIZE + TAG_SIZE;
const MAGIC = Buffer.from('CFSE');
// Sealed segments fetched per positional read: a syscall per MiB of plaintext instead of per 256 KiB chunk.
const SEGMENTS_PER_READ = 16;
const VERSION = 1;

export interface SealedInfo {
  /** Plaintext bytes. */
  size: number;
  /** The data key wrapped by the master key (`k1.<keyId>.…`). */
  wrappedKey: string;
  keyId: string;
}

export function segmentCount(size: number): number {
  return size === 0 ? 1 : Math.ceil(size / SEGMENT_SIZE);
}

/** Bytes the driver holds for a plaintext of `size` bytes. */
export function sealedSize(size: number): number {
  return HEADER_SIZE + size + segmentCount(size) * TAG_SIZE;
}

export function makeHeader(prefix: Uint8Array): Buffer {
  const h = Buffer.alloc(HEADER_SIZE);
  MAGIC.copy(h, 0);
  h[4] = VERSION;
  h[5] = Math.log2(SEGMENT_SIZE);
  Buffer.from(prefix).copy(h, 8);
  return h;
}

function parseHeader(h: Uint8Array): Buffer {
  const b = Buffer.from(h.buffer, h.byteOffset, h.byteLength);
  if (b.length < HEADER_SIZE || !b.subarray(0, 4).equals(MAGIC)) throw new ObjectIntegrityError('stored object has no Coffer header');
  if (b[4] !== VERSION) throw new ObjectIntegrityError(`stored object has unknown format version ${b[4]}`);
  if (b[5] !== Math.log2(SEGMENT_SIZE)) throw new ObjectIntegrityError('stored object has an unsupported segment size');
  return Buffer.from(b.subarray(0, HEADER_SIZE));
}

function nonceFor(header: Buffer, index: number, last: boolean): Buffer {
  const n = Buffer.alloc(12);
  header.copy(n, 0, 8, 15);
  n.writeUInt32BE(index, 7);
  n[11] = last ? 1 : 0;
  return n;
}

/** A sealed segment as its ciphertext and its tag: written back to back, never copied into one buffer. */
export function sealSegment(key: Uint8Array, header: Buffer, index: number, last: boolean, plain: Uint8Array): [Buffer, Buffer] {
  const c = createCipheriv('aes-256-gcm', key, nonceFor(header, index, last));
  c.setAAD(header);
  const body = c.update(plain);
  c.final();
  return [body, c.getAuthTag()];
}

/**
 * The plaintext of a sealed segment given as consecutive pieces (views of the stream's chunks, never
 * joined): the ciphertext is fed piece by piece, the tag taken from the last 16 bytes wherever they fall.
 * Nothing is returned unless the whole segment authenticates.
 */
export function openSegment(key: Uint8Array, header: Buffer, index: number, last: boolean, sealed: Buffer[], length: number): Buffer[] {
  const d = createDecipheriv('aes-256-gcm', key, nonceFor(header, index, last));
  d.setAAD(header);
  const out: Buffer[] = [];
  const tag: Buffer[] = [];
  let body = length - TAG_SIZE;
  try {
    for (const piece of sealed) {
      const n = Math.min(piece.length, body);
      if (n > 0) out.push(d.update(piece.subarray(0, n)));
      if (n < piece.length) tag.push(piece.subarray(n));
      body -= n;
    }
    d.setAuthTag(tag.length === 1 ? tag[0]! : Buffer.concat(tag));
    d.final();
    return out;
  } catch {
    throw new ObjectIntegrityError(`segment ${index} failed authentication: the stored object was altered, truncated or reordered`);
  }
}

/** Yields the sealed form of `body`: header, then one sealed segment per 64 KiB of plaintext. */
async function* sealStream(
  key: Uint8Array,
  header: Buffer,
  body: AsyncIterable<Uint8Array>,
  counter: { size: number },
): AsyncGenerator<Uint8Array> {
  // A copy: the driver may release what it stored, and the header seals every segment.
  yield Buffer.from(header);
  let buf: Buffer | null = null;
  let filled = 0;
  let index = 0;
  for await (const chunk of body) {
    counter.size += chunk.byteLength;
    let offset = 0;
    while (offset < chunk.byteLength) {
      // A full buffer is sealed only once more data arrives, so the final segment always carries the flag.
      if (buf && filled === SEGMENT_SIZE) {
        yield* sealSegment(key, header, index++, false, buf);
        filled = 0;
      }
      const n = Math.min(SEGMENT_SIZE - filled, chunk.byteLength - offset);
      buf = grownFor(buf, filled, n, SEGMENT_SIZE);
      buf.set(chunk.subarray(offset, offset + n), filled);
      filled += n;
      offset += n;
    }
  }
  yield* sealSegment(key, header, index, true, buf?.subarray(0, filled) ?? new Uint8Array(0));
}

/**
 * Reads a driver's stream in exact-size runs of bytes, as views of its chunks: never copied (a segment
 * spanning two chunks is two pieces). Pieces are valid until the next read, when the chunks they came
 * from are released.
 */
export class ExactReader {
  private readonly it: AsyncIterator<Uint8Array>;
  /** The chunk being read, and the part of it not yet returned. */
  private chunk: Uint8Array | null = null;
  private rest: Buffer | null = null;
  /** Chunks read to their end, released at the next read. */
  private readonly spent: Uint8Array[] = [];
  private ended = false;

  constructor(source: AsyncIterable<Uint8Array>) {
    this.it = source[Symbol.asyncIterator]();
  }

  /** Exactly `n` bytes as consecutive pieces, or fewer only when the stream ended first. */
  async pieces(n: number): Promise<Buffer[]> {
    this.release();
    const out: Buffer[] = [];
    let want = n;
    while (want > 0) {
      if (!this.rest) {
        if (this.ended) break;
        const r = await this.it.next();
        if (r.done) {
          this.ended = true;
          break;
        }
        this.chunk = r.value;
        this.rest = Buffer.from(r.value.buffer, r.value.byteOffset, r.value.byteLength);
      }
      const take = Math.min(want, this.rest.length);
      if (take > 0) out.push(this.rest.subarray(0, take));
      want -= take;
      if (take < this.rest.length) this.rest = this.rest.subarray(take);
      else {
        this.spent.push(this.chunk!);
        this.chunk = null;
        this.rest = null;
      }
    }
    return out;
  }

  /** Exactly `n` bytes in one buffer (copied only when they span chunks), or fewer when the stream ended first. */
  async read(n: number): Promise<Buffer> {
    const p = await this.pieces(n);
    return p.length === 1 ? p[0]! : Buffer.concat(p);
  }

  async atEnd(): Promise<boolean> {
    return (await this.pieces(1)).length === 0;
  }

  async close(): Promise<void> {
    this.release();
    await this.it.return?.();
  }

  private release(): void {
    for (const c of this.spent) releaseChunk(c);
    this.spent.length = 0;
  }
}

/** The sealed length of segment `i` of an object of `size` plaintext bytes (the last one is short). */
function sealedSegmentLength(size: number, i: number): number {
  return i === segmentCount(size) - 1 ? size - i * SEGMENT_SIZE + TAG_SIZE : SEALED_SEGMENT;
}

/** Where `range` falls inside segment `i` (sealed `length`): the plaintext's [from, to) to yield. */
function segmentWindow(i: number, length: number, range: ByteRange): { from: number; to: number; whole: boolean } {
  const segStart = i * SEGMENT_SIZE;
  const from = Math.max(range.start - segStart, 0);
  const to = Math.min(range.end - segStart, length - TAG_SIZE);
  return { from, to, whole: from === 0 && to === length - TAG_SIZE };
}

/** Opens segments [first, last of range] from `reader` and yields the plaintext inside `range`. */
async function* openSegments(
  dataKey: Uint8Array,
  header: Buffer,
  reader: ExactReader,
  size: number,
  first: number,
  range: ByteRange,
  requireEnd: boolean,
): AsyncGenerator<Uint8Array> {
  const count = segmentCount(size);
  const lastIndex = size === 0 ? 0 : Math.floor((range.end - 1) / SEGMENT_SIZE);
  try {
    for (let i = first; i <= lastIndex; i++) {
      const length = sealedSegmentLength(size, i);
      const sealed = await reader.pieces(length);
      if (sealed.reduce((n, p) => n + p.length, 0) < length)
        throw new ObjectIntegrityError('stored object is shorter than its recorded size');
      const plain = openSegment(dataKey, header, i, i === count - 1, sealed, length);
      const { from, to, whole } = segmentWindow(i, length, range);
      if (whole) {
        // The cipher's fresh output, held nowhere else: a response may free it once sent (releaseHandedOver).
        for (const p of plain) if (p.length) yield handOver(p);
      } else {
        const part = (plain.length === 1 ? plain[0]! : Buffer.concat(plain)).subarray(from, to);
        if (part.length) yield part;
      }
    }
    if (requireEnd && !(await reader.atEnd())) throw new ObjectIntegrityError('stored object is longer than its recorded size');
  } finally {
    await reader.close();
  }
}

/** Exactly `length` bytes at `position` into the start of `into`; fewer is an object shorter than its record says. */
async function readAt(object: ObjectReader, into: Buffer, length: number, position: number): Promise<Buffer> {
  let got = 0;
  for (let n = -1; got < length && n !== 0; got += n) n = await object.read(into.subarray(got), length - got, position + got);
  if (got < length) throw new ObjectIntegrityError('stored object is shorter than its recorded size');
  return into.subarray(0, length);
}

/**
 * openSegments over positional reads: runs of whole sealed segments read into two buffers reused in turn
 * (the next run read while this one is opened), each segment opened from one contiguous view.
 */
async function* openSegmentsAt(
  dataKey: Uint8Array,
  object: ObjectReader,
  size: number,
  first: number,
  range: ByteRange,
  requireEnd: boolean,
): AsyncGenerator<Uint8Array> {
  const count = segmentCount(size);
  const lastIndex = size === 0 ? 0 : Math.floor((range.end - 1) / SEGMENT_SIZE);
  const perRead = Math.min(SEGMENTS_PER_READ, lastIndex - first + 1);
  const sealedLength = (i: number) => sealedSegmentLength(size, i);
  // A small object's one run is as long as the object, not a whole run's length.
  const runBytes = Math.min(perRead * SEALED_SEGMENT, (lastIndex - first) * SEALED_SEGMENT + sealedLength(lastIndex));
  const buffers = [Buffer.allocUnsafe(runBytes)];
  if (lastIndex - first + 1 > perRead) buffers.push(Buffer.allocUnsafe(runBytes));
  let turn = 0;
  const readRun = (from: number) => {
    const to = Math.min(from + perRead, lastIndex + 1) - 1;
    const run = readAt(
      object,
      buffers[turn++ % buffers.length]!,
      (to - from) * SEALED_SEGMENT + sealedLength(to),
      HEADER_SIZE + from * SEALED_SEGMENT,
    );
    // Awaited later; a failure meanwhile is not an unhandled rejection.
    run.catch(() => {});
    return run;
  };
  let next: Promise<Buffer> | null = null;
  try {
    if (object.size < HEADER_SIZE) throw new ObjectIntegrityError('stored object is shorter than its header');
    if (requireEnd && object.size > sealedSize(size)) throw new ObjectIntegrityError('stored object is longer than its recorded size');
    const header = parseHeader(await readAt(object, Buffer.allocUnsafe(HEADER_SIZE), HEADER_SIZE, 0));
    next = readRun(first);
    for (let from = first; from <= lastIndex; from += perRead) {
      const sealed = await next!;
      next = from + perRead <= lastIndex ? readRun(from + perRead) : null;
      for (let i = from, at = 0; i <= Math.min(from + perRead - 1, lastIndex); i++) {
        const length = sealedLength(i);
        const plain = openSegment(dataKey, header, i, i === count - 1, [sealed.subarray(at, at + length)], length)[0];
        at += length;
        const { from: cut, to, whole } = segmentWindow(i, length, range);
        if (!plain?.length) continue;
        // The cipher's fresh output, held nowhere else: a response may free it once sent (releaseHandedOver).
        if (whole) yield handOver(plain);
        else if (to > cut) yield plain.subarray(cut, to);
      }
    }
  } finally {
    await next?.catch(() => {});
    for (const b of buffers) releaseChunk(b);
    await object.close();
  }
}

/**
 * Turns an async generator into a pull-driven ReadableStream, after producing its first chunk eagerly;
 * `onBreak` hears of a failure after that, when a response carrying the stream is already under way.
 */
async function toStream(gen: AsyncGenerator<Uint8Array>, onBreak?: (err: unknown) => void): Promise<ReadableStream<Uint8Array>> {
  // Pull the first chunk now so a damaged start is an error before any response header is sent.
  const first = await gen.next();
  let primed: IteratorResult<Uint8Array> | null = first;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        let next = primed;
        primed = null;
        try {
          next ??= await gen.next();
        } catch (err) {
          onBreak?.(err);
          throw err;
        }
        if (next.done) controller.close();
        else controller.enqueue(next.value);
      },
      async cancel() {
        await gen.return(undefined);
      },
    },
    { highWaterMark: 0 },
  );
}

/** Encrypting store over a driver; the caller keeps the SealedInfo with the object's key. */
export class SealedStore {
  constructor(
    readonly driver: StorageDriver,
    readonly keyring: Keyring,
  ) {}

  /** Each chunk of `body` is copied before the next is asked for, so a body may reuse or free it then. */
  async put(key: string, body: AsyncIterable<Uint8Array>, opts?: PutOptions): Promise<SealedInfo> {
    const dataKey = randomBytes(32);
    const header = makeHeader(randomBytes(7));
    const counter = { size: 0 };
    // Sealed segments are fresh buffers nothing else holds: freed as soon as stored, not at the next collection.
    await this.driver.put(key, sealStream(dataKey, header, body, counter), { ...opts, release: true });
    const wrappedKey = this.keyring.wrap(dataKey);
    return { size: counter.size, wrappedKey, keyId: wrappedKeyId(wrappedKey) };
  }

  /**
   * An object sealed under another object's data key (a file's thumbnails): it needs no key of its own,
   * and rotating the master key rewraps it with the file's. Returns the plaintext size.
   */
  async putUnder(key: string, wrappedKey: string, body: AsyncIterable<Uint8Array>): Promise<number> {
    const dataKey = this.unwrapKey(wrappedKey);
    const counter = { size: 0 };
    await this.driver.put(key, sealStream(dataKey, makeHeader(randomBytes(7)), body, counter), { release: true });
    return counter.size;
  }

  /**
   * Plaintext of the object, or of `range` of it ([start, end), validated against `info.size`).
   * Only the segments the range touches are read and decrypted. A failure before the first chunk
   * rejects; one after it errors the stream and is told to `onBreak`.
   */
  async get(
    key: string,
    info: Pick<SealedInfo, 'size' | 'wrappedKey'>,
    range?: ByteRange,
    onBreak?: (err: unknown) => void,
  ): Promise<ReadableStream<Uint8Array>> {
    const { size } = info;
    if (range && (range.start < 0 || range.end > size || range.start > range.end)) throw new RangeNotSatisfiableError(size);
    const dataKey = this.unwrapKey(info.wrappedKey);
    const want = range ?? { start: 0, end: size };
    if (range && range.start === range.end) return new Blob([]).stream();

    const first = size === 0 ? 0 : Math.floor(want.start / SEGMENT_SIZE);
    if (this.driver.openReader)
      return toStream(openSegmentsAt(dataKey, await this.driver.openReader(key), size, first, want, !range), onBreak);
    const lastIndex = size === 0 ? 0 : Math.floor((want.end - 1) / SEGMENT_SIZE);
    const sealedEnd = Math.min(HEADER_SIZE + (lastIndex + 1) * SEALED_SEGMENT, sealedSize(size));

    let header: Buffer;
    let reader: ExactReader;
    if (first === 0) {
      // One read from offset 0 carries the header; a whole-object read must also end where the size says.
      reader = new ExactReader(await this.getSealed(key, range ? { start: 0, end: sealedEnd } : undefined));
      const h = await reader.read(HEADER_SIZE);
      if (h.length < HEADER_SIZE) throw new ObjectIntegrityError('stored object is shorter than its header');
      header = parseHeader(h);
    } else {
      const sealedStart = HEADER_SIZE + first * SEALED_SEGMENT;
      const [h, body] = await Promise.all([
        this.readExactly(key, { start: 0, end: HEADER_SIZE }),
        this.getSealed(key, { start: sealedStart, end: sealedEnd }),
      ]);
      header = parseHeader(h);
      reader = new ExactReader(body);
    }
    return toStream(openSegments(dataKey, header, reader, size, first, want, !range), onBreak);
  }

  /** Plaintext of the object or of `range` of it, in memory: for small reads (a file's first bytes, a container's headers). */
  async readBytes(key: string, info: Pick<SealedInfo, 'size' | 'wrappedKey'>, range?: ByteRange): Promise<Uint8Array> {
    return new Uint8Array(await new Response(await this.get(key, info, range)).arrayBuffer());
  }

  async delete(key: string): Promise<boolean> {
    return this.driver.delete(key);
  }

  /** A byte-identical copy under a new key; the copy is opened with the same wrapped data key. */
  async copy(fromKey: string, toKey: string): Promise<void> {
    await this.driver.copy(fromKey, toKey);
  }

  /** An object's data key; a key that cannot be unwrapped is the object's integrity failure. */
  unwrapKey(wrappedKey: string): Uint8Array {
    try {
      return this.keyring.unwrap(wrappedKey);
    } catch (err) {
      if (err instanceof KeyIntegrityError) throw new ObjectIntegrityError(err.message);
      throw err;
    }
  }

  // The range comes from the recorded size: a driver that cannot serve it holds a truncated object.
  private async getSealed(key: string, range?: ByteRange): Promise<ReadableStream<Uint8Array>> {
    try {
      return await this.driver.get(key, range);
    } catch (err) {
      if (err instanceof RangeNotSatisfiableError) throw new ObjectIntegrityError('stored object is shorter than its recorded size');
      throw err;
    }
  }

  private async readExactly(key: string, range: ByteRange): Promise<Buffer> {
    const bytes = Buffer.from(await new Response(await this.getSealed(key, range)).arrayBuffer());
    if (bytes.length !== range.end - range.start) throw new ObjectIntegrityError('stored object is shorter than its header');
    return bytes;
  }
}
