import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import {
  StorageNotFoundError,
  RangeNotSatisfiableError,
  ObjectIntegrityError,
  type ByteRange,
  type ObjectInfo,
  type ObjectReader,
  type PutOptions,
  type StagingArea,
  type StagingWriteOptions,
  type StorageDriver,
  type StorageLocation,
} from './driver.ts';
import { releaseSoleView } from '../lib/buffers.ts';
import { StartupError } from '../errors.ts';
import { assertValidStorageKey, isValidStorageKey } from './keys.ts';

const TEMP_DIR = '.tmp';
const STAGING_DIR = '.staging';
// Coalesce small chunks into few large writes: one syscall per MiB instead of per segment.
const WRITE_BUFFER = 1024 * 1024;
const SYNC_EVERY = 64 * 1024 * 1024;
const READ_CHUNK = 256 * 1024;
const LIST_YIELD_EVERY = 256;

function isNotFound(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

/** Removes a file; whether there was one. */
async function unlinkIfPresent(file: string): Promise<boolean> {
  try {
    await fsp.unlink(file);
    return true;
  } catch (err) {
    if (isNotFound(err)) return false;
    throw err;
  }
}

async function fsyncDir(dir: string): Promise<void> {
  const handle = await fsp.open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Makes `dir` and any parent missing; returns the folders a new entry was made in, to sync (`syncFolder`, `shardReady`). */
async function makeFolder(dir: string): Promise<string[]> {
  const first = await fsp.mkdir(dir, { recursive: true, mode: 0o700 });
  const parents: string[] = [];
  if (first === undefined) return parents;
  for (let parent = path.dirname(dir); ; parent = path.dirname(parent)) {
    parents.push(parent);
    if (parent === path.dirname(first)) return parents;
  }
}

/** Syncs `dir`, then the folders it was made in (so a crash cannot lose a new folder); last, when the file's sync has committed the journal. */
async function syncFolder(dir: string, madeIn: readonly string[]): Promise<void> {
  await fsyncDir(dir);
  for (const parent of madeIn) await fsyncDir(parent);
}

/**
 * Syncs of one folder asked for while another is running share the next one, which begins once every entry of
 * theirs is made, so it makes them all durable; one asked for while none runs begins at once.
 */
class FolderSyncs {
  private readonly next = new Map<string, Promise<void>>();
  private readonly running = new Map<string, Promise<void>>();

  sync(dir: string): Promise<void> {
    const waiting = this.next.get(dir);
    if (waiting) return waiting;
    const before = this.running.get(dir);
    const sync: Promise<void> = (before ? before.then(ignore, ignore) : Promise.resolve())
      .then(() => {
        this.next.delete(dir);
        this.running.set(dir, sync);
        return fsyncDir(dir);
      })
      .finally(() => {
        if (this.running.get(dir) === sync) this.running.delete(dir);
      });
    this.next.set(dir, sync);
    return sync;
  }
}

const ignore = () => {};

/** One operation at a time in the background; its failure is kept and thrown to whoever settles next. */
class BackgroundSlot {
  private running: Promise<void> | null = null;
  private error: unknown = null;

  get busy(): boolean {
    return this.running !== null;
  }

  start(work: () => Promise<unknown>): void {
    this.running = work().then(
      () => {
        this.running = null;
      },
      (err: unknown) => {
        this.running = null;
        this.error ??= err;
      },
    );
  }

  /** Waits for the operation in flight; throws the first failure any operation had. */
  async settle(): Promise<void> {
    await this.running;
    if (this.error) throw this.error;
  }

  /** Waits for the operation in flight, ignoring failures (for clean-up after one). */
  async idle(): Promise<void> {
    await this.running;
  }
}

/**
 * Writes `body` into an open file from byte `position` on, in few large writes, and flushes what is
 * written to disk in the background while more arrives, so the caller's final sync waits for little.
 * Returns the bytes written; on failure nothing is in flight when it throws.
 */
async function writeBody(
  handle: fsp.FileHandle,
  position: number,
  body: AsyncIterable<Uint8Array | readonly Uint8Array[]>,
  opts: { signal?: AbortSignal; release?: boolean } = {},
): Promise<number> {
  const { signal } = opts;
  let size = 0;
  let at = position;
  let pending: Uint8Array[] = [];
  let pendingBytes = 0;
  const flush = async () => {
    if (pendingBytes === 0) return;
    const written = pending;
    let chunks = pending;
    let left = pendingBytes;
    pending = [];
    pendingBytes = 0;
    // One vectored write per batch: no copy into a single buffer; a short write resumes where it stopped.
    while (left > 0) {
      const { bytesWritten } = await handle.writev(chunks, at);
      at += bytesWritten;
      left -= bytesWritten;
      if (left === 0) break;
      let skip = bytesWritten;
      while (skip >= chunks[0]!.byteLength) skip -= chunks.shift()!.byteLength;
      if (skip > 0) chunks = [chunks[0]!.subarray(skip), ...chunks.slice(1)];
    }
    if (opts.release) for (const chunk of written) releaseSoleView(chunk);
  };
  // The next batch gathers while this one is written: at most one write in flight.
  const writing = new BackgroundSlot();
  // A failed background flush fails the write: the kernel reports a writeback error to one fsync only.
  const syncing = new BackgroundSlot();
  let syncedTo = 0;
  try {
    for await (const item of body) {
      signal?.throwIfAborted();
      if (item instanceof Uint8Array) {
        pending.push(item);
        pendingBytes += item.byteLength;
        size += item.byteLength;
      } else {
        for (const chunk of item) {
          pending.push(chunk);
          pendingBytes += chunk.byteLength;
          size += chunk.byteLength;
        }
      }
      if (pendingBytes >= WRITE_BUFFER) {
        await writing.settle();
        writing.start(flush);
        if (!syncing.busy && size - syncedTo >= SYNC_EVERY) {
          syncedTo = size;
          syncing.start(() => handle.datasync());
        }
      }
    }
    signal?.throwIfAborted();
    await writing.settle();
    await flush();
    await syncing.settle();
    return size;
  } catch (err) {
    await writing.idle();
    await syncing.idle();
    throw err;
  }
}

// A stream dropped without being read to the end or cancelled still closes its file: the runtime treats a
// collected, unclosed FileHandle as an uncaught error.
const abandonedReads = new FinalizationRegistry<() => Promise<void>>((close) => void close().catch(() => {}));

/**
 * The bytes of `range` of a file, read on the I/O pool one 256 KiB chunk ahead of the consumer.
 * Bun.file().stream() reads on the main thread without yielding: a 1 GiB download held other requests
 * back for 0.2-3 s. The file is opened at the first read and closed at the end, on an error or when the
 * consumer cancels.
 */
export function readAhead(file: string, range: ByteRange): ReadableStream<Uint8Array> {
  let opened: Promise<fsp.FileHandle> | null = null;
  let ahead: Promise<Uint8Array> | null = null;
  let pos = range.start;
  let closed = false;
  const read = async (): Promise<Uint8Array> => {
    const handle = await (opened ??= fsp.open(file, 'r'));
    const want = Math.min(READ_CHUNK, range.end - pos);
    const at = pos;
    pos += want;
    const buf = Buffer.allocUnsafe(want);
    let got = 0;
    for (let n = -1; got < want && n !== 0; got += n) n = (await handle.read(buf, got, want - got, at + got)).bytesRead;
    // A file shorter than its stat said ends the stream here; the caller checks the length it needed.
    if (got < want) pos = range.end;
    return buf.subarray(0, got);
  };
  const registration = {};
  const close = async () => {
    closed = true;
    abandonedReads.unregister(registration);
    await ahead?.catch(() => {});
    ahead = null;
    const handle = await opened?.catch(() => null);
    opened = null;
    await handle?.close();
  };
  const stream = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        try {
          const chunk = await (ahead ??= read());
          // Cancelled while reading: close() waited for this read and closed the file.
          if (closed) return;
          ahead = pos < range.end ? read() : null;
          if (chunk.length > 0) controller.enqueue(chunk);
          if (ahead) return;
          await close();
          controller.close();
        } catch (err) {
          await close();
          throw err;
        }
      },
      cancel: close,
    },
    { highWaterMark: 0 },
  );
  abandonedReads.register(stream, close, registration);
  return stream;
}

