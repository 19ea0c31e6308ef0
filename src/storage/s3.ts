// Kept over Bun.S3Client (docs/development.md › S3 client): 0.74 against 1.36 CPU s/GiB, 142 against 430 MiB peak RSS, and copy, the upload sweep and timeouts it lacks.
import fsp from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { releaseSoleView } from '../lib/buffers.ts';
import {
  RangeNotSatisfiableError,
  StorageCallNotImplementedError,
  StorageNotFoundError,
  StorageUnavailableError,
  type ByteRange,
  type IncompleteUpload,
  type ObjectInfo,
  type ProbeStep,
  type PutOptions,
  type StagingArea,
  type StorageDriver,
  type StorageLocation,
} from './driver.ts';
import { assertValidStorageKey, isValidStorageKey } from './keys.ts';
import { FileStaging, readAhead } from './local.ts';
import { sha256Hex, signRequest, UNSIGNED_PAYLOAD, uriEncode, type SigningCredentials } from './s3-signer.ts';

const MiB = 1024 * 1024;
/** Bytes per second an upload is given time for beyond the timeout: a slow uplink must not fail a part. */
const UPLOAD_FLOOR_RATE = 256 * 1024;
const EMPTY_SHA256 = sha256Hex('');
/** A body this large is sent as a stream of views of it: the runtime copied a whole buffer given to fetch (8 MiB a part). */
const STREAMED_BODY = 1024 * 1024;
const STREAM_PIECE = 256 * 1024;
/** The waits before a read that found no object asks again: a key the database names is missing only if it stays so. */
const NOT_YET_VISIBLE_MS = [250, 750];

export interface S3DriverOptions {
  bucket: string;
  /** Null: AWS (`https://s3.<region>.amazonaws.com`). */
  endpoint: string | null;
  region: string;
  /** Key prefix inside the bucket, '' or ending in '/'. */
  prefix: string;
  accessKeyId: string;
  secretAccessKey: string;
  forcePathStyle: boolean;
  /** Bytes per multipart part (5 MiB to 5 GiB); smaller objects are one PUT. */
  partSize?: number;
  /** Parts uploaded at once: memory is (queueSize + 1) parts. */
  queueSize?: number;
  /** Per call, retries included (and per silence while a body streams); an upload also gets its time at UPLOAD_FLOOR_RATE. */
  timeoutMs?: number;
  /** Per call that makes the service work on stored bytes (server-side copy, completing a multipart upload). */
  partTimeoutMs?: number;
  /** Tries of a call that failed in a way worth retrying (5xx, 429/SlowDown, connection reset), within its timeout. */
  attempts?: number;
  /** Objects larger than this are copied part by part (UploadPartCopy); S3's CopyObject stops at 5 GiB. */
  copyPartThreshold?: number;
  copyPartSize?: number;
  /** A local directory for resumable uploads in progress: uploaded to the bucket as one object when complete. */
  stagingDir: string;
}

interface SendOptions {
  query?: Record<string, string>;
  headers?: Record<string, string>;
  /** A Blob (a slice of a file) is sent as it is read. */
  body?: Uint8Array | string | Blob;
  signal?: AbortSignal;
  timeoutMs?: number;
  /** Keep the response body open for the caller (a GET); the silence timeout then guards each read. */
  stream?: boolean;
  /** Statuses that are an answer, not a failure (404 for HEAD). */
  accept?: number[];
  attempts?: number;
}

interface Answer {
  status: number;
  headers: Headers;
  /** The body as text (not for `stream`). */
  text: string;
  body: ReadableStream<Uint8Array> | null;
}

function decodeXml(text: string): string {
  return text.replace(/&(lt|gt|quot|apos|amp|#\d+|#x[0-9a-f]+);/gi, (_, e: string) => {
    const named: Record<string, string> = { lt: '<', gt: '>', quot: '"', apos: "'", amp: '&' };
    if (named[e.toLowerCase()]) return named[e.toLowerCase()]!;
    return String.fromCodePoint(e[1] === 'x' || e[1] === 'X' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10));
  });
}

