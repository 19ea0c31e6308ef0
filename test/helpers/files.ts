import fs from 'node:fs';
import { S3Driver } from '../../src/storage/s3.ts';
import { testS3Of } from './s3.ts';
import path from 'node:path';
import { inflateRawSync } from 'node:zlib';
import { json, type TestClient } from './client.ts';
import type { TestServer } from './server.ts';
import { newId } from '../../src/lib/ids.ts';

export interface UploadOptions {
  parentId?: string;
  type?: string;
  lastModified?: string;
}

/** POST /api/files/upload with one file; returns the response (not yet read). */
export function uploadRaw(client: TestClient, name: string, content: string | Uint8Array, opts: UploadOptions = {}): Promise<Response> {
  const form = new FormData();
  if (opts.parentId) form.append('parentId', opts.parentId);
  if (opts.lastModified !== undefined) form.append('lastModifiedTimes', opts.lastModified);
  form.append('file', new File([content], name, { type: opts.type ?? 'application/octet-stream' }));
  return client.request('/api/files/upload', { method: 'POST', body: form });
}

/** Uploads one file and returns the created item; fails the test on any other status. */
export async function upload(client: TestClient, name: string, content: string | Uint8Array, opts: UploadOptions = {}): Promise<any> {
  const res = await uploadRaw(client, name, content, opts);
  if (res.status !== 200) throw new Error(`upload of ${name} failed: ${res.status} ${await res.text()}`);
  return json(res);
}

export async function folder(client: TestClient, name: string, parentId?: string): Promise<any> {
  const res = await client.post('/api/files/folder', { name, parentId });
  if (res.status !== 200) throw new Error(`folder ${name} failed: ${res.status} ${await res.text()}`);
  return json(res);
}

/** Every item of a list endpoint, following X-Next-Cursor. */
export async function listAll(client: TestClient, pathAndQuery: string): Promise<any[]> {
  const out: any[] = [];
  let cursor: string | null = null;
  for (;;) {
    const sep = pathAndQuery.includes('?') ? '&' : '?';
    const res = await client.get(cursor ? `${pathAndQuery}${sep}cursor=${encodeURIComponent(cursor)}` : pathAndQuery);
    if (res.status !== 200) throw new Error(`${pathAndQuery}: ${res.status} ${await res.text()}`);
    out.push(...(await json<any[]>(res)));
    cursor = res.headers.get('x-next-cursor');
    if (!cursor) return out;
  }
}

/** A file's whole content through GET /download, which must answer 200. */
export async function downloaded(client: TestClient, id: string): Promise<Buffer> {
  const res = await client.get(`/api/files/${id}/download`);
  if (res.status !== 200) throw new Error(`download of ${id} answered ${res.status}: ${await res.text()}`);
  return Buffer.from(await res.arrayBuffer());
}

/** Stored objects under `<dataDir>/blobs` (published ones, and temp files separately). */
export function blobFiles(dataDir: string): { objects: string[]; temp: string[] } {
  const root = path.join(dataDir, 'blobs');
  const objects: string[] = [];
  const temp = fs.existsSync(path.join(root, '.tmp')) ? fs.readdirSync(path.join(root, '.tmp')) : [];
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      if (e.name === '.tmp') continue;
      if (e.isDirectory()) walk(path.join(dir, e.name));
      else objects.push(e.name);
    }
  };
  if (fs.existsSync(root)) walk(root);
  return { objects, temp };
}

/** Keys of every stored object, through the server's own driver (local disk or bucket alike). */
export async function storedKeys(t: TestServer): Promise<string[]> {
  const keys: string[] = [];
  for await (const o of t.server.ctx.driver.list()) keys.push(o.key);
  return keys;
}

/**
 * What the server's storage holds: published objects and unfinished writes (temp files on local disk,
 * incomplete multipart uploads in a bucket), so "nothing stays behind" is checked on either driver.
 */
export function storedObjectFiles(t: TestServer): { objects: string[]; temp: string[] } {
  const driver = t.server.ctx.driver;
  if (!(driver instanceof S3Driver)) return blobFiles(t.dataDir);
  const s3 = testS3Of(driver);
  return { objects: s3.objectKeys(driver.opts.prefix), temp: s3.incompleteUploads(driver.opts.prefix).map((u) => u.uploadId) };
}

