import fs from 'node:fs';
import { AppError } from '../../errors.ts';
import { createCipheriv, createDecipheriv, randomBytes, scrypt } from 'node:crypto';

/**
 * A replica's objects, all flat names in one directory or bucket prefix:
 *   <gen>_descriptor              the generation's key-derivation salt (JSON, not secret)
 *   <gen>_snapshot                the database file when the generation began
 *   <gen>_secrets                 secrets.json (the master key, itself wrapped by the passphrase here)
 *   <gen>_wal_<index>_<unix ms>   committed log frames, numbered from 1, each shipped at that time
 *   coffer-replica-fence          which generation may ship here (plain JSON)
 * Every object but the descriptor and the fence is sealed: header (16 bytes: `CFREPL01`, a 7-byte random
 * nonce prefix, a zero) then records, each up to 1 MiB of plaintext compressed with zstd and sealed with
 * AES-256-GCM under the key scrypt derives from the passphrase and the generation's salt, preceded by its
 * sealed length (u32 BE); nonce = prefix ‖ record index ‖ last flag, associated data = the header and the
 * object's name, so a changed byte, a cut, or an object renamed into another's place fails.
 * Plaintext: a u32 length and a JSON description, then the payload (the database file, secrets.json, or
 * frames of a u32 page number and one page each).
 */
const MAGIC = Buffer.from('CFREPL01');
const HEADER = 16;
const TAG = 16;
const RECORD = 1024 * 1024;
const KDF = { logN: 15, r: 8, p: 1 };
// node:zlib is loaded at the first record sealed or opened: a server that does not replicate never holds it.
const zlib = () => process.getBuiltinModule('node:zlib');

export const FENCE_NAME = 'coffer-replica-fence';

/** The fence: the one generation that may ship to a destination, and since when. */
export interface Fence {
  generation: string;
  since: string;
}
const OBJECT = /^(g\d{8}T\d{9}Z-[0-9a-f]{8})_(descriptor|snapshot|secrets|wal_(\d{10})_(\d{13}))$/;

export type ReplicaObject =
  | { generation: string; kind: 'descriptor' | 'snapshot' | 'secrets' }
  | { generation: string; kind: 'wal'; index: number; at: number };

export function newGenerationId(now: number): string {
  const stamp = new Date(now).toISOString().replace(/[-:.]/g, '');
  return `g${stamp}-${randomBytes(4).toString('hex')}`;
}

/** Milliseconds since the epoch a generation's id names. */
export function generationTime(generation: string): number {
  const s = generation.slice(1, 19);
  return Date.UTC(
    +s.slice(0, 4),
    +s.slice(4, 6) - 1,
    +s.slice(6, 8),
    +s.slice(9, 11),
    +s.slice(11, 13),
    +s.slice(13, 15),
    +s.slice(15, 18),
  );
}

export const objectName = {
  descriptor: (g: string) => `${g}_descriptor`,
  snapshot: (g: string) => `${g}_snapshot`,
  secrets: (g: string) => `${g}_secrets`,
  wal: (g: string, index: number, at: number) => `${g}_wal_${String(index).padStart(10, '0')}_${String(at).padStart(13, '0')}`,
};

export function parseObjectName(name: string): ReplicaObject | null {
  const m = OBJECT.exec(name);
  if (!m) return null;
  if (m[3] !== undefined) return { generation: m[1]!, kind: 'wal', index: Number(m[3]), at: Number(m[4]) };
  return { generation: m[1]!, kind: m[2] as 'descriptor' | 'snapshot' | 'secrets' };
}

export interface GenerationDescriptor {
  format: 'coffer-replica';
  formatVersion: 1;
  generation: string;
  salt: string;
  kdf: { logN: number; r: number; p: number };
}

/** A replica object failed its check: named, so the operator knows which one. */
export class ReplicaDamagedError extends AppError {
  constructor(
    readonly object: string,
    readonly reason: string,
  ) {
    super(422, `the replica is not usable: ${object} ${reason}`);
  }
}

export function newDescriptor(generation: string): GenerationDescriptor {
  return { format: 'coffer-replica', formatVersion: 1, generation, salt: randomBytes(16).toString('base64'), kdf: KDF };
}

export function generationKey(passphrase: string, d: GenerationDescriptor): Promise<Buffer> {
  const { logN, r, p } = d.kdf;
  if (d.format !== 'coffer-replica' || d.formatVersion !== 1 || logN < 10 || logN > 22 || r < 1 || r > 32 || p < 1 || p > 16) {
    throw new ReplicaDamagedError(objectName.descriptor(d.generation), 'not a generation descriptor this Coffer writes');
  }
  const N = 2 ** logN;
  return new Promise((resolve, reject) =>
    scrypt(passphrase, Buffer.from(d.salt, 'base64'), 32, { N, r, p, maxmem: 256 * N * r + 1024 * 1024 }, (err, key) =>
      err ? reject(err) : resolve(key),
    ),
  );
}

function nonce(header: Buffer, index: number, last: boolean): Buffer {
  const n = Buffer.alloc(12);
  header.copy(n, 0, 8, 15);
  n.writeUInt32BE(index, 7);
  n[11] = last ? 1 : 0;
  return n;
}

/** Writes one sealed object to a file descriptor as it is given, in 1 MiB records (synchronous: it runs between commits). */
export class SealedObjectWriter {
  private readonly header = Buffer.alloc(HEADER);
  private readonly aad: Buffer;
  private readonly buffer = Buffer.allocUnsafe(RECORD);
  private used = 0;
  private index = 0;
  /** Sealed bytes written. */
  bytes = 0;