/**
 * Objects live at `<root>/<k0k1>/<k2k3>/<key>`; writes go to `<root>/.tmp/` first, then fsync and rename,
 * except a fresh key's (an upload's), written in place.
 * Staged objects are single files in `<root>/.staging/`, appended in place and renamed into their place
 * when published.
 */
export class LocalDriver implements StorageDriver {
  readonly name = 'local';
  readonly staging: FileStaging;
  readonly location: StorageLocation = { driver: 'local', bucket: null, prefix: '' };

  /**
   * Shard directories known to exist, the latest `knownShards` made or written into: a write there skips its
   * mkdir. New keys share 4,096 directories (`newStorageKey`), as many as are remembered by default; unbounded,
   * it held about 130 bytes per upload for as long as the server ran (older keys' directories are 16.7 million).
   */
  private readonly shardDirs = new Set<string>();
  private readonly folderSyncs = new FolderSyncs();
  /** Shard folders being made: every write into one waits until its entry is durable in each parent it was made in. */
  private readonly makingShards = new Map<string, Promise<void>>();

  constructor(
    readonly root: string,
    private readonly knownShards = 4096,
  ) {
    fs.mkdirSync(path.join(root, TEMP_DIR), { recursive: true, mode: 0o700 });
    this.staging = new FileStaging({ head: (key) => this.head(key), adopt: (file, key) => this.publish(file, key) }, stagingDirOf(root));
  }

