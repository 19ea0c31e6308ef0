import type { Database } from 'bun:sqlite';
import type { albumLinks, albums } from '../schema/albums.ts';
import { changesOf } from '../select.ts';
import { type PhotoRow, shownInAlbum, THUMBNAIL_OF_ITEM } from './thumbnails.ts';

type AlbumTable = typeof albums.$inferSelect;
/** A file in an album, with whose it is (an editor adds its own files). */
export type AlbumPhotoRow = PhotoRow & { accountId: string; addedBy: string };
/** An album's public link. */
export type AlbumLinkRow = typeof albumLinks.$inferSelect;
const LINK = `album_id AS albumId, token, created_by AS createdBy, created_at AS createdAt, expires_at AS expiresAt,
  password_hash AS passwordHash, max_downloads AS maxDownloads, downloads, last_used_at AS lastUsedAt`;
/** An album with what its list shows: how many live files it holds and the one that stands for it. */
export type AlbumRow = AlbumTable & { itemCount: number; coverId: string | null };
export type AlbumRole = 'viewer' | 'editor';
/** An album as another account reaches it: its owner, and the role it was given. */
export type SharedAlbumRow = AlbumRow & { role: AlbumRole; ownerName: string; ownerEmail: string; addedAt: number };
/** An account an album is shared with. */
export interface AlbumMemberRow {
  accountId: string;
  email: string;
  name: string;
  role: AlbumRole;
  addedAt: number;
}

const LIVE = shownInAlbum('i');
// An album is shared only while its owner's account (`u`) is active, as the owner's file shares are.
const OWNER_ACTIVE = 'u.disabled_at IS NULL AND u.deletion_requested_at IS NULL';
const TAKEN = 'coalesce(i.taken_at, i.modified_at)';
const ALBUM = `a.id, a.account_id AS accountId, a.name, a.cover_item_id AS coverItemId, a.created_at AS createdAt, a.updated_at AS updatedAt,
  (SELECT count(*) FROM album_items ai JOIN items i ON i.id = ai.item_id WHERE ai.album_id = a.id AND ${LIVE}) AS itemCount,
  coalesce(
    (SELECT i.id FROM album_items ai JOIN items i ON i.id = ai.item_id WHERE ai.album_id = a.id AND ai.item_id = a.cover_item_id AND ${LIVE}),
    (SELECT i.id FROM album_items ai JOIN items i ON i.id = ai.item_id WHERE ai.album_id = a.id AND ${LIVE}
     ORDER BY ${TAKEN} DESC, i.id DESC LIMIT 1)
  ) AS coverId`;

/** The SQL of albums and the files in them (`albums`, `album_items`). */
export class AlbumsRepo {
  constructor(private readonly sqlite: Database) {}

  insert(row: { id: string; accountId: string; name: string; at: number }): void {
    this.sqlite
      .query('INSERT INTO albums (id, account_id, name, created_at, updated_at) VALUES (?, ?, ?, ?, ?)')
      .run(row.id, row.accountId, row.name, row.at, row.at);
  }

  /** The album when it belongs to `accountId`. */
  byId(accountId: string, id: string): AlbumRow | null {
    return this.sqlite
      .query<AlbumRow, [string, string]>(`SELECT ${ALBUM} FROM albums a WHERE a.id = ? AND a.account_id = ?`)
      .get(id, accountId);
  }

  /** The album when it is shared with `accountId`, with that account's role. */
  sharedById(accountId: string, id: string): SharedAlbumRow | null {
    return this.sqlite
      .query<SharedAlbumRow, [string, string]>(
        `SELECT ${ALBUM}, m.role, m.added_at AS addedAt, u.name AS ownerName, u.email AS ownerEmail
         FROM album_members m JOIN albums a ON a.id = m.album_id JOIN users u ON u.id = a.account_id
         WHERE m.album_id = ? AND m.account_id = ? AND ${OWNER_ACTIVE}`,
      )
      .get(id, accountId);
  }

  /** Albums shared with `accountId`, newest share first, after the keyset position `after`. */
  sharedPage(accountId: string, after: { addedAt: number; id: string } | null, limit: number): SharedAlbumRow[] {
    const keyset = after ? 'AND (m.added_at < ? OR (m.added_at = ? AND a.id < ?))' : '';
    const args: Array<string | number> = [accountId, ...(after ? [after.addedAt, after.addedAt, after.id] : []), limit];
    return this.sqlite
      .query<SharedAlbumRow, Array<string | number>>(
        `SELECT ${ALBUM}, m.role, m.added_at AS addedAt, u.name AS ownerName, u.email AS ownerEmail
         FROM album_members m JOIN albums a ON a.id = m.album_id JOIN users u ON u.id = a.account_id
         WHERE m.account_id = ? AND ${OWNER_ACTIVE} ${keyset} ORDER BY m.added_at DESC, a.id DESC LIMIT ?`,
      )
      .all(...args);
  }

