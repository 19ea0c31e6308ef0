import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import { noBytes } from '../lib/buffers.ts';
import { ObjectIntegrityError, type StagingArea } from './driver.ts';
import { wrappedKeyId } from './keyring.ts';
import {
  ExactReader,
  HEADER_SIZE,
  makeHeader,
  openSegment,
  SEALED_SEGMENT,
  SEGMENT_SIZE,
  type SealedStore,
  sealedSize,
  sealSegment,
  segmentCount,
} from './sealed.ts';

/** A sealed object being written across requests: what the caller keeps (the database) between appends. */
export interface ResumableObject {
  key: string;
  /** Plaintext bytes the finished object will hold. */
  length: number;
  /** Plaintext bytes received (and acknowledged) so far. */
  offset: number;
  /** Of those, the bytes known to be durable (synced to the disk). */
  durableOffset: number;
  wrappedKey: string;
  /** The object's 16-byte header, fixed when it was begun. */
  header: Uint8Array;
  /** The bytes of the segment not yet full, sealed under the tail key; null when the offset is at a segment boundary. */
  tail: Uint8Array | null;
}

export interface AppendProgress {
  offset: number;
  tail: Buffer | null;
  durableOffset: number;
}

/** A staged object's sync left running behind an answer: how far it makes the object durable, once done without error. */
interface SyncBehind {
  upTo: number;
  settled: boolean;
  done: Promise<void>;
  error: unknown;
}

/** Bytes sent for an offset differ from bytes sealed there before an interruption: sealing them would reuse a nonce. */
export class ResealMismatchError extends Error {}

const TAG_SIZE = 16;
const NONCE_SIZE = 12;
const TAIL_INFO = Buffer.from('coffer-resumable-tail-v1');
// Plaintext per recorded step of a long append (the caller records the offset; the disk is synced behind it).
const CHECKPOINT_BYTES = 64 * 1024 * 1024;
// Sealed pieces handed to the staging area at once at most: 16 segments, the staging area's 1 MiB write.
const BATCH_PIECES = 32;

/** Starts syncing a staged object; outside `append`, so a sync still running holds none of an append's state (its body). */
function startSync(staging: StagingArea, key: string, upTo: number): SyncBehind {
  const b: SyncBehind = { upTo, settled: false, error: null, done: Promise.resolve() };
  b.done = staging.sync(key).then(
    () => {
      b.settled = true;
    },
    (err: unknown) => {
      b.settled = true;
      b.error = err;
    },
  );
  return b;
}

/** Where segment `index` starts in the stored object (segment 0 comes after the header, written with it). */
function sealedOffsetOf(index: number): number {
  return index === 0 ? 0 : HEADER_SIZE + index * SEALED_SEGMENT;
}

/**
 * Sealed objects written in appends that may stop anywhere and resume after a restart (tus uploads),
 * in exactly the format of SealedStore.put, so the finished object is read like any other.
 *
 * The data key and header are fixed when the object is begun. Each 64 KiB segment is sealed with its
 * final nonce (its index and, since the length is known up front, whether it is the last) the moment it
 * is full, and written to the driver's staging area; the object is published once whole. The bytes of a
 * segment that is not yet full when an append ends are sealed under a tail key derived from the data
 * key, with a random nonce, bound to the object's key and segment index, and kept by the caller, so
 * no plaintext is stored at any moment. A segment's nonce never seals two different plaintexts: an
 * append that resumes over bytes an interrupted one staged but never acknowledged must send the same
 * bytes (identical ciphertext), or it is refused.
 */
export class ResumableStore {
  /** Per staged object, the sync an append left running behind its answer. */
  private readonly behind = new Map<string, SyncBehind>();
  /** Per staged object, its size after this process's last write to it (a write cuts off what follows it). */
  private readonly sizes = new Map<string, number>();

  constructor(private readonly sealed: SealedStore) {}

  /** A new object's data key (wrapped) and header; nothing is stored until the first append. */
  begin(): { wrappedKey: string; keyId: string; header: Buffer } {
    const wrappedKey = this.sealed.keyring.wrap(randomBytes(32));
    return { wrappedKey, keyId: wrappedKeyId(wrappedKey), header: makeHeader(randomBytes(7)) };
  }