  pathOf(key: string): string {
    assertValidStorageKey(key);
    return path.join(this.root, key.slice(0, 2), key.slice(2, 4), key);
  }

  private tempPath(key: string): string {
    return path.join(this.root, TEMP_DIR, `${key}.${randomBytes(6).toString('hex')}`);
  }

  private rememberShard(dir: string): void {
    this.shardDirs.delete(dir);
    this.shardDirs.add(dir);
    if (this.shardDirs.size > this.knownShards) this.shardDirs.delete(this.shardDirs.values().next().value!);
  }

  /**
   * Makes shard folder `dir` when missing and syncs its entry into each parent it was made in, once for every write
   * that asks meanwhile: a write into a folder another write is making cannot be answered before the folder is durable.
   */
  private shardReady(dir: string): Promise<void> {
    let making = this.makingShards.get(dir);
    if (!making) {
      making = makeFolder(dir)
        .then(async (madeIn) => {
          for (const parent of madeIn) await fsyncDir(parent);
        })
        .finally(() => this.makingShards.delete(dir));
      this.makingShards.set(dir, making);
    }
    return making;
  }

  /** Opens `file` in shard directory `dir` for a new object, the directory made (durably) first when needed. */
  private async createInShard(dir: string, file: string): Promise<fsp.FileHandle> {
    if (!this.shardDirs.has(dir)) await this.shardReady(dir);
    let handle: fsp.FileHandle;
    try {
      handle = await fsp.open(file, 'wx', 0o600);
    } catch (err) {
      // A shard directory removed behind the server's back: made again.
      if (!isNotFound(err) || !this.shardDirs.has(dir)) throw err;
      await this.shardReady(dir);
      handle = await fsp.open(file, 'wx', 0o600);
    }
    this.rememberShard(dir);
    return handle;
  }