function escapeXml(text: string): string {
  return text.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** The text of every `<tag>` element (S3's XML has no attributes or namespaces we need). */
function xmlAll(xml: string, tag: string): string[] {
  return [...xml.matchAll(new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`, 'g'))].map((m) => m[1]!);
}

function xmlOne(xml: string, tag: string): string | null {
  const v = xmlAll(xml, tag)[0];
  return v === undefined ? null : decodeXml(v);
}

const RETRY_CODES = new Set([
  'SlowDown',
  'RequestTimeout',
  'InternalError',
  'ServiceUnavailable',
  'RequestTimeTooSkewed',
  'OperationAborted',
]);

/** A call the store does not implement: the same answer however often it is asked. */
function notImplemented(status: number, code: string | null): boolean {
  return status === 501 || code === 'NotImplemented';
}

function retryable(status: number, code: string | null): boolean {
  if (notImplemented(status, code)) return false;
  return status >= 500 || status === 429 || (code !== null && RETRY_CODES.has(code));
}

/** Exponential backoff with jitter: ~100 ms, 200 ms, 400 ms … at most 3 s; a server's Retry-After wins when shorter than 10 s. */
function backoff(attempt: number, retryAfter: string | null): number {
  const asked = retryAfter && /^\d+$/.test(retryAfter) ? Number(retryAfter) * 1000 : null;
  if (asked !== null && asked <= 10_000) return asked;
  return Math.min(3000, 100 * 2 ** attempt) * (0.5 + Math.random() / 2);
}

function networkReason(err: unknown): string {
  const e = err as { code?: string; message?: string };
  return e.code ? `${e.code}${e.message && !e.message.includes(e.code) ? ` (${e.message})` : ''}` : (e.message ?? String(err));
}

/**
 * Objects in an S3-compatible bucket (AWS, MinIO, Garage, SeaweedFS, R2, B2), under `prefix`, spoken to
 * with signed HTTP requests: Bun's S3 client has no server-side copy, no ListMultipartUploads, no
 * explicit abort (its writer's `end(err)` completes the upload), no timeout or AbortSignal, and does
 * not retry GET/HEAD/LIST on 503. Each call has a timeout; idempotent calls are retried with backoff.
 */
export class S3Driver implements StorageDriver {
  readonly name = 's3';
  readonly location: StorageLocation;
  readonly staging: StagingArea;
  private readonly creds: SigningCredentials;
  private readonly origin: string;
  private readonly host: string;
  /** Path before the key: `/<base>/<bucket>/` (path style) or `/<base>/` (virtual hosted). */
  private readonly keyPath: string;
  private readonly partSize: number;
  private readonly queueSize: number;
  private readonly timeoutMs: number;
  private readonly partTimeoutMs: number;
  private readonly attempts: number;
  private readonly copyPartThreshold: number;
  private readonly copyPartSize: number;
  /** Part buffers the puts hold now and the most held at once: at most queueSize + 1 per put. */
  readonly partBuffers = { held: 0, peak: 0 };
  /** Until the store answers UploadPartCopy with 501: then large copies go through Coffer. */
  private partCopyImplemented = true;
  /** How far the store's clock is ahead of ours, learnt from a RequestTimeTooSkewed: requests are signed at its time. */
  private clockOffsetMs = 0;

  constructor(readonly opts: S3DriverOptions) {
    this.location = { driver: 's3', bucket: opts.bucket, prefix: opts.prefix };
    this.creds = { accessKeyId: opts.accessKeyId, secretAccessKey: opts.secretAccessKey, region: opts.region };
    const base = new URL(opts.endpoint ?? `https://s3.${opts.region}.amazonaws.com`);
    const basePath = base.pathname.replace(/\/+$/, '');
    if (opts.forcePathStyle) {
      this.host = base.host;
      this.keyPath = `${basePath}/${uriEncode(opts.bucket)}/`;
    } else {
      this.host = `${opts.bucket}.${base.host}`;
      this.keyPath = `${basePath}/`;
    }
    this.origin = `${base.protocol}//${this.host}`;
    this.partSize = opts.partSize ?? 8 * MiB;
    this.queueSize = opts.queueSize ?? 3;
    this.timeoutMs = opts.timeoutMs ?? 30_000;
    this.partTimeoutMs = opts.partTimeoutMs ?? Math.max(300_000, this.timeoutMs);
    this.attempts = opts.attempts ?? 4;
    this.copyPartThreshold = opts.copyPartThreshold ?? 5 * 1024 * MiB;
    this.copyPartSize = opts.copyPartSize ?? 1024 * MiB;
    this.staging = new FileStaging({ head: (key) => this.head(key), adopt: (file, key) => this.adopt(file, key) }, opts.stagingDir);
  }

  /**
   * A completed resumable upload's staged file becomes the object, then goes: its parts are sent from the
   * file as they are read, so no part is held in memory (a tus upload to a bucket peaked at 266 MiB holding them).
   */
  private async adopt(file: string, key: string): Promise<void> {
    const { size } = await fsp.stat(file);
    if (size <= this.partSize) await this.put(key, readAhead(file, { start: 0, end: size }));
    else {
      assertValidStorageKey(key);
      await this.multipart(key, undefined, async (part) => {
        for (let start = 0, n = 1; start < size; n++) {
          const end = Math.min(size, start + this.partSizeFor(n));
          await part(Bun.file(file).slice(start, end));
          start = end;
        }
      });
    }
    await fsp.rm(file, { force: true });
  }

  /** `bucket/prefix` for messages. */
  get where(): string {
    return `${this.opts.bucket}${this.opts.prefix ? `/${this.opts.prefix.replace(/\/$/, '')}` : ''} at ${this.opts.endpoint ?? 'AWS'}`;
  }

  async put(key: string, body: AsyncIterable<Uint8Array>, opts: PutOptions = {}): Promise<{ size: number }> {
    assertValidStorageKey(key);
    const signal = opts.signal;
    let size = 0;
    // Part buffers are reused once sent: freed ones would pile up until a collection (300+ MiB per GiB here).
    const spare: Buffer[] = [];
    const take = (bytes: number) => {
      const b = spare.pop();
      if (b && b.length === bytes) return b;
      if (b) this.partBuffers.held--;
      this.partBuffers.held++;
      this.partBuffers.peak = Math.max(this.partBuffers.peak, this.partBuffers.held);
      return Buffer.allocUnsafe(bytes);
    };
    let buf = take(this.partSizeFor(1));
    let filled = 0;
    let partNumber = 0;
    try {
      await this.multipart(key, signal, async (part) => {
        for await (const chunk of body) {
          signal?.throwIfAborted();
          size += chunk.byteLength;
          let offset = 0;
          while (offset < chunk.byteLength) {
            const n = Math.min(buf.length - filled, chunk.byteLength - offset);
            buf.set(chunk.subarray(offset, offset + n), filled);
            filled += n;
            offset += n;
            if (filled < buf.length) continue;
            const full = buf;
            await part(full, () => spare.push(full));
            buf = take(this.partSizeFor(++partNumber + 1));
            filled = 0;
          }
          if (opts.release) releaseSoleView(chunk);
        }
        signal?.throwIfAborted();
        if (partNumber > 0) return filled > 0 ? part(buf.subarray(0, filled)) : undefined;
        await this.send('PUT', this.opts.prefix + key, { body: buf.subarray(0, filled), signal, timeoutMs: this.uploadTimeout(filled) });
      });
      // Every part is sent: their memory goes now, not at a collection (the next upload began 32 MiB higher).
      for (const b of [buf, ...spare]) releaseSoleView(b);
    } finally {
      this.partBuffers.held -= 1 + spare.length;
    }
    return { size };
  }

  /**
   * A multipart upload of the parts `feed` hands to `part` in order, at most queueSize sent at once: `part`
   * waits for a free place, begins the upload at the first part, and calls `sent` once that part's bytes are
   * no longer needed. A feed that hands no part has stored the object itself (one PUT). On failure the parts
   * in flight are cancelled and the upload aborted.
   */
  private async multipart(
    key: string,
    signal: AbortSignal | undefined,
    feed: (part: (bytes: Uint8Array | Blob, sent?: () => void) => Promise<void>) => Promise<void>,
  ): Promise<void> {
    const objectKey = this.opts.prefix + key;
    // Cancels parts in flight the moment the put fails, so the abort is not held up by them.
    const parts = new AbortController();
    const partSignal = signal ? AbortSignal.any([signal, parts.signal]) : parts.signal;
    const inFlight = new Set<Promise<void>>();
    const etags: string[] = [];
    let failure: unknown = null;
    let uploadId: string | null = null;
    let partNumber = 0;
    let size = 0;

    const part = async (bytes: Uint8Array | Blob, sent?: () => void) => {
      if (failure) throw failure;
      uploadId ??= await this.createMultipartUpload(objectKey, signal);
      while (inFlight.size >= this.queueSize) await Promise.race(inFlight);
      if (failure) throw failure;
      const n = ++partNumber;
      size += bytes instanceof Blob ? bytes.size : bytes.byteLength;
      const sending: Promise<void> = this.send('PUT', objectKey, {
        query: { partNumber: String(n), uploadId },
        body: bytes,
        signal: partSignal,
        timeoutMs: this.uploadTimeout(bytes instanceof Blob ? bytes.size : bytes.byteLength),
      })
        .then((a) => {
          const etag = a.headers.get('etag');
          if (!etag) throw new StorageUnavailableError(`S3 UploadPart ${n} of ${key} returned no ETag`);
          etags[n - 1] = etag;
        })
        .catch((err: unknown) => {
          failure ??= err;
        })
        .finally(() => {
          inFlight.delete(sending);
          sent?.();
        });
      inFlight.add(sending);
    };

    try {
      await feed(part);
      if (uploadId === null) return;
      await Promise.all([...inFlight]);
      if (failure) throw failure;
      await this.completeMultipartUpload(objectKey, uploadId, etags, size, signal);
    } catch (err) {
      parts.abort();
      await Promise.allSettled([...inFlight]);
      // An abort that fails leaves a stale upload: orphan review lists it once the grace window passes.
      if (uploadId !== null) await this.abortMultipartUpload(objectKey, uploadId).catch(() => {});
      throw err;
    }
  }

  private uploadTimeout(bytes: number): number {
    return this.timeoutMs + (bytes / UPLOAD_FLOOR_RATE) * 1000;
  }

  /** Parts double in size every 2,500 so the 10,000-part limit fits 140 GiB with 8 MiB parts; memory grows only past 20 GiB. */
  private partSizeFor(n: number): number {
    return this.partSize * 2 ** Math.min(3, Math.floor((n - 1) / 2500));
  }

  async get(key: string, range?: ByteRange): Promise<ReadableStream<Uint8Array>> {
    assertValidStorageKey(key);
    if (range && (range.start < 0 || range.end < range.start)) throw new RangeNotSatisfiableError(0);
    if (range && range.start === range.end) {
      if ((await this.head(key)) === null) throw new StorageNotFoundError(key);
      return new Blob([]).stream();
    }
    const headers: Record<string, string> = range ? { range: `bytes=${range.start}-${range.end - 1}` } : {};
    const ask = () => this.send('GET', this.opts.prefix + key, { headers, stream: true, accept: [404, 416] });
    let a = await ask();
    // A store that shows a new object to reads a moment after acknowledging its write answered 500 "missing" for a file just uploaded.
    for (const wait of NOT_YET_VISIBLE_MS) {
      if (a.status !== 404) break;
      await a.body?.cancel();
      await Bun.sleep(wait);
      a = await ask();
    }
    if (a.status === 404) {
      await a.body?.cancel();
      throw new StorageNotFoundError(key);
    }
    if (a.status === 416) throw new RangeNotSatisfiableError(0);
    return this.resumed(this.opts.prefix + key, range?.start ?? 0, range?.end ?? null, a);
  }

  /**
   * The answer's body, asked for again from the byte it broke off at (If-Match its ETag) when the
   * connection drops mid-way: a reset cut every download it met. A download that goes silent is not
   * resumed (its timeout bounds it), nor one that broke off `attempts` times in a row with no byte between.
   */
  private resumed(objectKey: string, start: number, end: number | null, first: Answer): ReadableStream<Uint8Array> {
    const etag = first.headers.get('etag');
    let reader = first.body!.getReader();
    let at = start;
    let tries = 0;
    return new ReadableStream<Uint8Array>(
      {
        pull: async (controller) => {
          for (;;) {
            try {
              const r = await reader.read();
              if (r.done) return controller.close();
              at += r.value.byteLength;
              tries = 0;
              return controller.enqueue(r.value);
            } catch (err) {
              if (!(err instanceof StorageUnavailableError && err.code === 'NetworkError') || ++tries >= this.attempts) throw err;
              if (end !== null && at >= end) return controller.close();
              await Bun.sleep(backoff(tries - 1, null));
              const headers: Record<string, string> = { range: `bytes=${at}-${end === null ? '' : end - 1}` };
              if (etag) headers['if-match'] = etag;
              const again = await this.send('GET', objectKey, { headers, stream: true });
              // A store that ignores the Range would hand the object from its start again.
              if (again.status !== 206) {
                await again.body?.cancel();
                throw err;
              }
              reader = again.body!.getReader();
            }
          }
        },
        cancel: (reason) => reader.cancel(reason),
      },
      { highWaterMark: 0 },
    );
  }

  async head(key: string): Promise<ObjectInfo | null> {
    assertValidStorageKey(key);
    const a = await this.send('HEAD', this.opts.prefix + key, { accept: [404] });
    if (a.status === 404) return null;
    return { key, size: Number(a.headers.get('content-length') ?? 0), lastModified: new Date(a.headers.get('last-modified') ?? 0) };
  }

  async delete(key: string): Promise<boolean> {
    const existed = (await this.head(key)) !== null;
    await this.send('DELETE', this.opts.prefix + key, { accept: [404] });
    return existed;
  }

  /** ListObjectsV2 under the prefix, one page (1000 keys) in memory at a time: every object in key order; with `startAfter`, only those whose keys sort after it. */
  async *list(opts: { startAfter?: string } = {}): AsyncIterable<ObjectInfo> {
    let token: string | null = null;
    do {
      const query: Record<string, string> = { 'list-type': '2', prefix: this.opts.prefix, 'max-keys': '1000' };
      if (token) query['continuation-token'] = token;
      else if (opts.startAfter !== undefined) query['start-after'] = this.opts.prefix + opts.startAfter;
      const xml = (await this.send('GET', '', { query })).text;
      for (const entry of xmlAll(xml, 'Contents')) {
        const key = (xmlOne(entry, 'Key') ?? '').slice(this.opts.prefix.length);
        if (!isValidStorageKey(key)) continue;
        yield { key, size: Number(xmlOne(entry, 'Size') ?? 0), lastModified: new Date(xmlOne(entry, 'LastModified') ?? 0) };
      }
      token = xmlOne(xml, 'IsTruncated') === 'true' ? xmlOne(xml, 'NextContinuationToken') : null;
    } while (token);
  }

  async copy(fromKey: string, toKey: string): Promise<void> {
    assertValidStorageKey(fromKey);
    assertValidStorageKey(toKey);
    let source = await this.head(fromKey);
    // As a read does: a store may show a file just uploaded a moment after acknowledging it.
    for (const wait of NOT_YET_VISIBLE_MS) {
      if (source) break;
      await Bun.sleep(wait);
      source = await this.head(fromKey);
    }
    if (!source) throw new StorageNotFoundError(fromKey);
    const copySource = uriEncode(`${this.opts.bucket}/${this.opts.prefix}${fromKey}`, true);
    const target = this.opts.prefix + toKey;
    if (source.size <= this.copyPartThreshold) {
      const a = await this.send('PUT', target, {
        headers: { 'x-amz-copy-source': copySource },
        timeoutMs: this.partTimeoutMs,
        accept: [404],
      });
      if (a.status === 404) throw new StorageNotFoundError(fromKey);
      return;
    }
    if (this.partCopyImplemented) {
      try {
        await this.copyByParts(copySource, source.size, target);
        return;
      } catch (err) {
        if (!(err instanceof StorageCallNotImplementedError)) throw err;
        this.partCopyImplemented = false;
      }
    }
    // A store without UploadPartCopy: the bytes pass through Coffer instead.
    await this.put(toKey, await this.get(fromKey));
  }

  /** A server-side copy part by part (UploadPartCopy), for objects over CopyObject's 5 GiB. */
  private async copyByParts(copySource: string, size: number, target: string): Promise<void> {
    const uploadId = await this.createMultipartUpload(target);
    try {
      const etags: string[] = [];
      for (let start = 0, n = 1; start < size; start += this.copyPartSize, n++) {
        const end = Math.min(size, start + this.copyPartSize) - 1;
        const a = await this.send('PUT', target, {
          query: { partNumber: String(n), uploadId },
          headers: { 'x-amz-copy-source': copySource, 'x-amz-copy-source-range': `bytes=${start}-${end}` },
          timeoutMs: this.partTimeoutMs,
        });
        const etag = xmlOne(a.text, 'ETag');
        if (!etag) throw new StorageUnavailableError(`S3 UploadPartCopy ${n} of ${target} returned no ETag`);
        etags.push(etag);
      }
      await this.completeMultipartUpload(target, uploadId, etags, size);
    } catch (err) {
      await this.abortMultipartUpload(target, uploadId).catch(() => {});
      throw err;
    }
  }

  /** ListMultipartUploads under the prefix: uploads begun and never completed or aborted. */
  async *listIncompleteUploads(): AsyncIterable<IncompleteUpload> {
    let keyMarker: string | null = null;
    let uploadIdMarker: string | null = null;
    do {
      const query: Record<string, string> = { uploads: '', prefix: this.opts.prefix, 'max-uploads': '1000' };
      if (keyMarker !== null) query['key-marker'] = keyMarker;
      if (uploadIdMarker !== null) query['upload-id-marker'] = uploadIdMarker;
      const xml = (await this.send('GET', '', { query })).text;
      for (const entry of xmlAll(xml, 'Upload')) {
        const key = (xmlOne(entry, 'Key') ?? '').slice(this.opts.prefix.length);
        if (!isValidStorageKey(key)) continue;
        yield { key, uploadId: xmlOne(entry, 'UploadId') ?? '', initiated: new Date(xmlOne(entry, 'Initiated') ?? 0) };
      }
      const truncated = xmlOne(xml, 'IsTruncated') === 'true';
      keyMarker = truncated ? xmlOne(xml, 'NextKeyMarker') : null;
      uploadIdMarker = truncated ? xmlOne(xml, 'NextUploadIdMarker') : null;
    } while (keyMarker);
  }

  async abortIncompleteUpload(key: string, uploadId: string): Promise<boolean> {
    assertValidStorageKey(key);
    return this.abortMultipartUpload(this.opts.prefix + key, uploadId);
  }

  /** One listing of the prefix: proves the endpoint answers, the bucket exists and the credentials are accepted. */
  async verifyAccess(): Promise<void> {
    await this.send('GET', '', { query: { 'list-type': '2', prefix: this.opts.prefix, 'max-keys': '1' }, attempts: 2 });
  }

  /** Put, read back, list and delete a probe object (`coffer doctor`); each step's failure is reported. */
  async probe(): Promise<ProbeStep[]> {
    // A dot makes it no valid storage key: list() and orphan scans never see it.
    const key = `${this.opts.prefix}.coffer-doctor-probe-${randomBytes(6).toString('hex')}`;
    const content = `coffer doctor probe ${new Date().toISOString()}`;
    const out: ProbeStep[] = [];
    const step = async (name: ProbeStep['step'], fn: () => Promise<void>) => {
      try {
        await fn();
        out.push({ step: name, ok: true });
        return true;
      } catch (err) {
        out.push({ step: name, ok: false, error: (err as Error).message });
        return false;
      }
    };
    const stored = await step('put', async () => void (await this.send('PUT', key, { body: content })));
    await step('get', async () => {
      const text = (await this.send('GET', key, {})).text;
      if (text !== content) throw new Error(`read back ${text.length} bytes that differ from the ${content.length} written`);
    });
    await step('list', async () => {
      const xml = (await this.send('GET', '', { query: { 'list-type': '2', prefix: key, 'max-keys': '1' } })).text;
      if (stored && xmlOne(xml, 'Key') !== key) throw new Error('the probe object written is not in the listing');
    });
    await step('delete', async () => {
      await this.send('DELETE', key, {});
      if ((await this.send('HEAD', key, { accept: [404] })).status !== 404) throw new Error('the probe object is still there after delete');
    });
    return out;
  }

  private async createMultipartUpload(objectKey: string, signal?: AbortSignal): Promise<string> {
    const a = await this.send('POST', objectKey, { query: { uploads: '' }, signal });
    const id = xmlOne(a.text, 'UploadId');
    if (!id) throw new StorageUnavailableError(`S3 CreateMultipartUpload of ${objectKey} returned no UploadId`);
    return id;
  }

  private async completeMultipartUpload(
    objectKey: string,
    uploadId: string,
    etags: string[],
    size: number,
    signal?: AbortSignal,
  ): Promise<void> {
    const xml = `<CompleteMultipartUpload>${etags.map((e, i) => `<Part><PartNumber>${i + 1}</PartNumber><ETag>${escapeXml(e)}</ETag></Part>`).join('')}</CompleteMultipartUpload>`;
    try {
      // Assembling large objects can take a while on the server side.
      await this.send('POST', objectKey, { query: { uploadId }, body: xml, signal, timeoutMs: this.partTimeoutMs });
    } catch (err) {
      // A try whose answer was lost completed the upload: the retry finds it gone and the object whole.
      if (!(err instanceof StorageUnavailableError && err.code === 'NoSuchUpload')) throw err;
      const stored = await this.send('HEAD', objectKey, { accept: [404], signal });
      if (stored.status === 404 || Number(stored.headers.get('content-length')) !== size) throw err;
    }
  }

  private async abortMultipartUpload(objectKey: string, uploadId: string): Promise<boolean> {
    const a = await this.send('DELETE', objectKey, { query: { uploadId }, accept: [404] });
    return a.status !== 404;
  }

  /** A host (or a NAS) whose clock is off gets every request refused: the next ones are signed at the store's time. */
  private learnClock(serverTime: string | null, failure: StorageUnavailableError): void {
    const at = serverTime ? Date.parse(serverTime) : Number.NaN;
    if (Number.isNaN(at)) return;
    this.clockOffsetMs = at - Date.now();
    failure.message += ` (the store's clock is ${seconds(Math.abs(this.clockOffsetMs))} s ${this.clockOffsetMs > 0 ? 'ahead of' : 'behind'} this server's: check the time on both)`;
  }

  /**
   * One signed request, retried (idempotent calls only reach here) on 5xx, 429/SlowDown or a dropped
   * connection while its timeout, which covers every try, lasts. An error answer, after the retries, is a
   * StorageUnavailableError with the service's code and message; the statuses in `accept` are returned instead.
   */
  private async send(method: string, objectKey: string, o: SendOptions): Promise<Answer> {
    const path = this.keyPath + uriEncode(objectKey, true);
    const query = o.query ?? {};
    const search = Object.entries(query)
      .map(([k, v]) => (v === '' ? uriEncode(k) : `${uriEncode(k)}=${uriEncode(v)}`))
      .join('&');
    const url = `${this.origin}${path}${search ? `?${search}` : ''}`;
    const body = typeof o.body === 'string' ? Buffer.from(o.body) : o.body;
    const payloadHash =
      body === undefined ? EMPTY_SHA256 : !(body instanceof Blob) && body.byteLength < 64 * 1024 ? sha256Hex(body) : UNSIGNED_PAYLOAD;
    const streamed = body instanceof Uint8Array && body.byteLength >= STREAMED_BODY ? body : null;
    const timeoutMs = o.timeoutMs ?? this.timeoutMs;
    const attempts = o.attempts ?? this.attempts;
    const deadline = performance.now() + timeoutMs;
    const what = `S3 ${method} ${objectKey || `bucket ${this.opts.bucket}`}${query.uploads !== undefined ? ' (multipart uploads)' : ''}`;
    for (let attempt = 0; ; attempt++) {
      o.signal?.throwIfAborted();
      const date = new Date(Date.now() + this.clockOffsetMs);
      const headers = signRequest(this.creds, { method, host: this.host, path, query, headers: o.headers ?? {}, payloadHash, date });
      const timer = new AbortController();
      let timedOut = false;
      const clock = setTimeout(
        () => {
          timedOut = true;
          timer.abort(new StorageUnavailableError(`${what}: no answer within ${seconds(timeoutMs)} s`, 'Timeout'));
        },
        Math.max(0, deadline - performance.now()),
      );
      let failure: StorageUnavailableError;
      let retryAfter: string | null = null;
      try {
        const res = await fetch(url, {
          method,
          headers: streamed ? { ...headers, 'content-length': String(streamed.byteLength) } : headers,
          body: streamed ? streamOf(streamed) : body,
          signal: o.signal ? AbortSignal.any([o.signal, timer.signal]) : timer.signal,
          redirect: 'manual',
        });
        const ok = res.ok || o.accept?.includes(res.status);
        if (ok && o.stream && res.body) {
          clearTimeout(clock);
          return { status: res.status, headers: res.headers, text: '', body: guardSilence(res.body, timer, timeoutMs, what) };
        }
        const text = method === 'HEAD' ? '' : await res.text();
        clearTimeout(clock);
        // CopyObject and CompleteMultipartUpload can fail after answering 200.
        const embedded = res.ok && /^\s*(<\?xml[^>]*>\s*)?<Error>/.test(text);
        if (ok && !embedded) return { status: res.status, headers: res.headers, text, body: null };
        let code = xmlOne(text, 'Code');
        // A HEAD's 403 has no body to name RequestTimeTooSkewed: the store's Date header tells whether the clocks are apart.
        if (code === null && res.status === 403 && clocksApart(res.headers.get('date'), date)) code = 'RequestTimeTooSkewed';
        code ??= res.status === 404 ? 'NotFound' : res.status === 403 ? 'AccessDenied' : null;
        const message = xmlOne(text, 'Message') ?? res.statusText;
        if (res.status === 404 && (code === 'NoSuchKey' || code === 'NotFound') && method !== 'HEAD' && !o.accept?.includes(404)) {
          throw new StorageNotFoundError(objectKey.slice(this.opts.prefix.length));
        }
        const Failure = notImplemented(res.status, code) ? StorageCallNotImplementedError : StorageUnavailableError;
        failure = new Failure(`${what}: ${res.status}${code ? ` ${code}` : ''}${message ? `: ${message}` : ''}`, code, res.status);
        retryAfter = res.headers.get('retry-after');
        if (code === 'RequestTimeTooSkewed') this.learnClock(xmlOne(text, 'ServerTime') ?? res.headers.get('date'), failure);
        if (!retryable(embedded ? 500 : res.status, code)) throw failure;
      } catch (err) {
        clearTimeout(clock);
        if (err instanceof StorageNotFoundError || (err instanceof StorageUnavailableError && err.status !== null)) throw err;
        if (o.signal?.aborted) throw o.signal.reason;
        failure = timedOut
          ? (timer.signal.reason as StorageUnavailableError)
          : new StorageUnavailableError(`${what}: cannot reach ${this.origin} (${networkReason(err)})`, 'NetworkError');
      }
      const wait = backoff(attempt, retryAfter);
      if (attempt + 1 >= attempts || performance.now() + wait >= deadline) throw failure;
      await Bun.sleep(wait);
    }
  }
}

const seconds = (ms: number) => Math.round(ms / 100) / 10;

/** S3 refuses a request signed more than 15 minutes off its clock. */
const MAX_SKEW_MS = 15 * 60_000;

function clocksApart(storeDate: string | null, signedAt: Date): boolean {
  const at = storeDate ? Date.parse(storeDate) : Number.NaN;
  return !Number.isNaN(at) && Math.abs(at - signedAt.getTime()) > MAX_SKEW_MS;
}

/** `bytes` as a body read a piece at a time when the socket takes it, with no copy; each try of a request gets its own. */
function streamOf(bytes: Uint8Array): ReadableStream<Uint8Array> {
  let at = 0;
  return new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (at >= bytes.byteLength) return controller.close();
        controller.enqueue(bytes.subarray(at, at + STREAM_PIECE));
        at += STREAM_PIECE;
      },
    },
    { highWaterMark: 0 },
  );
}