export function rowCount(t: TestServer, where = '1 = 1', ...params: string[]): number {
  return t.server.ctx.db.$client.query<{ n: number }, string[]>(`SELECT COUNT(*) AS n FROM items WHERE ${where}`).get(...params)!.n;
}

/** Inserts many rows straight through the repository (big folders without HTTP uploads). */
export function seedRows(
  t: TestServer,
  accountId: string,
  parentId: string | null,
  count: number,
  make: (i: number) => {
    name: string;
    type?: 'file' | 'folder';
    size?: number;
    mimeType?: string;
    modifiedAt?: number;
    accessedAt?: number;
  } = (i) => ({
    name: `item-${i}`,
  }),
): string[] {
  const ctx = t.server.ctx;
  const repo = ctx.repos.items;
  const now = ctx.clock.now();
  const ids: string[] = [];
  ctx.db.$client.transaction(() => {
    for (let i = 0; i < count; i++) {
      const m = make(i);
      const row = repo.insert({
        id: newId(),
        accountId,
        parentId,
        type: m.type ?? 'file',
        name: m.name,
        size: m.type === 'folder' ? 0 : (m.size ?? 0),
        mimeType: m.type === 'folder' ? null : (m.mimeType ?? 'text/plain'),
        storageKey: null,
        wrappedKey: null,
        keyId: null,
        starred: false,
        modifiedAt: m.modifiedAt ?? now,
        accessedAt: m.accessedAt ?? now,
        createdAt: now,
      });
      ids.push(row.id);
    }
  })();
  return ids;
}

export interface ZipEntryInfo {
  name: string;
  data: Buffer;
}

/** Reads a ZIP through its central directory (stored and deflated entries, no ZIP64 needed in tests). */
export function readZip(buf: Buffer): ZipEntryInfo[] {
  let eocd = -1;
  for (let i = buf.length - 22; i >= Math.max(0, buf.length - 65_557); i--) {
    if (buf.readUInt32LE(i) === 0x06054b50) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) throw new Error('no end of central directory record');
  const count = buf.readUInt16LE(eocd + 10);
  let p = buf.readUInt32LE(eocd + 16);
  const entries: ZipEntryInfo[] = [];
  for (let n = 0; n < count; n++) {
    if (buf.readUInt32LE(p) !== 0x02014b50) throw new Error('bad central directory entry');
    const method = buf.readUInt16LE(p + 10);
    const compressed = buf.readUInt32LE(p + 20);
    const nameLen = buf.readUInt16LE(p + 28);
    const extraLen = buf.readUInt16LE(p + 30);
    const commentLen = buf.readUInt16LE(p + 32);
    const local = buf.readUInt32LE(p + 42);
    const name = buf.subarray(p + 46, p + 46 + nameLen).toString('utf8');
    const dataStart = local + 30 + buf.readUInt16LE(local + 26) + buf.readUInt16LE(local + 28);
    const raw = buf.subarray(dataStart, dataStart + compressed);
    entries.push({ name, data: method === 8 ? inflateRawSync(raw) : Buffer.from(raw) });
    p += 46 + nameLen + extraLen + commentLen;
  }
  return entries;
}

/** How long a read waits for a message by default: it fails only one that never comes (3 s can be short on a loaded machine). */
const WAIT_FOR_EVENT_MS = 10_000;

/** Reads Server-Sent Event messages from a response body. */
export class SseReader {
  private readonly reader: { read(): Promise<{ done: boolean; value?: Uint8Array }>; cancel(): Promise<void> };
  private buffer = '';
  private readonly decoder = new TextDecoder();
  // A read left pending by a timeout is reused, so no chunk is ever dropped.
  private pending: Promise<{ done: boolean; value?: Uint8Array }> | null = null;

  constructor(res: Response) {
    this.reader = res.body!.getReader();
  }

  /** The next message block (data lines or a comment), waiting at most `ms`. */
  async next(ms = WAIT_FOR_EVENT_MS): Promise<string> {
    const deadline = Date.now() + ms;
    for (;;) {
      const end = this.buffer.indexOf('\n\n');
      if (end >= 0) {
        const block = this.buffer.slice(0, end);
        this.buffer = this.buffer.slice(end + 2);
        return block;
      }
      const left = deadline - Date.now();
      if (left <= 0) throw new Error('no SSE message in time');
      this.pending ??= this.reader.read();
      // A timeout, not a wait: the next chunk ends it first.
      const chunk = await Promise.race([this.pending, Bun.sleep(left).then(() => null)]);
      if (chunk === null) throw new Error('no SSE message in time');
      this.pending = null;
      if (chunk.done) throw new Error('SSE stream ended');
      this.buffer += this.decoder.decode(chunk.value!, { stream: true });
    }
  }

