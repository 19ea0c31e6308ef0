import { createCipheriv, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import path from 'node:path';
import { SEGMENT, segmentNonce } from './bare-seal.ts';

/**
 * The tus bench's bare reference, compiled with `bun build --compile` as Coffer is: a Bun server doing only
 * the work a 1 GiB upload cannot avoid with Coffer's durability, by multipart or by tus, so the two are
 * compared with no Coffer code in either. Both seal the plaintext in 64 KiB AES-256-GCM segments and write
 * it in 1 MiB vectored writes, one in flight while the next gathers, as Coffer does.
 * - `POST /upload` (multipart, one part): the part's bytes streamed out of the form, written to a new file,
 *   a data sync started behind every 64 MiB (one at a time), the file synced, its folder synced, answered.
 * - `POST /tus` (`Upload-Length`): a staged file made and its folder synced; 201 with `Location`.
 * - `PATCH /tus/<id>` (`Upload-Offset` where it stands, else 409): the staged file opened, the body sealed
 *   onto it at the offset and written, the file closed, 204 with the new `Upload-Offset`. As in Coffer the
 *   disk is synced behind the answers once 64 MiB are not yet synced, one sync at a time, and the completing
 *   PATCH waits for it, syncs the file, renames it into place and syncs that folder before it answers. A
 *   segment not yet full at a PATCH's end is kept in memory (Coffer seals it into its database).
 * - `HEAD /tus/<id>`: `Upload-Offset` and `Upload-Length`.
 * No auth, no database, no checks beyond the offset. Run as `bare-tus serve --port <port> --host 127.0.0.1
 * --data-dir <dir>`, as `coffer serve` is started.
 */
const TAG = 16;
const BATCH = 1024 * 1024;
const SYNC_EVERY = 64 * 1024 * 1024;
const arg = (name: string) => process.argv[process.argv.indexOf(name) + 1]!;
const root = arg('--data-dir');
const staging = path.join(root, 'staging');
const stored = path.join(root, 'stored');
fs.mkdirSync(staging, { recursive: true });
fs.mkdirSync(stored, { recursive: true });
const key = randomBytes(32);
let n = 0;

interface Upload {
  file: string;
  length: number;
  offset: number;
  /** The plaintext of a segment not yet full. */
  tail: Buffer | null;
  syncedTo: number;
  /** The sync running behind the answers, and how far it reaches. */
  syncing: { upTo: number; done: Promise<void> } | null;
  prefix: Buffer;
}
const uploads = new Map<string, Upload>();

async function syncDir(dir: string): Promise<void> {
  const handle = await fsp.open(dir, 'r');
  await handle.sync();
  await handle.close();
}

async function dataSync(file: string): Promise<void> {
  const handle = await fsp.open(file, 'r+');
  await handle.datasync();
  await handle.close();
}

/** Frees the memory behind `chunk` when it is the only view of its buffer (a body's chunk, a cipher's output). */
function release(chunk: Uint8Array): void {
  const { buffer } = chunk;
  if (buffer instanceof ArrayBuffer && !buffer.detached && chunk.byteOffset === 0 && chunk.byteLength >= buffer.byteLength - 1)
    buffer.transfer(0);
}

/**
 * Seals `body` in segments from segment `first` on (after `start`, the plaintext of that segment received
 * before) and writes them at their place in 1 MiB vectored writes of whole segments, one in flight while
 * the next gathers; a last segment not yet full is returned when `keepPartial` (a nonce must not seal two
 * plaintexts), else sealed and written. `everyWrite` runs as each write starts, with the bytes written so far.
 */
async function sealAndWrite(
  handle: fsp.FileHandle,
  body: AsyncIterable<Uint8Array>,
  prefix: Buffer,
  opts: { first: number; start: Buffer | null; keepPartial: boolean; everyWrite?: (written: number) => void },
): Promise<{ received: number; partial: Buffer | null }> {
  const seg = Buffer.allocUnsafe(SEGMENT);
  let filled = opts.start?.copy(seg) ?? 0;
  let index = opts.first;
  let position = index * (SEGMENT + TAG);
  const at = position;
  let received = 0;
  let batch: Uint8Array[] = [];
  let batchBytes = 0;
  let writing: Promise<unknown> = Promise.resolve();
  const seal = (plain: Buffer) => {
    const c = createCipheriv('aes-256-gcm', key, segmentNonce(prefix, index++));
    batch.push(c.update(plain));
    c.final();
    batch.push(c.getAuthTag());
    batchBytes += plain.byteLength + TAG;
  };
  const flush = async () => {
    await writing;
    const bytes = batchBytes;
    const pieces = batch;
    writing = handle.writev(pieces, position).then(({ bytesWritten }) => {
      if (bytesWritten !== bytes) throw new Error('short write');
      // Freed at once, as Coffer frees what it wrote, rather than left to the collector.
      for (const piece of pieces) release(piece);
    });
    position += bytes;
    batch = [];
    batchBytes = 0;
    opts.everyWrite?.(position - at);
  };
  for await (const chunk of body) {
    received += chunk.byteLength;
    for (let off = 0; off < chunk.byteLength; ) {
      const n = Math.min(SEGMENT - filled, chunk.byteLength - off);
      seg.set(chunk.subarray(off, off + n), filled);
      filled += n;
      off += n;
      if (filled === SEGMENT) {
        seal(seg);
        filled = 0;
        if (batchBytes >= BATCH) await flush();
      }
    }
    release(chunk);
  }
  const partial = filled > 0 && opts.keepPartial ? Buffer.from(seg.subarray(0, filled)) : null;
  if (filled > 0 && !opts.keepPartial) seal(seg.subarray(0, filled));
  if (batchBytes > 0) await flush();
  await writing;
  return { received, partial };
}

/** The single file part of a multipart body: the bytes between its headers and the closing delimiter. */
async function* filePart(body: ReadableStream<Uint8Array>, boundary: string): AsyncGenerator<Uint8Array> {
  const delimiter = Buffer.from(`\r\n--${boundary}`);
  const keep = delimiter.length - 1;
  let head: Buffer | null = Buffer.alloc(0);
  let carry = Buffer.alloc(0);
  let done = false;
  for await (const chunk of body) {
    try {
      if (done) continue;
      let c = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
      if (head) {
        head = Buffer.concat([head, c]);
        const end = head.indexOf('\r\n\r\n');
        if (end < 0) continue;
        c = head.subarray(end + 4);
        head = null;
      }
      if (carry.length > 0) {
        // A delimiter that starts in what was held back ends within the chunk's first bytes.
        const junction = Buffer.concat([carry, c.subarray(0, keep)]);
        const at = junction.indexOf(delimiter);
        if (at >= 0) {
          if (at > 0) yield junction.subarray(0, at);
          done = true;
          continue;
        }
        if (c.length < keep) {
          carry = junction;
          continue;
        }
        yield carry;
      }
      const at = c.indexOf(delimiter);
      if (at >= 0) {
        if (at > 0) yield c.subarray(0, at);
        done = true;
        continue;
      }
      const cut = Math.max(0, c.length - keep);
      if (cut > 0) yield c.subarray(0, cut);
      carry = Buffer.from(c.subarray(cut));
    } finally {
      // Its bytes were copied into a segment before the next was asked for.
      release(chunk);
    }
  }
  if (!done) throw new Error('the form has no closing delimiter');
}

async function multipart(req: Request): Promise<Response> {
  const boundary = /boundary=(?:"([^"]+)"|([^;]+))/.exec(req.headers.get('content-type') ?? '');
  if (!boundary) return new Response('no boundary', { status: 400 });
  const dir = path.join(stored, String(n % 256));
  await fsp.mkdir(dir, { recursive: true });
  const file = path.join(dir, String(n++));
  const handle = await fsp.open(file, 'wx', 0o600);
  let syncedTo = 0;
  let syncing: Promise<void> | null = null;
  await sealAndWrite(handle, filePart(req.body!, boundary[1] ?? boundary[2]!), randomBytes(8), {
    first: 0,
    start: null,
    keepPartial: false,
    everyWrite: (written) => {
      if (syncing || written - syncedTo < SYNC_EVERY) return;
      syncedTo = written;
      syncing = handle.datasync().finally(() => {
        syncing = null;
      });
    },
  });
  await syncing;
  await handle.sync();
  await handle.close();
  await syncDir(dir);
  return Response.json({ stored: 1 });
}

