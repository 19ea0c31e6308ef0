import type { Database } from 'bun:sqlite';
import { libraries, libraryEntries } from '../schema/libraries.ts';
import { selectList, toBoolean } from '../select.ts';

export type LibraryRow = typeof libraries.$inferSelect;
export type LibraryEntryRow = typeof libraryEntries.$inferSelect;

/** An indexed entry of a library with what its item row says: the scan compares the host with these. */
export interface IndexedEntry {
  itemId: string;
  parentId: string | null;
  type: 'file' | 'folder';
  name: string;
  size: number;
  fileId: string;
  hostModifiedAt: number;
  unavailable: boolean;
}

const LIBRARY = selectList(libraries, [
  'id',
  'name',
  'path',
  'accountId',
  'folderId',
  'readOnly',
  'groupId',
  'createdBy',
  'createdAt',
  'scannedAt',
  'scanEntries',
  'scanError',
  'available',
  'wrappedKey',
  'keyId',
]);

function library(row: LibraryRow | null): LibraryRow | null {
  if (!row) return null;
  row.readOnly = toBoolean(row.readOnly);
  row.available = toBoolean(row.available);
  return row;
}

/** The SQL of libraries and of their entries (which host file each library item is). */
export class LibrariesRepo {
  // Whether no library exists, at the access generation it was read at (adding or removing a library moves it: 0041).
  private none: { version: string; none: boolean } | undefined;

  constructor(
    private readonly sqlite: Database,
    /** Moves on any write that adds or removes a library, by this connection or another (DatabaseRepo.accessVersion). */
    private readonly accessVersion: () => string,
  ) {}

  /**
   * Whether no library exists, answered from memory outside a transaction until the access generation moves
   * (read only after a commit): an upload asks it of its folder two or three times before its write.
   */
  private noLibrary(): boolean {
    if (this.sqlite.inTransaction) return false;
    const version = this.accessVersion();
    if (this.none?.version !== version) {
      this.none = { version, none: this.sqlite.query<{ one: number }, []>('SELECT 1 AS one FROM libraries LIMIT 1').get() === null };
    }
    return this.none.none;
  }