  /**
   * Seals `body` onto the object from its offset. Every `checkpointBytes` of plaintext (at a segment
   * boundary) `onCheckpoint` records the progress. A body that fails (a client that hung up) ends the
   * append where it failed: what arrived before is kept, and the failure is returned as `interrupted`.
   * The result is written when it resolves (it survives the process). At each checkpoint, and at the end
   * once `syncLagBytes` are not yet durable, a sync starts behind the answer unless one is running still
   * (one at a time per object, across appends); only the completing append waits for the disk, and is
   * durable when it resolves. `durableOffset` says how far the syncs known to have finished reach; a sync
   * that failed fails the append that finds it so. Waiting for the disk at every step cost a resumable
   * upload a quarter of its throughput (issue 17).
   */
  async append(
    obj: ResumableObject,
    body: AsyncIterable<Uint8Array>,
    opts: { checkpointBytes?: number; syncLagBytes?: number; onCheckpoint?: (p: AppendProgress) => void } = {},
  ): Promise<AppendProgress & { complete: boolean; interrupted: unknown }> {
    const staging = this.sealed.driver.staging;
    const dataKey = this.sealed.unwrapKey(obj.wrappedKey);
    const header = Buffer.from(obj.header);
    const lastIndex = segmentCount(obj.length) - 1;
    const segmentLength = (i: number) => (i < lastIndex ? SEGMENT_SIZE : obj.length - lastIndex * SEGMENT_SIZE);
    const roundSegments = Math.max(1, Math.floor((opts.checkpointBytes ?? CHECKPOINT_BYTES) / SEGMENT_SIZE));

    let index = Math.floor(obj.offset / SEGMENT_SIZE);
    const buf = Buffer.allocUnsafe(SEGMENT_SIZE);
    let filled = obj.offset - index * SEGMENT_SIZE;
    if (filled > 0) {
      if (!obj.tail) throw new ObjectIntegrityError(`resumable object ${obj.key} lost the bytes of its partial segment`);
      openTail(dataKey, obj.key, index, obj.tail).copy(buf);
    }
    // Earlier appends become durable behind the answers, one sync at a time, as a single upload's are: an append
    // never waits for one (waiting before answering held every eighth 8 MiB PATCH for the disk, a fifth of a
    // tus upload's MiB/s; waiting for the one before when the next was due, every sixteenth).
    const lag = opts.syncLagBytes ?? CHECKPOINT_BYTES;
    let durableOffset = obj.durableOffset;
    let behind: SyncBehind | null = this.behind.get(obj.key) ?? null;
    this.behind.delete(obj.key);
    /** Takes in a finished sync's reach, or throws its failure. */
    const settle = () => {
      const b = behind;
      if (!b?.settled) return;
      behind = null;
      if (b.error) throw b.error;
      durableOffset = Math.max(durableOffset, b.upTo);
    };
    /** Starts a sync up to `upTo` unless one is running or fewer than `min` bytes would become durable. */
    const syncBehind = (upTo: number, min: number) => {
      settle();
      if (behind || upTo - durableOffset < min) return;
      behind = startSync(staging, obj.key, upTo);
    };
    const it = body[Symbol.asyncIterator]();
    let pending: Uint8Array | null = null;
    let interrupted: unknown = null;
    let ended = false;
    let complete = index > lastIndex;

    try {
      for (;;) {
        const at = sealedOffsetOf(index);
        // Known when this process wrote it last, then asked of the disk neither here nor in the write (a turn through the I/O threads each).
        const known = this.sizes.get(obj.key);
        const staged = known ?? (await staging.size(obj.key));
        this.sizes.delete(obj.key);
        if (staged < at) throw new ObjectIntegrityError(`staged object ${obj.key} holds ${staged} of its ${at} acknowledged bytes`);
        const guard =
          staged > at ? new OverwriteGuard(new ExactReader(await staging.read(obj.key, { start: at, end: staged })), staged - at) : null;
        let sealedThisRound = 0;
        // Sealed segments go to the staging area a batch at a time, each handed over before waiting for more of
        // the body: a turn per piece split each segment's tag from its bytes, and each PATCH ended on a lone tag's write.
        const round = async function* (): AsyncGenerator<Uint8Array[]> {
          let batch: Uint8Array[] = [];
          if (at === 0) {
            await guard?.check(header);
            // A copy: the staging area releases what it wrote, and the header seals every segment.
            batch.push(Buffer.from(header));
          }
          for (;;) {
            if (filled === segmentLength(index)) {
              const last = index === lastIndex;
              for (const piece of sealSegment(dataKey, header, index, last, buf.subarray(0, filled))) {
                if (guard) await guard.check(piece);
                batch.push(piece);
              }
              index++;
              filled = 0;
              const roundEnds = last || ++sealedThisRound === roundSegments;
              if (roundEnds || batch.length >= BATCH_PIECES) {
                yield batch;
                batch = [];
              }
              if (last) complete = true;
              if (roundEnds) return;
            }
            if (!pending || pending.byteLength === 0) {
              if (batch.length > 0) {
                yield batch;
                batch = [];
              }
              let next: IteratorResult<Uint8Array>;
              try {
                next = await it.next();
              } catch (err) {
                interrupted = err;
                return;
              }
              if (next.done) {
                ended = true;
                return;
              }
              pending = next.value;
              continue;
            }
            const n = Math.min(segmentLength(index) - filled, pending.byteLength);
            buf.set(pending.subarray(0, n), filled);
            filled += n;
            pending = pending.subarray(n);
          }
        };
        try {
          this.sizes.set(obj.key, await staging.write(obj.key, at, round(), { staged: known }));
        } finally {
          await guard?.close();
        }
        const offset = Math.min(index * SEGMENT_SIZE + filled, obj.length);
        if (complete) {
          // The completing step is durable before anyone hears of it: the object is published from it.
          await behind?.done;
          settle();
          await staging.sync(obj.key);
          return { offset, tail: null, complete, interrupted, durableOffset: offset };
        }
        if (ended || interrupted) {
          const tail = filled > 0 ? sealTail(dataKey, obj.key, index, buf.subarray(0, filled)) : null;
          syncBehind(offset, lag);
          return { offset, tail, complete, interrupted, durableOffset };
        }
        settle();
        opts.onCheckpoint?.({ offset, tail: null, durableOffset });
        syncBehind(offset, 1);
      }
    } finally {
      // Whatever ended the append, a sync still running is the next append's (a failure of it fails that one).
      if (behind) this.behind.set(obj.key, behind);
    }
  }