  /** Renames a finished file (in the same file system) to the object `key`, durably. */
  async publish(temp: string, key: string): Promise<void> {
    const final = this.pathOf(key);
    const dir = path.dirname(final);
    if (!this.shardDirs.has(dir)) await this.shardReady(dir);
    try {
      await fsp.rename(temp, final);
    } catch (err) {
      // A shard directory removed behind the server's back: made again.
      if (!isNotFound(err) || !this.shardDirs.has(dir)) throw err;
      await this.shardReady(dir);
      await fsp.rename(temp, final);
    }
    this.rememberShard(dir);
    await this.folderSyncs.sync(dir);
  }

  async put(key: string, body: AsyncIterable<Uint8Array>, opts: PutOptions = {}): Promise<{ size: number }> {
    assertValidStorageKey(key);
    if (opts.fresh) return this.putInPlace(key, body, opts);
    const temp = this.tempPath(key);
    const handle = await fsp.open(temp, 'wx', 0o600);
    try {
      const size = await writeBody(handle, 0, body, opts);
      await handle.sync();
      await handle.close();
      await this.publish(temp, key);
      return { size };
    } catch (err) {
      await handle.close().catch(() => {});
      await fsp.rm(temp, { force: true });
      throw err;
    }
  }

  /**
   * A fresh key (PutOptions.fresh) written under its own name: no rename and no second directory changed.
   * The file and its directory are synced before this returns, as after a rename; a partial file is
   * removed on failure, or after a crash by the upload intents' sweep.
   */
  private async putInPlace(key: string, body: AsyncIterable<Uint8Array>, opts: PutOptions): Promise<{ size: number }> {
    const file = this.pathOf(key);
    const dir = path.dirname(file);
    const handle = await this.createInShard(dir, file);
    try {
      const size = await writeBody(handle, 0, body, opts);
      await handle.sync();
      await handle.close();
      // Shared with the other new objects of its folder (newStorageKey gives the uploads in progress one folder).
      await this.folderSyncs.sync(dir);
      return { size };
    } catch (err) {
      await handle.close().catch(() => {});
      await fsp.rm(file, { force: true });
      throw err;
    }
  }

  async get(key: string, range?: ByteRange): Promise<ReadableStream<Uint8Array>> {
    const file = this.pathOf(key);
    let size: number;
    try {
      size = (await fsp.stat(file)).size;
    } catch (err) {
      if (isNotFound(err)) throw new StorageNotFoundError(key);
      throw err;
    }
    const want = range ?? { start: 0, end: size };
    if (want.start < 0 || want.end < want.start || want.end > size) throw new RangeNotSatisfiableError(size);
    if (want.start === want.end) return new Blob([]).stream();
    return readAhead(file, want);
  }

  async openReader(key: string): Promise<ObjectReader> {
    let handle: fsp.FileHandle;
    try {
      handle = await fsp.open(this.pathOf(key), 'r');
    } catch (err) {
      if (isNotFound(err)) throw new StorageNotFoundError(key);
      throw err;
    }
    let closing: Promise<void> | null = null;
    const close = () => (closing ??= handle.close());
    let size: number;
    try {
      size = (await handle.stat()).size;
    } catch (err) {
      await close();
      throw err;
    }
    const registration = {};
    const reader: ObjectReader = {
      size,
      read: async (into, length, position) => (await handle.read(into, 0, length, position)).bytesRead,
      close: () => {
        abandonedReads.unregister(registration);
        return close();
      },
    };
    abandonedReads.register(reader, close, registration);
    return reader;
  }

  async head(key: string): Promise<ObjectInfo | null> {
    try {
      const st = await fsp.stat(this.pathOf(key));
      return { key, size: st.size, lastModified: st.mtime };
    } catch (err) {
      if (isNotFound(err)) return null;
      throw err;
    }
  }

  async delete(key: string): Promise<boolean> {
    return unlinkIfPresent(this.pathOf(key));
  }