  constructor(
    private readonly key: Buffer,
    name: string,
    private readonly fd: number,
    description: object,
  ) {
    MAGIC.copy(this.header, 0);
    randomBytes(7).copy(this.header, 8);
    this.aad = Buffer.concat([this.header, Buffer.from(name)]);
    this.out(this.header);
    const json = Buffer.from(JSON.stringify(description));
    const len = Buffer.alloc(4);
    len.writeUInt32BE(json.length);
    this.write(len);
    this.write(json);
  }

  private out(data: Buffer): void {
    let done = 0;
    while (done < data.length) done += fs.writeSync(this.fd, data, done, data.length - done);
    this.bytes += data.length;
  }

  private seal(last: boolean): void {
    const packed = zlib().zstdCompressSync(this.buffer.subarray(0, this.used), {
      params: { [zlib().constants.ZSTD_c_compressionLevel]: 1 },
    });
    const c = createCipheriv('aes-256-gcm', this.key, nonce(this.header, this.index++, last));
    c.setAAD(this.aad);
    const body = c.update(packed);
    c.final();
    const length = Buffer.alloc(4);
    length.writeUInt32BE(body.length + TAG);
    this.out(length);
    this.out(body);
    this.out(c.getAuthTag());
    this.used = 0;
  }

  write(data: Uint8Array): void {
    let offset = 0;
    while (offset < data.length) {
      // A full record is sealed only once more follows, so the last one always carries the flag.
      if (this.used === RECORD) this.seal(false);
      const n = Math.min(RECORD - this.used, data.length - offset);
      this.buffer.set(data.subarray(offset, offset + n), this.used);
      this.used += n;
      offset += n;
    }
  }

  finish(): void {
    this.seal(true);
  }
}

/** The plaintext of a sealed object, record by record; ReplicaDamagedError names it when anything fails. */
async function* openRecords(key: Buffer, name: string, source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>): AsyncGenerator<Buffer> {
  const input = new ByteReader(
    (async function* () {
      for await (const chunk of source) yield Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    })(),
  );
  const header = await input.read(HEADER);
  if (!header) throw new ReplicaDamagedError(name, 'was cut short');
  if (!header.subarray(0, 8).equals(MAGIC)) throw new ReplicaDamagedError(name, 'is not a sealed replica object');
  const aad = Buffer.concat([header, Buffer.from(name)]);
  const nonceHeader = Buffer.from(header);
  let length = await input.read(4);
  if (!length) throw new ReplicaDamagedError(name, 'was cut short');
  for (let index = 0; length; index++) {
    const size = length.readUInt32BE(0);
    if (size < TAG || size > RECORD + 64 * 1024) throw new ReplicaDamagedError(name, `fails its check at record ${index}: it was altered`);
    const sealed = await input.read(size);
    if (!sealed) throw new ReplicaDamagedError(name, 'was cut short');
    length = await input.read(4);
    const d = createDecipheriv('aes-256-gcm', key, nonce(nonceHeader, index, length === null));
    d.setAAD(aad);
    d.setAuthTag(sealed.subarray(size - TAG));
    let packed: Buffer;
    try {
      packed = Buffer.concat([d.update(sealed.subarray(0, size - TAG)), d.final()]);
    } catch {
      throw new ReplicaDamagedError(
        name,
        index === 0
          ? 'fails its check: the passphrase is wrong, or it was altered, cut short or put in another object’s place'
          : `fails its check at record ${index}: it was altered or cut short`,
      );
    }
    yield zlib().zstdDecompressSync(packed, { maxOutputLength: RECORD });
  }
}

/** Exact-length reads over a stream of buffers. */
class ByteReader {
  private pending: Buffer = Buffer.alloc(0);
  constructor(private readonly source: AsyncIterator<Buffer>) {}

  async read(n: number): Promise<Buffer | null> {
    if (this.pending.length < n) {
      // Gathered, then joined once: a record arrives in many chunks.
      const parts = [this.pending];
      let have = this.pending.length;
      while (have < n) {
        const next = await this.source.next();
        if (next.done) {
          this.pending = Buffer.concat(parts);
          return null;
        }
        parts.push(next.value);
        have += next.value.length;
      }
      this.pending = Buffer.concat(parts);
    }
    const out = this.pending.subarray(0, n);
    this.pending = this.pending.subarray(n);
    return out;
  }

  async *rest(): AsyncGenerator<Buffer> {
    if (this.pending.length) yield this.pending;
    this.pending = Buffer.alloc(0);
    for (let next = await this.source.next(); !next.done; next = await this.source.next()) yield next.value;
  }
}

/** A sealed object's description and the rest of its plaintext (read once). */
export async function openObject<D>(
  key: Buffer,
  name: string,
  source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
): Promise<{ description: D; reader: ByteReader }> {
  const reader = new ByteReader(openRecords(key, name, source));
  const len = await reader.read(4);
  const json = len && (await reader.read(len.readUInt32BE(0)));
  if (!json) throw new ReplicaDamagedError(name, 'was cut short');
  let description: D;
  try {
    description = JSON.parse(json.toString('utf8')) as D;
  } catch {
    throw new ReplicaDamagedError(name, 'holds a description that is not JSON');
  }
  return { description, reader };
}

export type { ByteReader };

export interface SnapshotDescription {
  kind: 'snapshot';
  generation: string;
  at: number;
  bytes: number;
  pageSize: number;
}

export interface SegmentDescription {
  kind: 'wal';
  generation: string;
  index: number;
  at: number;
  frames: number;
  pageSize: number;
  /** The database's size in pages after the segment's last transaction. */
  dbPages: number;
}

export interface SecretsDescription {
  kind: 'secrets';
  generation: string;
  bytes: number;
}
