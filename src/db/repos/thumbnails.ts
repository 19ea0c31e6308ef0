import type { Database } from 'bun:sqlite';
import type { thumbnails } from '../schema/thumbnails.ts';

export type ThumbnailRow = typeof thumbnails.$inferSelect;

/** An album shows a file of `alias` while it is live and its account active: an editor's photos stop with its account, as its shares do. */
export const shownInAlbum = (alias: string) =>
  `${alias}.deleted_at IS NULL AND ${alias}.account_id NOT IN (SELECT id FROM users WHERE disabled_at IS NOT NULL OR deletion_requested_at IS NOT NULL)`;

/** A live file a thumbnail may be made for. */
export interface ThumbnailSource {
  seq: number;
  id: string;
  accountId: string;
  storageKey: string;
}

/** One row of the Photos view: `takenAt` in ms (EXIF DateTimeOriginal, else the modification time). */
export interface PhotoRow {
  id: string;
  name: string;
  takenAt: number;
  width: number | null;
  height: number | null;
  parentId: string | null;
  mimeType: string;
  size: number;
  modifiedAt: number;
  starred: number;
  /** Seconds, for a video whose container says (see ThumbnailRow). */
  duration?: number | null;
}

/** A Photos row of another account's file: whose it is and, for a file reached only through an album, which one. */
export type SharedPhotoRow = PhotoRow & { ownerId: string; ownerName: string; albumId: string | null };

const PHOTO_COLUMNS = `i.id, i.name, coalesce(i.taken_at, i.modified_at) AS takenAt, t.width, t.height, i.parent_id AS parentId,
  i.mime_type AS mimeType, i.size, i.modified_at AS modifiedAt, i.starred, t.duration`;
const TAKEN = 'coalesce(i.taken_at, i.modified_at)';
/** A file's thumbnail row: by its stored object, or for a library file by its content key. */
export const THUMBNAIL_OF_ITEM =
  't.storage_key = coalesce(i.storage_key, (SELECT e.content_key FROM library_entries e WHERE e.item_id = i.id))';
// Library content keys start so (libraries.ts putEntry): their thumbnail rows are one range of the key index.
const LIBRARY_KEYS = "t.storage_key >= 'lib_' AND t.storage_key < 'lib`'";

/**
 * Where a page of the Photos order starts and ends: after the keyset position `after` (its takenAt and id),
 * and no older than `floor` when another source already filled the page down to it.
 */
export interface PhotoWindow {
  after: { takenAt: number; id: string } | null;
  floor: number | null;
}

// Bounds (<=, >=) and a filter: SQLite makes an index range of the bounds, not of an OR or a row value.
function windowSql(w: PhotoWindow): { sql: string; args: Array<string | number> } {
  const after = w.after ? `AND ${TAKEN} <= ? AND (${TAKEN} < ? OR i.id < ?)` : '';
  const floor = w.floor !== null ? `AND ${TAKEN} >= ?` : '';
  return {
    sql: `${after} ${floor}`,
    args: [...(w.after ? [w.after.takenAt, w.after.takenAt, w.after.id] : []), ...(w.floor !== null ? [w.floor] : [])],
  };
}
// Deep enough for any real tree; a bound so a corrupt cycle cannot loop.
const MAX_DEPTH = 10_000;

/** The SQL of what was made from each stored object (`thumbnails`). */
export class ThumbnailsRepo {
  constructor(private readonly sqlite: Database) {}

  get(storageKey: string): ThumbnailRow | null {
    return this.sqlite
      .query<ThumbnailRow, [string]>(
        `SELECT storage_key AS storageKey, status, small_size AS smallSize, large_size AS largeSize, width, height,
                taken_at AS takenAt, camera, lens, latitude, longitude, duration, created_at AS createdAt
         FROM thumbnails WHERE storage_key = ?`,
      )
      .get(storageKey);
  }