  async *list(): AsyncIterable<ObjectInfo> {
    // Synchronous directory reads and stats are several times faster than their async forms for a
    // tree of tiny directories; the loop yields to the event loop every LIST_YIELD_EVERY entries.
    let sinceYield = 0;
    for (const a of this.sortedDirs(this.root)) {
      // Temp files and staged objects are not objects (yet).
      if (a.startsWith('.')) continue;
      for (const b of this.sortedDirs(path.join(this.root, a))) {
        const dir = path.join(this.root, a, b);
        for (const name of this.readNames(dir)) {
          if (!isValidStorageKey(name)) continue;
          const st = this.statOrNull(path.join(dir, name));
          if (st?.isFile()) yield { key: name, size: st.size, lastModified: st.mtime };
          if (++sinceYield >= LIST_YIELD_EVERY) {
            sinceYield = 0;
            await new Promise((resolve) => setImmediate(resolve));
          }
        }
      }
    }
  }

  private sortedDirs(dir: string): string[] {
    try {
      return fs
        .readdirSync(dir, { withFileTypes: true })
        .filter((e) => e.isDirectory())
        .map((e) => e.name)
        .sort();
    } catch (err) {
      if (isNotFound(err)) return [];
      throw err;
    }
  }

  private readNames(dir: string): string[] {
    try {
      return fs.readdirSync(dir);
    } catch (err) {
      if (isNotFound(err)) return [];
      throw err;
    }
  }

  // An entry removed between the listing and the stat is simply gone.
  private statOrNull(file: string): fs.Stats | null {
    try {
      return fs.statSync(file);
    } catch (err) {
      if (isNotFound(err)) return null;
      throw err;
    }
  }

  async copy(fromKey: string, toKey: string): Promise<void> {
    const source = this.pathOf(fromKey);
    assertValidStorageKey(toKey);
    const temp = this.tempPath(toKey);
    try {
      await fsp.copyFile(source, temp, fs.constants.COPYFILE_EXCL);
      const handle = await fsp.open(temp, 'r+');
      await handle.sync();
      await handle.close();
      await this.publish(temp, toKey);
    } catch (err) {
      await fsp.rm(temp, { force: true });
      if (isNotFound(err)) throw new StorageNotFoundError(fromKey);
      throw err;
    }
  }
}

/** Staged objects of the local driver: one file each, written in place at the offsets asked for. */
/** What a staging area turns its files into objects of. */
interface StagingTarget {
  head(key: string): Promise<ObjectInfo | null>;
  /** Makes the whole staged `file` the object `key`, durably, and the file gone: a rename on disk, an upload to a bucket. */
  adopt(file: string, key: string): Promise<void>;
}

/**
 * Staged objects as single files in a local directory, written in place at the offsets asked for. The
 * local driver renames them into place; the S3 driver uploads them to the bucket when published, so a
 * bucket never holds a partial object and nothing is downloaded again.
 */
export class FileStaging implements StagingArea {
  constructor(
    private readonly target: StagingTarget,
    private readonly dir: string,
  ) {}

  private fileOf(key: string): string {
    assertValidStorageKey(key);
    return path.join(this.dir, key);
  }

  async size(key: string): Promise<number> {
    try {
      return (await fsp.stat(this.fileOf(key))).size;
    } catch (err) {
      if (isNotFound(err)) return 0;
      throw err;
    }
  }

  async read(key: string, range: ByteRange): Promise<ReadableStream<Uint8Array>> {
    const size = await this.size(key);
    if (range.start < 0 || range.end < range.start || range.end > size) throw new RangeNotSatisfiableError(size);
    if (range.start === range.end) return new Blob([]).stream();
    return readAhead(this.fileOf(key), range);
  }

