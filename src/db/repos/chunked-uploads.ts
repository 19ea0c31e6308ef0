import type { Database } from 'bun:sqlite';
import type { chunkedUploads, uploadChunks } from '../schema/chunked-uploads.ts';

export type ChunkedUpload = typeof chunkedUploads.$inferSelect;
export type UploadChunk = typeof uploadChunks.$inferSelect;

const UPLOAD = `id, account_id AS accountId, login_id AS loginId, transfer, total_length AS totalLength,
  room_account_id AS roomAccountId, storage_key AS storageKey, wrapped_key AS wrappedKey, key_id AS keyId, header, tail,
  stream_offset AS streamOffset, durable_offset AS durableOffset, last_streamed AS lastStreamed, broken,
  created_at AS createdAt, updated_at AS updatedAt, expires_at AS expiresAt`;

/** bun:sqlite returns blobs as Uint8Array and booleans as numbers; the row type has Buffers and booleans. */
function toRow(raw: ChunkedUpload | null): ChunkedUpload | null {
  if (!raw) return null;
  return {
    ...raw,
    header: raw.header === null ? null : Buffer.from(raw.header),
    tail: raw.tail === null ? null : Buffer.from(raw.tail),
    broken: Boolean(raw.broken),
  };
}
const CHUNK = `upload_id AS uploadId, name, sort_key AS sortKey, size, storage_key AS storageKey,
  wrapped_key AS wrappedKey, created_at AS createdAt`;

/** The SQL of the Nextcloud clients' chunked uploads (`chunked_uploads`, `upload_chunks`). */
export class ChunkedUploadsRepo {
  constructor(private readonly sqlite: Database) {}

