import fs from 'node:fs';
import { randomBytes } from 'node:crypto';
import type { AppContext } from '../../src/context.ts';
import { newId } from '../../src/lib/ids.ts';
import { newStorageKey } from '../../src/storage/keys.ts';
import { objectFileOf, writeObjectFile } from './s3.ts';

/**
 * File rows and stored objects written behind the server's back, the way the files area will write
 * them (object first, then the row and the usage counter in one transaction), for operations tests.
 */
export interface StoredFile {
  id: string;
  name: string;
  storageKey: string;
  size: number;
  content: Buffer;
}

interface RowOptions {
  name?: string;
  parentId?: string | null;
  createdAt?: number;
  deletedAt?: number | null;
}

async function* once(bytes: Uint8Array): AsyncGenerator<Uint8Array> {
  yield bytes;
}

function insertItem(
  ctx: AppContext,
  accountId: string,
  row: {
    id: string;
    type: 'file' | 'folder';
    name: string;
    size: number;
    storageKey: string | null;
    wrappedKey: string | null;
    keyId: string | null;
  } & RowOptions,
): void {
  const now = row.createdAt ?? ctx.clock.now();
  ctx.db.$client
    .query(
      `INSERT INTO items (id, account_id, parent_id, type, name, name_key, size, mime_type, storage_key, wrapped_key, key_id, modified_at, accessed_at, created_at, deleted_at, deleted_root_id)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    )
    .run(
      row.id,
      accountId,
      row.parentId ?? null,
      row.type,
      row.name,
      row.name.toLowerCase(),
      row.size,
      row.type === 'file' ? 'application/octet-stream' : null,
      row.storageKey,
      row.wrappedKey,
      row.keyId,
      now,
      now,
      now,
      row.deletedAt ?? null,
      row.deletedAt ? row.id : null,
    );
}

/** A real encrypted file: sealed object, item row, usage counter. */
export async function storeFile(
  ctx: AppContext,
  accountId: string,
  opts: RowOptions & { size?: number; content?: Buffer } = {},
): Promise<StoredFile> {
  const content = opts.content ?? randomBytes(opts.size ?? 1024);
  const storageKey = newStorageKey();
  const sealed = await ctx.storage.put(storageKey, once(content));
  const id = newId();
  const name = opts.name ?? `file-${id}.bin`;
  ctx.db.$client.transaction(() => {
    insertItem(ctx, accountId, {
      ...opts,
      id,
      type: 'file',
      name,
      size: sealed.size,
      storageKey,
      wrappedKey: sealed.wrappedKey,
      keyId: sealed.keyId,
    });
    ctx.services.quota.adjust(accountId, sealed.size);
  })();
  return { id, name, storageKey, size: sealed.size, content };
}

export function folder(ctx: AppContext, accountId: string, name: string, parentId: string | null = null): string {
  const id = newId();
  insertItem(ctx, accountId, { id, type: 'folder', name, size: 0, storageKey: null, wrappedKey: null, keyId: null, parentId });
  return id;
}

/** A file row whose object was never written (or was lost). */
export function rowWithoutObject(
  ctx: AppContext,
  accountId: string,
  opts: RowOptions & { size?: number } = {},
): { id: string; storageKey: string; size: number } {
  const id = newId();
  const storageKey = newStorageKey();
  const size = opts.size ?? 777;
  const wrappedKey = ctx.keyring.wrap(randomBytes(32));
  ctx.db.$client.transaction(() => {
    insertItem(ctx, accountId, {
      ...opts,
      id,
      type: 'file',
      name: opts.name ?? `ghost-${id}.txt`,
      size,
      storageKey,
      wrappedKey,
      keyId: ctx.keyring.current.id,
    });
    ctx.services.quota.adjust(accountId, size);
  })();
  return { id, storageKey, size };
}

/** A stored object no row points at, written directly with the driver. */
export async function strayObject(ctx: AppContext, opts: { ageMs?: number; size?: number } = {}): Promise<string> {
  const key = newStorageKey();
  await ctx.driver.put(key, once(randomBytes(opts.size ?? 100)));
  if (opts.ageMs) ageObject(ctx, key, opts.ageMs);
  return key;
}

/** Moves an object's modification time into the past. */
export function ageObject(ctx: AppContext, key: string, ageMs: number): void {
  const when = new Date(ctx.clock.now() - ageMs);
  fs.utimesSync(objectFileOf(ctx.driver, key), when, when);
}

export async function readBack(ctx: AppContext, id: string): Promise<Buffer> {
  const row = ctx.db.$client
    .query<{ storage_key: string; size: number; wrapped_key: string }, [string]>(
      'SELECT storage_key, size, wrapped_key FROM items WHERE id = ?',
    )
    .get(id)!;
  const stream = await ctx.storage.get(row.storage_key, { size: row.size, wrappedKey: row.wrapped_key });
  return Buffer.from(await new Response(stream).arrayBuffer());
}

export const HOUR = 3600_000;
export const DAY = 24 * HOUR;

/** Many stray objects quickly: raw files in the driver's (or the test S3 server's) layout, no fsync, aged by `ageMs`. */
export function strayObjectsFast(ctx: AppContext, count: number, ageMs: number): string[] {
  const when = new Date(ctx.clock.now() - ageMs);
  return Array.from({ length: count }, () => {
    const key = newStorageKey();
    writeObjectFile(ctx.driver, key, 'x', when);
    return key;
  });
}