  /**
   * After a restart, where an object's appends really stand: the segments between the durable offset and
   * the acknowledged one were written, but a power loss may have kept them from the disk. They are
   * authenticated (a kill -9 loses none: they are in the page cache); from the first that fails or is
   * missing on, the staged bytes are cut off and the upload stands there, with nothing beyond it trusted.
   * `pastOffset`: the caller records an offset at a segment boundary only now and then, so the segments
   * staged past it are authenticated too, up to the last one (which only a completing append writes), and
   * the object stands after the last that authenticates when that is further. The result is durable.
   */
  async recover(obj: ResumableObject, opts: { pastOffset?: boolean } = {}): Promise<Pick<ResumableObject, 'offset' | 'tail'>> {
    if (!opts.pastOffset && obj.durableOffset >= obj.offset) return { offset: obj.offset, tail: obj.tail };
    this.sizes.delete(obj.key);
    const staging = this.sealed.driver.staging;
    const dataKey = this.sealed.unwrapKey(obj.wrappedKey);
    const header = Buffer.from(obj.header);
    const first = Math.floor(obj.durableOffset / SEGMENT_SIZE);
    const end = Math.floor(obj.offset / SEGMENT_SIZE);
    const limit = opts.pastOffset ? segmentCount(obj.length) - 1 : end;
    const staged = await staging.size(obj.key);
    if (staged < sealedOffsetOf(first)) {
      throw new ObjectIntegrityError(`staged object ${obj.key} holds ${staged} of its ${sealedOffsetOf(first)} durable bytes`);
    }
    let good = first;
    if (limit > first && staged > sealedOffsetOf(first)) {
      const reader = new ExactReader(await staging.read(obj.key, { start: sealedOffsetOf(first), end: staged }));
      try {
        if (first === 0 && !(await reader.read(HEADER_SIZE)).equals(header)) good = -1;
        for (; good >= 0 && good < limit; good++) {
          const pieces = await reader.pieces(SEALED_SEGMENT);
          if (pieces.reduce((n, p) => n + p.length, 0) < SEALED_SEGMENT) break;
          try {
            openSegment(dataKey, header, good, false, pieces, SEALED_SEGMENT);
          } catch {
            break;
          }
        }
      } finally {
        await reader.close();
      }
    }
    if (good >= end) {
      await staging.sync(obj.key);
      return good === end ? { offset: obj.offset, tail: obj.tail } : { offset: good * SEGMENT_SIZE, tail: null };
    }
    const from = Math.max(good, 0);
    // Cut off: an append over bytes that never authenticated must not be held to them.
    await staging.write(obj.key, sealedOffsetOf(from), noBytes());
    await staging.sync(obj.key);
    return { offset: from * SEGMENT_SIZE, tail: null };
  }