  members(albumId: string): AlbumMemberRow[] {
    return this.sqlite
      .query<AlbumMemberRow, [string]>(
        `SELECT m.account_id AS accountId, u.email, u.name, m.role, m.added_at AS addedAt
         FROM album_members m JOIN users u ON u.id = m.account_id WHERE m.album_id = ? ORDER BY m.added_at, m.account_id`,
      )
      .all(albumId);
  }

  /** Adds the account, or changes its role when it is a member already. */
  putMember(row: { albumId: string; accountId: string; role: AlbumRole; addedBy: string; at: number }): void {
    this.sqlite
      .query(
        `INSERT INTO album_members (album_id, account_id, role, added_by, added_at) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (album_id, account_id) DO UPDATE SET role = excluded.role`,
      )
      .run(row.albumId, row.accountId, row.role, row.addedBy, row.at);
  }

  removeMember(albumId: string, accountId: string): boolean {
    return changesOf(this.sqlite.query('DELETE FROM album_members WHERE album_id = ? AND account_id = ?').run(albumId, accountId)) > 0;
  }

  /** The account of the live file `itemId` when it is in the album (an editor's file is of the editor's account). */
  liveItemAccount(albumId: string, itemId: string): string | null {
    return (
      this.sqlite
        .query<{ accountId: string }, [string, string]>(
          `SELECT i.account_id AS accountId FROM album_items ai JOIN items i ON i.id = ai.item_id
           WHERE ai.album_id = ? AND ai.item_id = ? AND ${LIVE}`,
        )
        .get(albumId, itemId)?.accountId ?? null
    );
  }

  /** The account's albums, newest first, after the keyset position `after`. */
  page(accountId: string, after: { createdAt: number; id: string } | null, limit: number): AlbumRow[] {
    const keyset = after ? 'AND (a.created_at < ? OR (a.created_at = ? AND a.id < ?))' : '';
    const args: Array<string | number> = [accountId, ...(after ? [after.createdAt, after.createdAt, after.id] : []), limit];
    return this.sqlite
      .query<AlbumRow, Array<string | number>>(
        `SELECT ${ALBUM} FROM albums a WHERE a.account_id = ? ${keyset} ORDER BY a.created_at DESC, a.id DESC LIMIT ?`,
      )
      .all(...args);
  }

  update(id: string, patch: { name?: string; coverItemId?: string | null }, at: number): void {
    if (patch.name !== undefined) this.sqlite.query('UPDATE albums SET name = ?, updated_at = ? WHERE id = ?').run(patch.name, at, id);
    if (patch.coverItemId !== undefined)
      this.sqlite.query('UPDATE albums SET cover_item_id = ?, updated_at = ? WHERE id = ?').run(patch.coverItemId, at, id);
  }

  delete(id: string): void {
    this.sqlite.query('DELETE FROM albums WHERE id = ?').run(id);
  }

  /** Adds the files (already checked); those already in it stay as they were. Returns how many were new. */
  addItems(albumId: string, itemIds: readonly string[], at: number): number {
    const insert = this.sqlite.query('INSERT OR IGNORE INTO album_items (album_id, item_id, added_at) VALUES (?, ?, ?)');
    let added = 0;
    for (const itemId of itemIds) added += changesOf(insert.run(albumId, itemId, at));
    if (added) this.sqlite.query('UPDATE albums SET updated_at = ? WHERE id = ?').run(at, albumId);
    return added;
  }

  removeItems(albumId: string, itemIds: readonly string[], at: number): number {
    const remove = this.sqlite.query('DELETE FROM album_items WHERE album_id = ? AND item_id = ?');
    let removed = 0;
    for (const itemId of itemIds) removed += changesOf(remove.run(albumId, itemId));
    // A cover taken out of the album is no longer its cover.
    if (removed)
      this.sqlite
        .query(
          'UPDATE albums SET updated_at = ?, cover_item_id = CASE WHEN cover_item_id IN (SELECT item_id FROM album_items WHERE album_id = ?) THEN cover_item_id END WHERE id = ?',
        )
        .run(at, albumId, albumId);
    return removed;
  }