  async write(
    key: string,
    at: number,
    body: AsyncIterable<Uint8Array | readonly Uint8Array[]>,
    opts: StagingWriteOptions = {},
  ): Promise<number> {
    const file = this.fileOf(key);
    let handle: fsp.FileHandle;
    let madeIn: string[] | null = null;
    try {
      handle = await fsp.open(file, 'r+');
    } catch (err) {
      if (!isNotFound(err) || at > 0) throw isNotFound(err) ? new StorageNotFoundError(key) : err;
      madeIn = await makeFolder(this.dir);
      handle = await fsp.open(file, 'wx', 0o600);
    }
    try {
      const staged = opts.staged ?? (await handle.stat()).size;
      if (at > staged) throw new StorageNotFoundError(key);
      // Not synced here: the caller syncs behind the client (syncing every MiB as it arrived cost 15%).
      const end = at + (await writeBody(handle, at, body, { ...opts, release: true }));
      if (staged > end) await handle.truncate(end);
      return end;
    } finally {
      await handle.close();
      if (madeIn) await syncFolder(this.dir, madeIn);
    }
  }

  async sync(key: string): Promise<void> {
    let handle: fsp.FileHandle;
    try {
      handle = await fsp.open(this.fileOf(key), 'r+');
    } catch (err) {
      if (isNotFound(err)) return;
      throw err;
    }
    // fdatasync also makes a new size durable.
    await handle.datasync().finally(() => handle.close());
  }

  async publish(key: string, size: number): Promise<void> {
    const file = this.fileOf(key);
    const staged = await fsp.stat(file).catch((err: unknown) => {
      if (isNotFound(err)) return null;
      throw err;
    });
    if (!staged) {
      // Published before a crash that came ahead of the caller's record of it.
      if ((await this.target.head(key)) !== null) return;
      throw new StorageNotFoundError(key);
    }
    if (staged.size < size) throw new ObjectIntegrityError(`staged object ${key} holds ${staged.size} of its ${size} bytes`);
    if (staged.size > size) {
      await fsp.truncate(file, size);
      const handle = await fsp.open(file, 'r+');
      await handle.datasync().finally(() => handle.close());
    }
    await this.target.adopt(file, key);
  }

  async discard(key: string): Promise<boolean> {
    return unlinkIfPresent(this.fileOf(key));
  }

  async *list(): AsyncIterable<ObjectInfo> {
    for (const name of await fsp.readdir(this.dir).catch(() => [] as string[])) {
      if (!isValidStorageKey(name)) continue;
      const st = await fsp.stat(path.join(this.dir, name)).catch(() => null);
      if (st?.isFile()) yield { key: name, size: st.size, lastModified: st.mtime };
    }
  }
}

/** Where staged objects live under the local driver's root (the S3 driver stages there too). */
export function stagingDirOf(root: string): string {
  return path.join(root, STAGING_DIR);
}

export function createLocalDriver(root: string): LocalDriver {
  try {
    return new LocalDriver(root);
  } catch (err) {
    // A file where the blobs folder belongs, or a folder the service may not write: one line that names it, not a stack.
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOTDIR' || code === 'EEXIST' || code === 'EACCES' || code === 'EPERM' || code === 'EROFS') {
      throw new StartupError(
        `cannot use ${root} to store files (${(err as Error).message}): it must be a directory the service can write; move aside whatever is in its place, or correct its owner and permissions`,
      );
    }
    throw err;
  }
}

/** Removes temp files left by a crash; only the process that owns the data dir calls this. */
export async function cleanupTempFiles(root: string, olderThanMs: number): Promise<number> {
  const dir = path.join(root, TEMP_DIR);
  let removed = 0;
  const cutoff = Date.now() - olderThanMs;
  for (const name of await fsp.readdir(dir).catch(() => [] as string[])) {
    const file = path.join(dir, name);
    const st = await fsp.stat(file).catch(() => null);
    if (st && st.mtimeMs <= cutoff) {
      await fsp.rm(file, { force: true });
      removed++;
    }
  }
  return removed;
}