  insert(
    row: Pick<LibraryRow, 'id' | 'name' | 'path' | 'accountId' | 'folderId' | 'readOnly' | 'groupId' | 'createdBy' | 'createdAt'>,
  ): void {
    this.sqlite
      .query(
        `INSERT INTO libraries (id, name, path, account_id, folder_id, read_only, group_id, created_by, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(row.id, row.name, row.path, row.accountId, row.folderId, row.readOnly ? 1 : 0, row.groupId, row.createdBy, row.createdAt);
  }

  all(): LibraryRow[] {
    return this.sqlite
      .query<LibraryRow, []>(`SELECT ${LIBRARY} FROM libraries ORDER BY lower(name), id`)
      .all()
      .map((r) => library(r)!);
  }

  get(id: string): LibraryRow | null {
    return library(this.sqlite.query<LibraryRow, [string]>(`SELECT ${LIBRARY} FROM libraries WHERE id = ?`).get(id));
  }

  /** The library an item belongs to (its root folder or anything below it), or null for an item of the encrypted store. */
  ofItem(itemId: string): LibraryRow | null {
    if (this.noLibrary()) return null;
    return library(
      this.sqlite
        .query<LibraryRow, [string]>(
          `SELECT ${LIBRARY} FROM libraries WHERE id = (SELECT library_id FROM library_entries WHERE item_id = ?)`,
        )
        .get(itemId),
    );
  }

  /** The libraries an account reaches through its groups (the library's group given its folder), by name. */
  reachedBy(accountId: string): Array<{ ownerId: string; folderId: string }> {
    return this.sqlite
      .query<{ ownerId: string; folderId: string }, [string]>(
        `SELECT DISTINCT l.account_id AS ownerId, l.folder_id AS folderId
           FROM group_members gm CROSS JOIN libraries l ON l.group_id = gm.group_id
           JOIN item_groups g ON g.item_id = l.folder_id AND g.group_id = l.group_id
          WHERE gm.account_id = ?1 AND l.account_id <> ?1
          ORDER BY lower(l.name)`,
      )
      .all(accountId);
  }

  remove(id: string): void {
    this.sqlite.query('DELETE FROM libraries WHERE id = ?').run(id);
  }

  scanned(id: string, at: number, entries: number, error: string | null, available: boolean): void {
    this.sqlite
      .query('UPDATE libraries SET scanned_at = ?, scan_entries = ?, scan_error = ?, available = ? WHERE id = ?')
      .run(at, entries, error, available ? 1 : 0, id);
  }

  setAvailable(id: string, available: boolean): void {
    this.sqlite.query('UPDATE libraries SET available = ? WHERE id = ?').run(available ? 1 : 0, id);
  }

  /** The library status of each of these items that is in a library (one statement per list). */
  statusOf(itemIds: readonly string[]): Map<string, { unavailable: boolean }> {
    const out = new Map<string, { unavailable: boolean }>();
    if (itemIds.length === 0) return out;
    const rows = this.sqlite
      .query<{ itemId: string; unavailable: number }, [string]>(
        `SELECT e.item_id AS itemId, e.unavailable OR NOT l.available AS unavailable FROM library_entries e JOIN libraries l ON l.id = e.library_id
          WHERE e.item_id IN (SELECT value FROM json_each(?))`,
      )
      .all(JSON.stringify(itemIds));
    for (const r of rows) out.set(r.itemId, { unavailable: Boolean(r.unavailable) });
    return out;
  }

  /** Every indexed entry of a library with its live item's place, name and size. */
  indexed(libraryId: string): IndexedEntry[] {
    return this.indexedWhere('e.library_id = ?1', libraryId);
  }

  /** One indexed entry (a library's own folder, say), or null. */
  indexedItem(libraryId: string, itemId: string): IndexedEntry | null {
    return this.indexedWhere('e.library_id = ?1 AND e.item_id = ?2', libraryId, itemId)[0] ?? null;
  }

  /** The indexed entries directly in a folder of the library. */
  indexedChildren(libraryId: string, folderId: string): IndexedEntry[] {
    return this.indexedWhere('e.library_id = ?1 AND e.item_id IN (SELECT id FROM items WHERE parent_id = ?2)', libraryId, folderId);
  }

  /** The indexed entries of one host file (a hard link has several names). */
  indexedByFileId(libraryId: string, fileId: string): IndexedEntry[] {
    return this.indexedWhere('e.library_id = ?1 AND e.file_id = ?2', libraryId, fileId);
  }

  private indexedWhere(where: string, ...args: string[]): IndexedEntry[] {
    return this.sqlite
      .query<IndexedEntry, string[]>(
        `SELECT e.item_id AS itemId, i.parent_id AS parentId, i.type, i.name, i.size, e.file_id AS fileId,
                e.host_modified_at AS hostModifiedAt, e.unavailable
           FROM library_entries e JOIN items i ON i.id = e.item_id
          WHERE ${where} AND i.deleted_at IS NULL`,
      )
      .all(...args)
      .map((r) => ({ ...r, unavailable: toBoolean(r.unavailable) }));
  }

  /**
   * Records where an item comes from. Its content key is new for a new entry, and when `newContent` (its size
   * changed) or its inode or time did: its thumbnail and text are then made again (the triggers of 0033).
   */
  putEntry(row: Omit<LibraryEntryRow, 'contentKey'>, newContent = false): void {
    this.sqlite
      .query(
        `INSERT INTO library_entries (item_id, library_id, file_id, host_modified_at, unavailable, content_key)
         VALUES (?1, ?2, ?3, ?4, ?5, 'lib_' || lower(hex(randomblob(16))))
         ON CONFLICT (item_id) DO UPDATE SET file_id = excluded.file_id, host_modified_at = excluded.host_modified_at,
           unavailable = excluded.unavailable,
           content_key = CASE WHEN ?6 OR file_id IS NOT excluded.file_id OR host_modified_at IS NOT excluded.host_modified_at
                              THEN excluded.content_key ELSE content_key END`,
      )
      .run(row.itemId, row.libraryId, row.fileId, row.hostModifiedAt, row.unavailable ? 1 : 0, newContent ? 1 : 0);
  }

  /** What a library file's content is now (its content key, new whenever its host file changes), or null when the item is no library file. */
  contentTag(itemId: string): string | null {
    const row = this.sqlite
      .query<{ contentKey: string | null }, [string]>('SELECT content_key AS contentKey FROM library_entries WHERE item_id = ?')
      .get(itemId);
    return row?.contentKey ? `host:${row.contentKey}` : null;
  }

  /** What thumbnails and text of a library file are made of: its current content key, and whether it can be read now. */
  mediaEntry(itemId: string): { contentKey: string; readable: boolean } | null {
    const row = this.sqlite
      .query<{ contentKey: string | null; readable: number }, [string]>(
        `SELECT e.content_key AS contentKey, NOT e.unavailable AND l.available AS readable
           FROM library_entries e JOIN libraries l ON l.id = e.library_id WHERE e.item_id = ?`,
      )
      .get(itemId);
    return row?.contentKey ? { contentKey: row.contentKey, readable: Boolean(row.readable) } : null;
  }

  /** Gives a library the data key its thumbnails are sealed under, unless another process just did (then false). */
  setWrappedKey(id: string, wrappedKey: string, keyId: string): boolean {
    return (
      this.sqlite.query('UPDATE libraries SET wrapped_key = ?, key_id = ? WHERE id = ? AND wrapped_key IS NULL').run(wrappedKey, keyId, id)
        .changes === 1
    );
  }

  /** Libraries whose thumbnail key is not wrapped by `keyId`, after `afterId` (a master key rotation). */
  notUnderKeyPage(keyId: string, afterId: string, limit: number): Array<{ id: string; wrappedKey: string }> {
    return this.sqlite
      .query<{ id: string; wrappedKey: string }, [string, string, number]>(
        `SELECT id, wrapped_key AS wrappedKey FROM libraries WHERE wrapped_key IS NOT NULL AND key_id IS NOT ? AND id > ? ORDER BY id LIMIT ?`,
      )
      .all(keyId, afterId, limit);
  }

  countNotUnderKey(keyId: string): number {
    return this.sqlite
      .query<{ n: number }, [string]>('SELECT count(*) AS n FROM libraries WHERE wrapped_key IS NOT NULL AND key_id IS NOT ?')
      .get(keyId)!.n;
  }

  /** Replaces a library's wrapped key if it is still `from` (a rotation beside a running server). */
  rewrap(id: string, from: string, to: string, keyId: string): boolean {
    return (
      this.sqlite.query('UPDATE libraries SET wrapped_key = ?, key_id = ? WHERE id = ? AND wrapped_key = ?').run(to, keyId, id, from)
        .changes === 1
    );
  }

  /** How many entries each library (or only `libraryId`) has indexed. */
  counts(libraryId?: string): Map<string, { files: number; folders: number; bytes: number }> {
    const rows = this.sqlite
      .query<{ libraryId: string; files: number; folders: number; bytes: number }, [string | null]>(
        `SELECT e.library_id AS libraryId, SUM(i.type = 'file') AS files, SUM(i.type = 'folder') AS folders,
                COALESCE(SUM(CASE WHEN i.type = 'file' THEN i.size END), 0) AS bytes
           FROM library_entries e JOIN items i ON i.id = e.item_id
          WHERE (?1 IS NULL OR e.library_id = ?1) AND i.deleted_at IS NULL GROUP BY e.library_id`,
      )
      .all(libraryId ?? null);
    return new Map(rows.map((r) => [r.libraryId, { files: r.files, folders: r.folders, bytes: r.bytes }]));
  }
}
