import type { Database } from 'bun:sqlite';
import { fileVersions } from '../schema/versions.ts';
import { selectList } from '../select.ts';

/** A kept earlier content of a file, as the schema describes it. */
export type FileVersion = Omit<typeof fileVersions.$inferSelect, 'seq'>;
export type VersionSource = FileVersion['source'];
/** A version as its list shows it: the row and the name and email of the login that wrote it. */
export type ListedVersion = FileVersion & { authorName: string | null; authorEmail: string | null };
/** What eviction needs of a row. */
export type VersionRef = Pick<FileVersion, 'id' | 'itemId' | 'accountId' | 'size' | 'storageKey' | 'createdAt'>;
/** What retention needs of a row: read from the item index alone, without touching the table. */
export interface VersionAge {
  seq: number;
  createdAt: number;
}
/** A removed version: whose bytes it freed and which object to delete. */
export type RemovedVersion = Pick<FileVersion, 'accountId' | 'size' | 'storageKey'>;

const KEYS = [
  'id',
  'itemId',
  'accountId',
  'size',
  'mimeType',
  'storageKey',
  'wrappedKey',
  'keyId',
  'source',
  'authorId',
  'modifiedAt',
  'createdAt',
] as const satisfies ReadonlyArray<keyof FileVersion>;
const VERSION = selectList(fileVersions, KEYS);
const LISTED = selectList(fileVersions, KEYS, 'v.');
const VERSION_REF = selectList(fileVersions, ['id', 'itemId', 'accountId', 'size', 'storageKey', 'createdAt']);

/** The SQL of file versions (`file_versions`). */
export class VersionsRepo {
  constructor(private readonly sqlite: Database) {}

  insert(row: FileVersion): void {
    this.sqlite
      .query(
        `INSERT INTO file_versions (id, item_id, account_id, size, mime_type, storage_key, wrapped_key, key_id, source, author_id,
           modified_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        row.id,
        row.itemId,
        row.accountId,
        row.size,
        row.mimeType,
        row.storageKey,
        row.wrappedKey,
        row.keyId,
        row.source,
        row.authorId,
        row.modifiedAt,
        row.createdAt,
      );
  }

  /** A file's versions, newest first, with their authors (a login deleted since shows none). */
  list(itemId: string): ListedVersion[] {
    return this.sqlite
      .query<ListedVersion, [string]>(
        `SELECT ${LISTED}, u.name AS authorName, u.email AS authorEmail
           FROM file_versions v LEFT JOIN users u ON u.id = v.author_id
          WHERE v.item_id = ? ORDER BY v.created_at DESC, v.seq DESC`,
      )
      .all(itemId);
  }

  get(itemId: string, id: string): FileVersion | null {
    return this.sqlite
      .query<FileVersion, [string, string]>(`SELECT ${VERSION} FROM file_versions WHERE id = ? AND item_id = ?`)
      .get(id, itemId);
  }

  /** A file's versions, newest first, as retention reads them (the item index covers it). */
  agesOf(itemId: string): VersionAge[] {
    return this.sqlite
      .query<VersionAge, [string]>(
        'SELECT seq, created_at AS createdAt FROM file_versions WHERE item_id = ? ORDER BY created_at DESC, seq DESC',
      )
      .all(itemId);
  }

  /** Removes versions by row number; answers what each freed. */
  deleteRows(seqs: readonly number[]): RemovedVersion[] {
    return this.sqlite
      .query<RemovedVersion, [string]>(
        `DELETE FROM file_versions WHERE seq IN (SELECT value FROM json_each(?))
         RETURNING account_id AS accountId, size, storage_key AS storageKey`,
      )
      .all(JSON.stringify(seqs));
  }

  /** Files that have versions, in id order after `afterItemId`. */
  itemsWithVersions(afterItemId: string, limit: number): string[] {
    return this.sqlite
      .query<{ itemId: string }, [string, number]>(
        'SELECT DISTINCT item_id AS itemId FROM file_versions WHERE item_id > ? ORDER BY item_id LIMIT ?',
      )
      .all(afterItemId, limit)
      .map((r) => r.itemId);
  }

  /** An account's oldest versions first, a page at a time (making room for an upload). */
  oldestOfAccount(accountId: string, limit: number): VersionRef[] {
    return this.sqlite
      .query<VersionRef, [string, number]>(`SELECT ${VERSION_REF} FROM file_versions WHERE account_id = ? ORDER BY created_at, seq LIMIT ?`)
      .all(accountId, limit);
  }

  /** Bytes an account's versions hold. */
  accountBytes(accountId: string): number {
    return this.sqlite
      .query<{ bytes: number }, [string]>('SELECT COALESCE(SUM(size), 0) AS bytes FROM file_versions WHERE account_id = ?')
      .get(accountId)!.bytes;
  }

  reassign(fromItemId: string, toItemId: string): number {
    return this.sqlite.query('UPDATE file_versions SET item_id = ? WHERE item_id = ?').run(toItemId, fromItemId).changes;
  }

  delete(id: string): void {
    this.sqlite.query('DELETE FROM file_versions WHERE id = ?').run(id);
  }

  /** Removes every version of a file; answers their keys and bytes (purging the file). */
  deleteOfItem(itemId: string): { keys: string[]; bytes: number } {
    const rows = this.sqlite
      .query<{ storageKey: string; size: number }, [string]>(
        'DELETE FROM file_versions WHERE item_id = ? RETURNING storage_key AS storageKey, size',
      )
      .all(itemId);
    return { keys: rows.map((r) => r.storageKey), bytes: rows.reduce((n, r) => n + r.size, 0) };
  }
}