  /** Makes the whole staged object the object under its key (idempotent). */
  async publish(obj: Pick<ResumableObject, 'key' | 'length'>): Promise<void> {
    this.sizes.delete(obj.key);
    await this.sealed.driver.staging.publish(obj.key, sealedSize(obj.length));
  }

  async discard(key: string): Promise<boolean> {
    this.behind.delete(key);
    this.sizes.delete(key);
    return this.sealed.driver.staging.discard(key);
  }
}

/**
 * Compares what an append is about to write with what an interrupted one left at the same place. A byte
 * that differs from a non-zero byte already stored means different plaintext under the same nonce; zero
 * bytes are space a crash left unwritten.
 */
class OverwriteGuard {
  constructor(
    private readonly previous: ExactReader,
    private left: number,
  ) {}

  async check(piece: Uint8Array): Promise<void> {
    if (this.left === 0) return;
    const n = Math.min(piece.byteLength, this.left);
    const before = await this.previous.read(n);
    this.left -= n;
    const now = Buffer.from(piece.buffer, piece.byteOffset, n);
    if (now.equals(before)) return;
    for (let i = 0; i < before.length; i++) {
      if (before[i] !== 0 && before[i] !== now[i]) {
        throw new ResealMismatchError('the bytes sent differ from those received at the same offset before an interruption');
      }
    }
  }

  async close(): Promise<void> {
    await this.previous.close();
  }
}

function tailKey(dataKey: Uint8Array): Buffer {
  return Buffer.from(hkdfSync('sha256', dataKey, Buffer.alloc(0), TAIL_INFO, 32));
}

function tailAad(key: string, index: number): Buffer {
  return Buffer.from(`${key}.${index}`);
}

/** nonce ‖ ciphertext ‖ tag of a partial segment's plaintext. */
function sealTail(dataKey: Uint8Array, key: string, index: number, plain: Uint8Array): Buffer {
  const nonce = randomBytes(NONCE_SIZE);
  const c = createCipheriv('aes-256-gcm', tailKey(dataKey), nonce);
  c.setAAD(tailAad(key, index));
  return Buffer.concat([nonce, c.update(plain), c.final(), c.getAuthTag()]);
}

function openTail(dataKey: Uint8Array, key: string, index: number, sealed: Uint8Array): Buffer {
  const b = Buffer.from(sealed);
  const d = createDecipheriv('aes-256-gcm', tailKey(dataKey), b.subarray(0, NONCE_SIZE));
  d.setAAD(tailAad(key, index));
  d.setAuthTag(b.subarray(b.length - TAG_SIZE));
  try {
    return Buffer.concat([d.update(b.subarray(NONCE_SIZE, b.length - TAG_SIZE)), d.final()]);
  } catch {
    throw new ObjectIntegrityError(`the partial segment of resumable object ${key} failed authentication`);
  }
}
