import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { releaseChunk } from '../lib/buffers.ts';
import { ObjectIntegrityError, RangeNotSatisfiableError, type ByteRange, type PutOptions, type StorageDriver } from './driver.ts';
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

function openSegment(key: Uint8Array, header: Buffer, index: number, last: boolean, sealed: Buffer): Buffer {
  const d = createDecipheriv('aes-256-gcm', key, nonceFor(header, index, last));
  d.setAAD(header);
  d.setAuthTag(sealed.subarray(sealed.length - TAG_SIZE));
  try {
    const out = d.update(sealed.subarray(0, sealed.length - TAG_SIZE));
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
  yield header;
  const buf = Buffer.allocUnsafe(SEGMENT_SIZE);
  let filled = 0;
  let index = 0;
  for await (const chunk of body) {
    counter.size += chunk.byteLength;
    let offset = 0;
    while (offset < chunk.byteLength) {
      // A full buffer is sealed only once more data arrives, so the final segment always carries the flag.
      if (filled === SEGMENT_SIZE) {
        yield* sealSegment(key, header, index++, false, buf);
        filled = 0;
      }
      const n = Math.min(SEGMENT_SIZE - filled, chunk.byteLength - offset);
      buf.set(chunk.subarray(offset, offset + n), filled);
      filled += n;
      offset += n;
    }
  }
  yield* sealSegment(key, header, index, true, buf.subarray(0, filled));
}

/**
 * Reads a driver's stream in exact-size pieces: views of its chunks, copied only where a piece spans two.
 * A piece is valid until the next read; a chunk is released as soon as no piece can point into it.
 */
export class ExactReader {
  private readonly it: AsyncIterator<Uint8Array>;
  /** The chunk being read, and the part of it not yet returned. */
  private chunk: Uint8Array | null = null;
  private rest: Buffer | null = null;
  private ended = false;

  constructor(source: AsyncIterable<Uint8Array>) {
    this.it = source[Symbol.asyncIterator]();
  }

  /** Exactly `n` bytes, or fewer only when the stream ended first. */
  async read(n: number): Promise<Buffer> {
    // The last piece may have ended the chunk; its caller is done with it now.
    if (!this.rest) this.drop();
    const rest = this.rest;
    if (rest && rest.length >= n) {
      this.rest = rest.length > n ? rest.subarray(n) : null;
      return rest.subarray(0, n);
    }
    let out: Buffer | null = null;
    let filled = 0;
    let first = rest;
    this.rest = null;
    for (;;) {
      if (first === null) {
        if (this.ended) break;
        const r = await this.it.next();
        if (r.done) {
          this.ended = true;
          break;
        }
        this.chunk = r.value;
        first = Buffer.from(r.value.buffer, r.value.byteOffset, r.value.byteLength);
        if (filled === 0 && first.length >= n) {
          if (first.length > n) this.rest = first.subarray(n);
          return first.subarray(0, n);
        }
      }
      out ??= Buffer.allocUnsafe(n);
      const take = Math.min(n - filled, first.length);
      first.copy(out, filled, 0, take);
      filled += take;
      if (take < first.length) this.rest = first.subarray(take);
      else this.drop();
      first = null;
      if (filled === n) return out;
    }
    return out ? out.subarray(0, filled) : Buffer.alloc(0);
  }

  async atEnd(): Promise<boolean> {
    return (await this.read(1)).length === 0;
  }

  async close(): Promise<void> {
    await this.it.return?.();
  }

  private drop(): void {
    if (this.chunk) releaseChunk(this.chunk);
    this.chunk = null;
  }
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
      const length = i === count - 1 ? size - i * SEGMENT_SIZE + TAG_SIZE : SEALED_SEGMENT;
      const sealed = await reader.read(length);
      if (sealed.length < length) throw new ObjectIntegrityError('stored object is shorter than its recorded size');
      const plain = openSegment(dataKey, header, i, i === count - 1, sealed);
      const segStart = i * SEGMENT_SIZE;
      const part = plain.subarray(Math.max(range.start - segStart, 0), Math.min(range.end - segStart, plain.length));
      if (part.length) yield part;
    }
    if (requireEnd && !(await reader.atEnd())) throw new ObjectIntegrityError('stored object is longer than its recorded size');
  } finally {
    await reader.close();
  }
}

/** Turns an async generator into a pull-driven ReadableStream, after producing its first chunk eagerly. */
async function toStream(gen: AsyncGenerator<Uint8Array>): Promise<ReadableStream<Uint8Array>> {
  // Pull the first chunk now so a damaged start is an error before any response header is sent.
  const first = await gen.next();
  let primed: IteratorResult<Uint8Array> | null = first;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const next = primed ?? (await gen.next());
        primed = null;
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
    await this.driver.put(key, sealStream(dataKey, header, body, counter), opts);
    const wrappedKey = this.keyring.wrap(dataKey);
    return { size: counter.size, wrappedKey, keyId: wrappedKeyId(wrappedKey) };
  }

  /**
   * Plaintext of the object, or of `range` of it ([start, end), validated against `info.size`).
   * Only the segments the range touches are read and decrypted.
   */
  async get(key: string, info: Pick<SealedInfo, 'size' | 'wrappedKey'>, range?: ByteRange): Promise<ReadableStream<Uint8Array>> {
    const { size } = info;
    if (range && (range.start < 0 || range.end > size || range.start > range.end)) throw new RangeNotSatisfiableError(size);
    const dataKey = this.unwrapKey(info.wrappedKey);
    const want = range ?? { start: 0, end: size };
    if (range && range.start === range.end) return new Blob([]).stream();

    const first = size === 0 ? 0 : Math.floor(want.start / SEGMENT_SIZE);
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
    return toStream(openSegments(dataKey, header, reader, size, first, want, !range));
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