/**
 * A response body that fails with StorageUnavailableError when the service goes silent for `ms`: one
 * timer, pushed back on every chunk, aborts the request.
 */
function guardSilence(body: ReadableStream<Uint8Array>, request: AbortController, ms: number, what: string): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  const stalled = () => request.abort(new StorageUnavailableError(`${what}: the download stalled for ${seconds(ms)} s`, 'Timeout'));
  let watchdog: ReturnType<typeof setTimeout> | null = null;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        if (watchdog) watchdog.refresh();
        else watchdog = setTimeout(stalled, ms);
        try {
          const r = await reader.read();
          if (r.done) {
            clearTimeout(watchdog);
            controller.close();
          } else controller.enqueue(r.value);
        } catch (err) {
          clearTimeout(watchdog);
          const reason: unknown = request.signal.aborted ? request.signal.reason : err;
          throw reason instanceof StorageUnavailableError
            ? reason
            : new StorageUnavailableError(`${what}: the download broke off (${networkReason(err)})`, 'NetworkError');
        }
      },
      cancel(reason) {
        if (watchdog) clearTimeout(watchdog);
        return reader.cancel(reason);
      },
    },
    { highWaterMark: 0 },
  );
}

/**
 * The one line `coffer serve` prints when the bucket cannot be used, naming the setting to fix.
 */