async function create(req: Request): Promise<Response> {
  const length = Number(req.headers.get('upload-length'));
  if (!Number.isSafeInteger(length) || length <= 0) return new Response(null, { status: 400 });
  const id = String(n++);
  const file = path.join(staging, id);
  await (await fsp.open(file, 'wx', 0o600)).close();
  await syncDir(staging);
  uploads.set(id, { file, length, offset: 0, tail: null, syncedTo: 0, syncing: null, prefix: randomBytes(8) });
  return new Response(null, { status: 201, headers: { 'Tus-Resumable': '1.0.0', Location: `/tus/${id}`, 'Upload-Offset': '0' } });
}

/** Starts syncing `u` behind the answers unless a sync runs or fewer than SYNC_EVERY bytes would become durable. */
function syncBehind(u: Upload): void {
  if (u.syncing || u.offset - u.syncedTo < SYNC_EVERY) return;
  const s = { upTo: u.offset, done: dataSync(u.file) };
  u.syncing = s;
  void s.done.then(() => {
    u.syncedTo = Math.max(u.syncedTo, s.upTo);
    u.syncing = null;
  });
}

async function append(id: string, req: Request): Promise<Response> {
  const u = uploads.get(id);
  if (!u) return new Response(null, { status: 404 });
  if (Number(req.headers.get('upload-offset')) !== u.offset) return new Response(null, { status: 409 });
  const first = Math.floor(u.offset / SEGMENT);
  // A PATCH that ends the upload seals its last segment whole or not.
  const keepPartial = u.offset + Number(req.headers.get('content-length')) < u.length;
  const handle = await fsp.open(u.file, 'r+');
  try {
    const { received, partial } = await sealAndWrite(handle, req.body!, u.prefix, { first, start: u.tail, keepPartial });
    u.offset += received;
    u.tail = partial;
  } finally {
    await handle.close();
  }
  const headers: Record<string, string> = { 'Tus-Resumable': '1.0.0', 'Upload-Offset': String(u.offset) };
  if (u.offset < u.length) {
    syncBehind(u);
    return new Response(null, { status: 204, headers });
  }
  await u.syncing?.done;
  await dataSync(u.file);
  const dir = path.join(stored, String(Number(id) % 256));
  await fsp.mkdir(dir, { recursive: true });
  await fsp.rename(u.file, path.join(dir, id));
  await syncDir(dir);
  uploads.delete(id);
  return new Response(null, { status: 204, headers: { ...headers, 'Upload-Item-Id': id } });
}

Bun.serve({
  port: Number(arg('--port')),
  hostname: arg('--host'),
  maxRequestBodySize: 4 * 1024 ** 3,
  // Coffer's default: Bun's own 10 s cut a PATCH off at load 18.
  idleTimeout: 30,
  async fetch(req) {
    const { pathname } = new URL(req.url);
    if (req.method === 'GET') return new Response('ok');
    if (req.method === 'POST' && pathname === '/upload') return multipart(req);
    if (req.method === 'POST' && pathname === '/tus') return create(req);
    const id = pathname.startsWith('/tus/') ? pathname.slice(5) : '';
    if (req.method === 'PATCH') return append(id, req);
    const u = uploads.get(id);
    if (req.method === 'HEAD' && u) {
      return new Response(null, {
        headers: { 'Tus-Resumable': '1.0.0', 'Upload-Offset': String(u.offset), 'Upload-Length': String(u.length) },
      });
    }
    return new Response(null, { status: 404 });
  },
});