  insert(row: ChunkedUpload): void {
    this.sqlite
      .query(
        `INSERT INTO chunked_uploads (id, account_id, login_id, transfer, total_length, room_account_id, storage_key, wrapped_key,
           key_id, header, tail, stream_offset, durable_offset, last_streamed, broken, created_at, updated_at, expires_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        row.id,
        row.accountId,
        row.loginId,
        row.transfer,
        row.totalLength,
        row.roomAccountId,
        row.storageKey,
        row.wrappedKey,
        row.keyId,
        row.header,
        row.tail,
        row.streamOffset,
        row.durableOffset,
        row.lastStreamed,
        row.broken ? 1 : 0,
        row.createdAt,
        row.updatedAt,
        row.expiresAt,
      );
  }

  get(id: string): ChunkedUpload | null {
    return toRow(this.sqlite.query<ChunkedUpload, [string]>(`SELECT ${UPLOAD} FROM chunked_uploads WHERE id = ?`).get(id));
  }

  byTransfer(loginId: string, transfer: string): ChunkedUpload | null {
    return toRow(
      this.sqlite
        .query<ChunkedUpload, [string, string]>(`SELECT ${UPLOAD} FROM chunked_uploads WHERE login_id = ? AND transfer = ?`)
        .get(loginId, transfer),
    );
  }

  /** Records how far the upload's object stands after an append (and the sort key of the chunk that ended there). */
  streamed(id: string, p: { offset: number; durableOffset: number; tail: Uint8Array | null; lastStreamed: string | null }): void {
    this.sqlite
      .query(
        'UPDATE chunked_uploads SET stream_offset = ?, durable_offset = ?, tail = ?, last_streamed = COALESCE(?, last_streamed) WHERE id = ?',
      )
      .run(p.offset, p.durableOffset, p.tail, p.lastStreamed, id);
  }

  markBroken(id: string): void {
    this.sqlite.query('UPDATE chunked_uploads SET broken = 1 WHERE id = ?').run(id);
  }

  /** A chunk that waited as an object of its own is now part of the upload's object. */
  chunkStreamed(uploadId: string, name: string): void {
    this.sqlite
      .query('UPDATE upload_chunks SET storage_key = NULL, wrapped_key = NULL WHERE upload_id = ? AND name = ?')
      .run(uploadId, name);
  }

  /** Bytes reserved against the account's quota by its unfinished chunked uploads that announced their length. */
  reserved(accountId: string): number {
    return this.sqlite
      .query<{ n: number }, [string]>('SELECT COALESCE(SUM(total_length), 0) AS n FROM chunked_uploads WHERE room_account_id = ?')
      .get(accountId)!.n;
  }

  /** The ids of an account's uploads whose size is reserved in another account (`roomAccountId`). */
  reservedIn(accountId: string, roomAccountId: string): string[] {
    return this.sqlite
      .query<{ id: string }, [string, string]>('SELECT id FROM chunked_uploads WHERE account_id = ? AND room_account_id = ?')
      .all(accountId, roomAccountId)
      .map((r) => r.id);
  }

  /** The ids of the uploads whose size is reserved in `roomAccountId`. */
  reservedInAccount(roomAccountId: string): string[] {
    return this.sqlite
      .query<{ id: string }, [string]>('SELECT id FROM chunked_uploads WHERE room_account_id = ?')
      .all(roomAccountId)
      .map((r) => r.id);
  }

  /** Uploads of a login, oldest first. */
  ofLogin(loginId: string, limit: number): ChunkedUpload[] {
    return this.sqlite
      .query<ChunkedUpload, [string, number]>(`SELECT ${UPLOAD} FROM chunked_uploads WHERE login_id = ? ORDER BY created_at LIMIT ?`)
      .all(loginId, limit)
      .map((r) => toRow(r)!);
  }

  touch(id: string, at: number, expiresAt: number): void {
    this.sqlite.query('UPDATE chunked_uploads SET updated_at = ?, expires_at = ? WHERE id = ?').run(at, expiresAt, id);
  }

  delete(id: string): void {
    this.sqlite.query('DELETE FROM chunked_uploads WHERE id = ?').run(id);
  }

  chunks(uploadId: string): UploadChunk[] {
    return this.sqlite
      .query<UploadChunk, [string]>(`SELECT ${CHUNK} FROM upload_chunks WHERE upload_id = ? ORDER BY sort_key, name`)
      .all(uploadId);
  }

  chunk(uploadId: string, name: string): UploadChunk | null {
    return this.sqlite
      .query<UploadChunk, [string, string]>(`SELECT ${CHUNK} FROM upload_chunks WHERE upload_id = ? AND name = ?`)
      .get(uploadId, name);
  }

  /** Records a chunk (a chunk sent again under its name replaces the one before). */
  putChunk(row: UploadChunk): void {
    this.sqlite
      .query(
        `INSERT INTO upload_chunks (upload_id, name, sort_key, size, storage_key, wrapped_key, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (upload_id, name) DO UPDATE SET sort_key = excluded.sort_key, size = excluded.size,
           storage_key = excluded.storage_key, wrapped_key = excluded.wrapped_key, created_at = excluded.created_at`,
      )
      .run(row.uploadId, row.name, row.sortKey, row.size, row.storageKey, row.wrappedKey, row.createdAt);
  }

  totals(uploadId: string): { count: number; bytes: number } {
    return this.sqlite
      .query<{ count: number; bytes: number }, [string]>(
        'SELECT COUNT(*) AS count, COALESCE(SUM(size), 0) AS bytes FROM upload_chunks WHERE upload_id = ?',
      )
      .get(uploadId)!;
  }

  /** Bytes uploads not expired at `now` are yet to receive (their OC-Total-Length less what arrived), all accounts together. */
  promised(now: number): number {
    return this.sqlite
      .query<{ n: number }, [number]>(
        `SELECT COALESCE(SUM(MAX(0, u.total_length - COALESCE((SELECT SUM(c.size) FROM upload_chunks c WHERE c.upload_id = u.id), 0))), 0) AS n
         FROM chunked_uploads u WHERE u.total_length IS NOT NULL AND u.expires_at >= ?`,
      )
      .get(now)!.n;
  }

  expired(now: number, limit: number): ChunkedUpload[] {
    return this.sqlite
      .query<ChunkedUpload, [number, number]>(`SELECT ${UPLOAD} FROM chunked_uploads WHERE expires_at < ? ORDER BY expires_at LIMIT ?`)
      .all(now, limit)
      .map((r) => toRow(r)!);
  }

  count(): number {
    return this.sqlite.query<{ n: number }, []>('SELECT COUNT(*) AS n FROM chunked_uploads').get()!.n;
  }

  /** Of `keys`, those a chunk or an upload's object holds. */
  keysInUse(keys: readonly string[]): Set<string> {
    if (keys.length === 0) return new Set();
    const rows = this.sqlite
      .query<{ key: string }, [string]>(
        `SELECT storage_key AS key FROM upload_chunks WHERE storage_key IN (SELECT value FROM json_each(?1))
         UNION ALL SELECT storage_key AS key FROM chunked_uploads WHERE storage_key IN (SELECT value FROM json_each(?1))`,
      )
      .all(JSON.stringify(keys));
    return new Set(rows.map((r) => r.key));
  }
}