export function describeAccessFailure(err: unknown, o: Pick<S3DriverOptions, 'bucket' | 'endpoint' | 'region' | 'accessKeyId'>): string {
  const e = err as StorageUnavailableError;
  const at = o.endpoint ?? `AWS (region ${o.region})`;
  // A store that is down or overloaded: nothing in the settings is wrong.
  if (e.status !== null && e.status !== 501 && (e.status >= 500 || e.status === 429)) {
    return `S3_ENDPOINT: ${at} is not answering requests to bucket "${o.bucket}" right now (${e.message.replace(/^.*?: /, '')}); start Coffer again once it does`;
  }
  switch (e.code) {
    case 'NoSuchBucket':
      return `S3_BUCKET: bucket "${o.bucket}" does not exist at ${at}; create it first or fix S3_BUCKET`;
    case 'InvalidAccessKeyId':
      return `S3_ACCESS_KEY_ID: ${at} does not know the access key "${o.accessKeyId}"`;
    case 'SignatureDoesNotMatch':
      return `S3_SECRET_ACCESS_KEY: ${at} rejected the secret key for access key "${o.accessKeyId}" (check S3_SECRET_ACCESS_KEY or S3_SECRET_ACCESS_KEY_FILE)`;
    case 'AccessDenied':
      return `S3_ACCESS_KEY_ID/S3_SECRET_ACCESS_KEY: access to bucket "${o.bucket}" at ${at} was denied; the key needs list, read, write and delete on it`;
    case 'AuthorizationHeaderMalformed':
    case 'PermanentRedirect':
    case 'IllegalLocationConstraintException':
      return `S3_REGION: bucket "${o.bucket}" is not in region "${o.region}" (${e.message})`;
    case 'NetworkError':
    case 'Timeout':
      return `S3_ENDPOINT: cannot reach ${at}: ${e.message.replace(/^.*?: /, '')}`;
    default:
      return `S3_BUCKET: bucket "${o.bucket}" at ${at} cannot be used: ${e.message}`;
  }
}