  save(row: ThumbnailRow): void {
    this.sqlite
      .query(
        `INSERT OR REPLACE INTO thumbnails (storage_key, status, small_size, large_size, width, height, taken_at, camera, lens, latitude, longitude, duration, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        row.storageKey,
        row.status,
        row.smallSize,
        row.largeSize,
        row.width,
        row.height,
        row.takenAt,
        row.camera,
        row.lens,
        row.latitude,
        row.longitude,
        row.duration,
        row.createdAt,
      );
  }

  /**
   * Of these items, each file's type, whether a thumbnail was made of its content (`ready`), could not be
   * (`none`), failed once and is to be tried again (`failed`) or not yet (null), and whether its bytes can be read now
   * (a library file may not be).
   */
  statusOfItems(
    ids: readonly string[],
  ): Array<{ id: string; mimeType: string | null; status: ThumbnailRow['status'] | null; readable: boolean }> {
    return this.sqlite
      .query<{ id: string; mimeType: string | null; status: ThumbnailRow['status'] | null; readable: number }, [string]>(
        `SELECT i.id, i.mime_type AS mimeType, t.status, coalesce(NOT e.unavailable AND l.available, 1) AS readable
           FROM items i LEFT JOIN library_entries e ON e.item_id = i.id LEFT JOIN libraries l ON l.id = e.library_id
           LEFT JOIN thumbnails t ON t.storage_key = coalesce(i.storage_key, e.content_key)
          WHERE i.id IN (SELECT value FROM json_each(?)) AND i.type = 'file' AND (i.storage_key IS NOT NULL OR e.content_key IS NOT NULL)`,
      )
      .all(JSON.stringify(ids))
      .map((r) => ({ ...r, readable: r.readable === 1 }));
  }

  /** The running time (seconds) of those of these files whose thumbnail's record has one: a video's, from its container. */
  durationsOf(ids: readonly string[]): Map<string, number> {
    const rows = this.sqlite
      .query<{ id: string; duration: number }, [string]>(
        `SELECT i.id, t.duration FROM items i JOIN thumbnails t ON ${THUMBNAIL_OF_ITEM}
          WHERE i.id IN (SELECT value FROM json_each(?)) AND t.duration IS NOT NULL`,
      )
      .all(JSON.stringify(ids));
    return new Map(rows.map((r) => [r.id, r.duration]));
  }

  /** When the earliest try that failed after `after` was made (a first failure, tried again an hour later); null when none. */
  earliestFailedAfter(after: number): number | null {
    return (
      this.sqlite
        .query<{ t: number | null }, [number]>(`SELECT MIN(created_at) AS t FROM thumbnails WHERE status = 'failed' AND created_at > ?`)
        .get(after)?.t ?? null
    );
  }

  /**
   * Forgets the unfinished tries (`unfinished_attempts` of `purpose`) at making thumbnails of content no file holds any
   * more: deleted before its tries went with its thumbnails. One statement; the table holds only tries a crash cut off.
   */
  forgetTriesOfGoneContent(purpose: string): number {
    return this.sqlite
      .query(
        `DELETE FROM unfinished_attempts WHERE purpose = ?
           AND NOT EXISTS (SELECT 1 FROM items i WHERE i.storage_key = unfinished_attempts.subject)
           AND NOT EXISTS (SELECT 1 FROM library_entries e WHERE e.content_key = unfinished_attempts.subject)`,
      )
      .run(purpose).changes;
  }

  delete(storageKey: string): void {
    this.sqlite.query('DELETE FROM thumbnails WHERE storage_key = ?').run(storageKey);
  }

  /** Every row's key after `afterKey`, in key order (storage migration copies their objects). */
  readyPage(afterKey: string, limit: number): string[] {
    return this.sqlite
      .query<{ k: string }, [string, number]>(
        "SELECT storage_key AS k FROM thumbnails WHERE status = 'ready' AND storage_key > ? ORDER BY storage_key LIMIT ?",
      )
      .all(afterKey, limit)
      .map((r) => r.k);
  }

  /**
   * Live files of one of `mimeTypes` (of `accountId` when given) with nothing made yet (or a try that failed at
   * `retryBefore` or earlier), or every such file when `all` (a rebuild), in row order after `afterSeq`.
   */
  sourcesPage(mimeTypes: readonly string[], opts: SourcesQuery): ThumbnailSource[] {
    const marks = mimeTypes.map(() => '?').join(', ');
    const account = opts.accountId ? 'AND i.account_id = ?' : '';
    const missing = opts.all ? '' : `AND ${nothingMade('i.storage_key')}`;
    const args: Array<string | number> = [
      opts.afterSeq,
      ...mimeTypes,
      ...(opts.accountId ? [opts.accountId] : []),
      ...(opts.all ? [] : [opts.retryBefore ?? 0]),
      opts.limit,
    ];
    return this.sqlite
      .query<ThumbnailSource, Array<string | number>>(
        `SELECT i.seq, i.id, i.account_id AS accountId, i.storage_key AS storageKey FROM items i
         WHERE i.seq > ? AND i.type = 'file' AND i.deleted_at IS NULL AND i.storage_key IS NOT NULL
           AND i.mime_type IN (${marks}) ${account} ${missing}
         ORDER BY i.seq LIMIT ?`,
      )
      .all(...args);
  }

  /**
   * Live, readable library files of one of `mimeTypes` with nothing made of their current content yet (every
   * such file when `all`), of one account with `accountId`, in row order after `afterSeq`; `storageKey` is the content key.
   */
  librarySourcesPage(mimeTypes: readonly string[], opts: SourcesQuery): ThumbnailSource[] {
    const where = librarySourcesWhere(mimeTypes, opts);
    return this.sqlite
      .query<ThumbnailSource, Array<string | number>>(
        `SELECT i.seq, i.id, i.account_id AS accountId, e.content_key AS storageKey ${where.sql} AND i.seq > ? ORDER BY i.seq LIMIT ?`,
      )
      .all(...where.args, opts.afterSeq, opts.limit);
  }

  /** How many library files `librarySourcesPage` walks through, for a progress bar. */
  countLibrarySources(mimeTypes: readonly string[], opts: Omit<SourcesQuery, 'afterSeq' | 'limit'>): number {
    const where = librarySourcesWhere(mimeTypes, opts);
    return this.sqlite.query<{ n: number }, Array<string | number>>(`SELECT count(*) AS n ${where.sql}`).get(...where.args)!.n;
  }

  /** Thumbnail rows of library content no entry names any more (the file changed or left), up to `limit`. */
  libraryOrphans(limit: number): string[] {
    return this.sqlite
      .query<{ k: string }, [number]>(
        `SELECT t.storage_key AS k FROM thumbnails t WHERE ${LIBRARY_KEYS}
            AND NOT EXISTS (SELECT 1 FROM library_entries e WHERE e.content_key = t.storage_key)
            AND NOT EXISTS (SELECT 1 FROM items i WHERE i.storage_key = t.storage_key)
          LIMIT ?`,
      )
      .all(limit)
      .map((r) => r.k);
  }

  /** How many live files `sourcesPage` walks through, for a progress bar. */
  countSources(mimeTypes: readonly string[], opts: Omit<SourcesQuery, 'afterSeq' | 'limit'>): number {
    const marks = mimeTypes.map(() => '?').join(', ');
    const account = opts.accountId ? 'AND i.account_id = ?' : '';
    const missing = opts.all ? '' : `AND ${nothingMade('i.storage_key')}`;
    return this.sqlite
      .query<{ n: number }, Array<string | number>>(
        `SELECT count(*) AS n FROM items i WHERE i.type = 'file' AND i.deleted_at IS NULL AND i.storage_key IS NOT NULL
           AND i.mime_type IN (${marks}) ${account} ${missing}`,
      )
      .get(...mimeTypes, ...(opts.accountId ? [opts.accountId] : []), ...(opts.all ? [] : [opts.retryBefore ?? 0]))!.n;
  }

  /**
   * Live files of an account whose type is one of `imageTypes` or video/*, newest taken first, after the
   * keyset position `after` (its takenAt and id): items_photos_idx walks (account, taken-or-modified, id)
   * in order, so a page reads its own rows and stops.
   */
  photosPage(accountId: string, imageTypes: readonly string[], window: PhotoWindow, limit: number): PhotoRow[] {
    const marks = imageTypes.map(() => '?').join(', ');
    const keyset = windowSql(window);
    const args: Array<string | number> = [accountId, ...imageTypes, ...keyset.args, limit];
    return this.sqlite
      .query<PhotoRow, Array<string | number>>(
        `SELECT i.id, i.name, coalesce(i.taken_at, i.modified_at) AS takenAt, t.width, t.height, i.parent_id AS parentId,
                i.mime_type AS mimeType, i.size, i.modified_at AS modifiedAt, i.starred, t.duration
         FROM items i INDEXED BY items_photos_idx LEFT JOIN thumbnails t ON ${THUMBNAIL_OF_ITEM}
         WHERE i.account_id = ? AND i.type = 'file' AND i.deleted_at IS NULL
           AND (i.mime_type IN (${marks}) OR i.mime_type LIKE 'video/%') ${keyset.sql}
         ORDER BY coalesce(i.taken_at, i.modified_at) DESC, i.id DESC LIMIT ?`,
      )
      .all(...args);
  }

  /** The active accounts that share something with `accountId` (itself or through a group). */
  sharingOwners(accountId: string): string[] {
    return this.sqlite
      .query<{ id: string }, [string]>(
        `SELECT m.owner_id AS id FROM item_members m WHERE m.account_id = ?1 AND m.owner_id <> ?1
         UNION
         SELECT g.owner_id FROM group_members gm JOIN item_groups g ON g.group_id = gm.group_id WHERE gm.account_id = ?1 AND g.owner_id <> ?1`,
      )
      .all(accountId)
      .map((r) => r.id);
  }

  /**
   * The photos and videos `ownerId` (an active account) shares with `accountId`, itself or through a group,
   * newest taken first after `after`: the shared files and the files anywhere below the shared folders.
   * Read in the owner's Photos order from its index, kept when inside what is shared.
   */
  sharedPhotosPage(
    accountId: string,
    ownerId: string,
    imageTypes: readonly string[],
    window: PhotoWindow,
    limit: number,
  ): SharedPhotoRow[] {
    const marks = imageTypes.map(() => '?').join(', ');
    const keyset = windowSql(window);
    const args: Array<string | number> = [accountId, ownerId, MAX_DEPTH, ...imageTypes, ...keyset.args, limit];
    return this.sqlite
      .query<SharedPhotoRow, Array<string | number>>(
        `WITH RECURSIVE roots(id) AS (
           SELECT m.item_id FROM item_members m INDEXED BY item_members_account_idx WHERE m.account_id = ?1 AND m.owner_id = ?2
           UNION
           SELECT g.item_id FROM group_members gm JOIN item_groups g ON g.group_id = gm.group_id
            WHERE gm.account_id = ?1 AND g.owner_id = ?2
         ),
         folders(id, depth) AS (
           SELECT i.id, 0 FROM roots r JOIN items i ON i.id = r.id WHERE i.type = 'folder' AND i.deleted_at IS NULL
           UNION
           SELECT c.id, f.depth + 1 FROM folders f CROSS JOIN items c INDEXED BY items_live_parent_name_idx ON c.account_id = ?2 AND c.parent_id = f.id AND c.type = 'folder'
            WHERE c.deleted_at IS NULL AND f.depth < ?3
         )
         SELECT ${PHOTO_COLUMNS}, i.account_id AS ownerId, coalesce(nullif(o.name, ''), o.email) AS ownerName, NULL AS albumId
         FROM users o JOIN items i INDEXED BY items_photos_idx ON i.account_id = o.id
         LEFT JOIN thumbnails t ON ${THUMBNAIL_OF_ITEM}
         WHERE o.id = ?2 AND o.disabled_at IS NULL AND o.deletion_requested_at IS NULL
           AND i.type = 'file' AND i.deleted_at IS NULL
           AND (i.mime_type IN (${marks}) OR i.mime_type LIKE 'video/%') ${keyset.sql}
           AND (i.parent_id IN (SELECT id FROM folders) OR i.id IN (SELECT id FROM roots))
         ORDER BY ${TAKEN} DESC, i.id DESC LIMIT ?`,
      )
      .all(...args);
  }

  /** Other accounts' photos and videos in albums shared with `accountId`, newest taken first after `after`. */
  albumPhotosPage(accountId: string, window: PhotoWindow, limit: number): SharedPhotoRow[] {
    const keyset = windowSql(window);
    const args: Array<string | number> = [accountId, ...keyset.args, limit];
    return this.sqlite
      .query<SharedPhotoRow, Array<string | number>>(
        `SELECT ${PHOTO_COLUMNS}, i.account_id AS ownerId, coalesce(nullif(o.name, ''), o.email) AS ownerName, min(am.album_id) AS albumId
         FROM album_members am JOIN album_items ai ON ai.album_id = am.album_id JOIN items i ON i.id = ai.item_id
         JOIN users o ON o.id = i.account_id LEFT JOIN thumbnails t ON ${THUMBNAIL_OF_ITEM}
         WHERE am.account_id = ?1 AND i.account_id <> ?1 AND i.type = 'file' AND ${shownInAlbum('i')} ${keyset.sql}
         GROUP BY i.id ORDER BY ${TAKEN} DESC, i.id DESC LIMIT ?`,
      )
      .all(...args);
  }
}

/** The FROM and WHERE of the library files a thumbnail can be made of (readable now), with their arguments. */
function librarySourcesWhere(mimeTypes: readonly string[], opts: Omit<SourcesQuery, 'afterSeq' | 'limit'>) {
  const marks = mimeTypes.map(() => '?').join(', ');
  const account = opts.accountId ? 'AND i.account_id = ?' : '';
  const missing = opts.all ? '' : `AND ${nothingMade('e.content_key')}`;
  return {
    sql: `FROM items i JOIN library_entries e ON e.item_id = i.id JOIN libraries l ON l.id = e.library_id
          WHERE i.type = 'file' AND i.deleted_at IS NULL AND i.storage_key IS NULL AND i.mime_type IN (${marks})
            AND e.content_key IS NOT NULL AND e.unavailable = 0 AND l.available = 1 ${account} ${missing}`,
    args: [...mimeTypes, ...(opts.accountId ? [opts.accountId] : []), ...(opts.all ? [] : [opts.retryBefore ?? 0])],
  };
}

/** What the sweep and a rebuild walk: `all` files, or those with nothing made (a try failed by `retryBefore` counts as nothing). */
export interface SourcesQuery {
  afterSeq: number;
  limit: number;
  accountId?: string;
  all?: boolean;
  retryBefore?: number;
}

/** No thumbnail row for the content `key`, or a failed try made at the bound parameter or earlier. */
const nothingMade = (key: string) =>
  `NOT EXISTS (SELECT 1 FROM thumbnails t WHERE t.storage_key = ${key} AND (t.status <> 'failed' OR t.created_at > ?))`;