  /** The next `data:` message as JSON (comments skipped). */
  async nextData(ms = WAIT_FOR_EVENT_MS): Promise<any> {
    for (;;) {
      const block = await this.next(ms);
      // A change's `id:` line follows its `data:` line.
      if (block.startsWith('data: ')) return JSON.parse(block.split('\n')[0]!.slice(6));
    }
  }

  /** The next message with its `id:` and `event:` fields (comments skipped). */
  async nextEvent(ms = WAIT_FOR_EVENT_MS): Promise<{ data: any; id?: string; event?: string }> {
    for (;;) {
      const block = await this.next(ms);
      if (block.startsWith(':')) continue;
      const out: { data: any; id?: string; event?: string } = { data: undefined };
      for (const line of block.split('\n')) {
        const colon = line.indexOf(': ');
        const [field, value] = [line.slice(0, colon), line.slice(colon + 2)];
        if (field === 'data') out.data = JSON.parse(value);
        else if (field === 'id' || field === 'event') out[field] = value;
      }
      return out;
    }
  }

  /** Every event until the stream is quiet for `quietMs`: id, type and data. */
  async untilQuiet(quietMs = 500): Promise<Array<{ id?: string; type: string; data: any }>> {
    const out = [];
    for (;;) {
      const next = await this.nextEvent(quietMs).catch(() => null);
      if (!next) return out;
      out.push({ id: next.id, type: next.data.type, data: next.data.data });
    }
  }

  /** Resolves with true if nothing but comments arrives within `ms`. */
  async quietFor(ms: number): Promise<boolean> {
    try {
      await this.nextData(ms);
      return false;
    } catch {
      return true;
    }
  }

  async close(): Promise<void> {
    await this.reader.cancel().catch(() => {});
  }
}

/**
 * A chain of `levels` folders named `d` below `parentId`, written straight into the table (through the repository
 * each insert marks every folder above it, quadratic in a chain, and the depth limit refuses it); the deepest id.
 */
export function folderChain(t: TestServer, accountId: string, parentId: string, levels: number): string {
  const db = t.server.ctx.db.$client;
  const insert = db.query(
    "INSERT INTO items (id, account_id, parent_id, type, name, name_key, modified_at, accessed_at, created_at) VALUES (?, ?, ?, 'folder', 'd', 'd', 0, 0, 0)",
  );
  let parent = parentId;
  db.transaction(() => {
    for (let i = 0; i < levels; i++) {
      const id = newId();
      insert.run(id, accountId, parent);
      parent = id;
    }
  })();
  return parent;
}

/**
 * Runs `run` with `object[method]` (of the server running in this process) watched for the deepest call stack it is
 * called from, in frames; puts it back after. A walk that recurses per level shows as a stack growing with the depth.
 */
export async function deepestCallStack<T extends object, K extends keyof T>(
  object: T,
  method: K,
  run: () => Promise<void>,
): Promise<number> {
  const original = object[method] as (...args: unknown[]) => unknown;
  const { stackTraceLimit } = Error;
  let deepest = 0;
  Error.stackTraceLimit = Number.POSITIVE_INFINITY;
  object[method] = ((...args: unknown[]) => {
    deepest = Math.max(deepest, new Error().stack!.split('\n').length);
    return original.apply(object, args);
  }) as T[K];
  try {
    await run();
  } finally {
    object[method] = original as T[K];
    Error.stackTraceLimit = stackTraceLimit;
  }
  return deepest;
}

/** A 2,000-byte upload body that sends its first 1,000 bytes and holds the rest until `release()`: another door acts meanwhile. */
export function heldBody(): { body: ReadableStream<Uint8Array>; release: () => void } {
  let release!: () => void;
  const body = new ReadableStream<Uint8Array>({
    async start(c) {
      c.enqueue(new Uint8Array(1000));
      await new Promise<void>((r) => (release = r));
      c.enqueue(new Uint8Array(1000));
      c.close();
    },
  });
  return { body, release: () => release() };
}