  /** The album's files (live or not) that belong to `accountId`. */
  itemsOf(albumId: string, accountId: string): string[] {
    return this.sqlite
      .query<{ id: string }, [string, string]>(
        'SELECT ai.item_id AS id FROM album_items ai JOIN items i ON i.id = ai.item_id WHERE ai.album_id = ? AND i.account_id = ?',
      )
      .all(albumId, accountId)
      .map((r) => r.id);
  }

  contains(albumId: string, itemId: string): boolean {
    return this.sqlite.query('SELECT 1 FROM album_items WHERE album_id = ? AND item_id = ?').get(albumId, itemId) !== null;
  }

  /** The album's live files as the Photos view lists them: newest taken first, after `after`. */
  itemsPage(albumId: string, after: { takenAt: number; id: string } | null, limit: number): AlbumPhotoRow[] {
    const keyset = after ? `AND ${TAKEN} <= ? AND (${TAKEN} < ? OR i.id < ?)` : '';
    const args: Array<string | number> = [albumId, ...(after ? [after.takenAt, after.takenAt, after.id] : []), limit];
    return this.sqlite
      .query<AlbumPhotoRow, Array<string | number>>(
        `SELECT i.id, i.name, ${TAKEN} AS takenAt, t.width, t.height, t.duration, i.parent_id AS parentId,
                i.mime_type AS mimeType, i.size, i.modified_at AS modifiedAt, i.starred,
                i.account_id AS accountId, coalesce(nullif(trim(u.name), ''), u.email) AS addedBy
         FROM album_items ai JOIN items i ON i.id = ai.item_id JOIN users u ON u.id = i.account_id
         LEFT JOIN thumbnails t ON ${THUMBNAIL_OF_ITEM}
         WHERE ai.album_id = ? AND ${LIVE} ${keyset}
         ORDER BY ${TAKEN} DESC, i.id DESC LIMIT ?`,
      )
      .all(...args);
  }

  /** The album's public link, if it has one. */
  linkOf(albumId: string): AlbumLinkRow | null {
    return this.sqlite.query<AlbumLinkRow, [string]>(`SELECT ${LINK} FROM album_links WHERE album_id = ?`).get(albumId);
  }

  linkByToken(token: string): AlbumLinkRow | null {
    return this.sqlite.query<AlbumLinkRow, [string]>(`SELECT ${LINK} FROM album_links WHERE token = ?`).get(token);
  }

  insertLink(row: {
    albumId: string;
    token: string;
    createdBy: string;
    createdAt: number;
    expiresAt: number | null;
    passwordHash: string | null;
    maxDownloads: number | null;
  }): void {
    this.sqlite
      .query(
        'INSERT INTO album_links (album_id, token, created_by, created_at, expires_at, password_hash, max_downloads) VALUES (?, ?, ?, ?, ?, ?, ?)',
      )
      .run(row.albumId, row.token, row.createdBy, row.createdAt, row.expiresAt, row.passwordHash, row.maxDownloads);
  }

  /** Sets the options named; an absent one keeps its value. */
  updateLink(albumId: string, patch: { expiresAt?: number | null; passwordHash?: string | null; maxDownloads?: number | null }): void {
    if (patch.expiresAt !== undefined)
      this.sqlite.query('UPDATE album_links SET expires_at = ? WHERE album_id = ?').run(patch.expiresAt, albumId);
    if (patch.passwordHash !== undefined)
      this.sqlite.query('UPDATE album_links SET password_hash = ? WHERE album_id = ?').run(patch.passwordHash, albumId);
    if (patch.maxDownloads !== undefined)
      this.sqlite.query('UPDATE album_links SET max_downloads = ? WHERE album_id = ?').run(patch.maxDownloads, albumId);
  }

  removeLink(albumId: string): boolean {
    return changesOf(this.sqlite.query('DELETE FROM album_links WHERE album_id = ?').run(albumId)) > 0;
  }

  /** Counts one download unless the cap is reached; one statement, so concurrent downloads never pass the cap. */
  countLinkDownload(albumId: string, at: number): boolean {
    return (
      changesOf(
        this.sqlite
          .query(
            'UPDATE album_links SET downloads = downloads + 1, last_used_at = ? WHERE album_id = ? AND (max_downloads IS NULL OR downloads < max_downloads)',
          )
          .run(at, albumId),
      ) === 1
    );
  }

  touchLink(albumId: string, at: number): void {
    this.sqlite.query('UPDATE album_links SET last_used_at = ? WHERE album_id = ?').run(at, albumId);
  }

  /** The album's row whoever owns it (the public door knows only the link). */
  byIdAnyAccount(id: string): AlbumRow | null {
    return this.sqlite.query<AlbumRow, [string]>(`SELECT ${ALBUM} FROM albums a WHERE a.id = ?`).get(id);
  }
}
