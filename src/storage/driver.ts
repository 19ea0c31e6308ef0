/**
 * The storage contract every driver (local, s3) keeps:
 * - `put` makes an object visible only once all of it is durable; a failed or aborted put leaves nothing.
 * - `get` of a missing key rejects with StorageNotFoundError before any byte is produced.
 * - `delete` is idempotent; `list` streams, so a scan of a million objects holds one page in memory.
 * - Keys are checked with `assertValidStorageKey` (keys.ts) so none can escape the driver's root.
 * - `staging` holds objects written piece by piece (resumable uploads): invisible to `get` and `list`
 *   until published, and turned into the object without the bytes passing through Coffer again.
 */
export interface ObjectInfo {
  key: string;
  size: number;
  lastModified: Date;
}

/** Half-open byte range [start, end). */
export interface ByteRange {
  start: number;
  end: number;
}

export interface PutOptions {
  signal?: AbortSignal;
  /** Each chunk of the body is the driver's once yielded, the only view of its memory: it may free it once stored. */
  release?: boolean;
  /**
   * `key` is new, nothing reads it before a row naming it commits, and an upload intent covers a crash
   * mid-write: the local driver may write the object in place instead of to a temp name and renaming it.
   */
  fresh?: boolean;
}

export interface StagingWriteOptions extends PutOptions {
  /** The staged size when the caller wrote it last (nothing else writes it): not asked of the disk again. */
  staged?: number;
}

/** One object opened for reads at any offset into the reader's own buffers (local disk). */
export interface ObjectReader {
  /** The object's size in bytes when it was opened. */
  readonly size: number;
  /** Reads up to `length` bytes at `position` into the start of `into`; 0 at the end of the object. */
  read(into: Uint8Array, length: number, position: number): Promise<number>;
  close(): Promise<void>;
}

export interface StorageDriver {
  /** Short name reported by orphan scans (`local`, `s3`). */
  readonly name: string;
  put(key: string, body: AsyncIterable<Uint8Array>, opts?: PutOptions): Promise<{ size: number }>;
  /** Each chunk of the stream is the caller's alone (the driver keeps no view of it), so it may be released. */
  get(key: string, range?: ByteRange): Promise<ReadableStream<Uint8Array>>;
  head(key: string): Promise<ObjectInfo | null>;
  /**
   * The object opened for positional reads, for a driver where a read costs a syscall, not a request: the
   * reader fetches exact runs into buffers it reuses. StorageNotFoundError for a missing key.
   */
  openReader?(key: string): Promise<ObjectReader>;
  /** Returns whether an object was removed. */
  delete(key: string): Promise<boolean>;
  list(): AsyncIterable<ObjectInfo>;
  copy(fromKey: string, toKey: string): Promise<void>;
  readonly staging: StagingArea;
  /** Where the objects live, as recorded in the database (a changed location is refused at start). */
  readonly location: StorageLocation;
  /**
   * Uploads begun and never completed or aborted (S3 multipart uploads); none for a driver without them.
   * StorageCallNotImplementedError when the store cannot list them.
   */
  listIncompleteUploads?(): AsyncIterable<IncompleteUpload>;
  /** Aborts one; false when it no longer exists. */
  abortIncompleteUpload?(key: string, uploadId: string): Promise<boolean>;
  /** A probe object's round trip for `coffer doctor` (a bucket's put, get, list, delete); none for local disk. */
  probe?(): Promise<ProbeStep[]>;
}

/**
 * Objects written in pieces across requests and restarts. The caller records how many bytes are durable
 * (the database); the staging area keeps the bytes and nothing else, so after a crash the caller's
 * record decides where writing resumes.
 */
export interface StagingArea {
  /** Bytes staged under `key`; 0 when there are none. */
  size(key: string): Promise<number>;
  /** `range` of the staged bytes. */
  read(key: string, range: ByteRange): Promise<ReadableStream<Uint8Array>>;
  /**
   * Writes `body` from byte `at` on, over what is staged there, and cuts off anything after its end;
   * written (the process may die) but not yet durable (the machine may not) when it resolves: `sync` is.
   * `at` beyond the staged size is a StorageNotFoundError (the bytes are gone).
   * Each chunk of `body` is the driver's once yielded, the only view of its memory: it may free it after writing.
   * A list of chunks is written as those chunks in order (one turn of the iterator for many sealed segments).
   */
  write(key: string, at: number, body: AsyncIterable<Uint8Array | readonly Uint8Array[]>, opts?: StagingWriteOptions): Promise<number>;
  /** Makes every byte written under `key` so far durable (a power loss keeps them); none staged is a no-op. */
  sync(key: string): Promise<void>;
  /** Makes the `size` staged bytes the object `key`, durably; resolves at once if that object exists already. */
  publish(key: string, size: number): Promise<void>;
  /** Removes the staged bytes; returns whether there were any. */
  discard(key: string): Promise<boolean>;
  /** Every staged key with its size and last write. */
  list(): AsyncIterable<ObjectInfo>;
}

export interface ProbeStep {
  step: 'put' | 'get' | 'list' | 'delete';
  ok: boolean;
  error?: string;
}

export interface StorageLocation {
  driver: 'local' | 's3';
  /** The bucket (s3) or null. */
  bucket: string | null;
  /** The key prefix inside the bucket (s3) or ''. */
  prefix: string;
}

export interface IncompleteUpload {
  key: string;
  uploadId: string;
  initiated: Date;
}

/**
 * The storage service failed (unreachable, timed out, refused, or kept failing after retries): not the
 * request's fault and not a bug. HTTP answers 503; the message names the call and the service's reason.
 */
export class StorageUnavailableError extends Error {
  constructor(
    message: string,
    readonly code: string | null = null,
    readonly status: number | null = null,
  ) {
    super(message);
  }
}

/**
 * The store does not implement an optional call (`501 NotImplemented`: ListMultipartUploads or
 * UploadPartCopy on s3rver and some small S3 servers): the caller does without it.
 */
export class StorageCallNotImplementedError extends StorageUnavailableError {}

export class StorageNotFoundError extends Error {
  constructor(readonly key: string) {
    super(`stored object ${key} does not exist`);
  }
}

export class InvalidStorageKeyError extends Error {
  constructor(readonly key: string) {
    super(`invalid storage key ${JSON.stringify(key.slice(0, 80))}`);
  }
}

export class RangeNotSatisfiableError extends Error {
  constructor(readonly size: number) {
    super(`range not satisfiable for an object of ${size} bytes`);
  }
}

/** The stored bytes are not what was written (tampered, truncated, extended) or the key is wrong. */
export class ObjectIntegrityError extends Error {}

/** Whether each key's object exists, `concurrency` `head` calls at a time; a malformed key exists nowhere. */
export async function existsMany(
  driver: StorageDriver,
  keys: ReadonlyArray<string | null>,
  isValidKey: (key: string) => boolean,
  concurrency = 32,
): Promise<boolean[]> {
  const out = new Array<boolean>(keys.length).fill(false);
  let next = 0;
  const lane = async () => {
    while (next < keys.length) {
      const i = next++;
      const key = keys[i];
      out[i] = key !== null && key !== undefined && isValidKey(key) && (await driver.head(key)) !== null;
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, keys.length) }, lane));
  return out;
}
