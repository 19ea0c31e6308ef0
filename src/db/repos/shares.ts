import type { Database } from 'bun:sqlite';
import { shareDrops, shareLinks } from '../schema/shares.ts';
import { selectList } from '../select.ts';

type LinkRow = typeof shareLinks.$inferSelect;
export type ShareLink = Pick<
  LinkRow,
  'id' | 'token' | 'accountId' | 'itemId' | 'expiresAt' | 'passwordHash' | 'mode' | 'maxDownloads' | 'downloads'
>;
export type ShareMode = LinkRow['mode'];
/** What an owner can change on a link; an absent field stays as it is. */
export type LinkOptions = Partial<Pick<LinkRow, 'passwordHash' | 'mode' | 'maxDownloads'>>;

/** A link as its owner's list shows it (never the password hash: only whether there is one). */
export type OwnedLink = Pick<
  LinkRow,
  'id' | 'token' | 'itemId' | 'createdAt' | 'expiresAt' | 'mode' | 'maxDownloads' | 'downloads' | 'lastUsedAt'
> & { itemName: string; hasPassword: boolean; accountId: string };

export type ShareDrop = Omit<typeof shareDrops.$inferSelect, 'ip'>;

/** An item's place in shares: when it first joined one, and when access ends (null: a link never expires). */
export interface ShareStatus {
  sharedAt: number;
  expiresAt: number | null;
}

const LINK = selectList(shareLinks, [
  'id',
  'token',
  'accountId',
  'itemId',
  'expiresAt',
  'passwordHash',
  'mode',
  'maxDownloads',
  'downloads',
]);
const OWNED = `${selectList(
  shareLinks,
  ['id', 'token', 'accountId', 'itemId', 'createdAt', 'expiresAt', 'mode', 'maxDownloads', 'downloads', 'lastUsedAt'],
  'l.',
)}, i.name AS itemName, l.password_hash IS NOT NULL AS hasPassword`;
type OwnedRow = Omit<OwnedLink, 'hasPassword'> & { hasPassword: number };
const owned = (r: OwnedRow): OwnedLink => ({ ...r, hasPassword: r.hasPassword === 1 });

/** The SQL of public links (`share_links`) and what they expose (`share_items`). */
export class SharesRepo {
  constructor(private readonly sqlite: Database) {}

  linkOfItem(itemId: string): ShareLink | null {
    return this.sqlite.query<ShareLink, [string]>(`SELECT ${LINK} FROM share_links WHERE item_id = ?`).get(itemId);
  }

  linkById(id: string): ShareLink | null {
    return this.sqlite.query<ShareLink, [string]>(`SELECT ${LINK} FROM share_links WHERE id = ?`).get(id);
  }

  linkByToken(token: string): ShareLink | null {
    return this.sqlite.query<ShareLink, [string]>(`SELECT ${LINK} FROM share_links WHERE token = ?`).get(token);
  }

  insertLink(link: ShareLink, createdBy: string, at: number): void {
    this.sqlite
      .query(
        `INSERT INTO share_links (id, token, account_id, item_id, created_by, created_at, expires_at, password_hash, mode, max_downloads)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        link.id,
        link.token,
        link.accountId,
        link.itemId,
        createdBy,
        at,
        link.expiresAt,
        link.passwordHash,
        link.mode,
        link.maxDownloads,
      );
    this.addMember(link.id, link.itemId, at);
  }

  setOptions(linkId: string, options: LinkOptions): void {
    if (options.passwordHash !== undefined)
      this.sqlite.query('UPDATE share_links SET password_hash = ? WHERE id = ?').run(options.passwordHash, linkId);
    if (options.mode !== undefined) this.sqlite.query('UPDATE share_links SET mode = ? WHERE id = ?').run(options.mode, linkId);
    if (options.maxDownloads !== undefined)
      this.sqlite.query('UPDATE share_links SET max_downloads = ? WHERE id = ?').run(options.maxDownloads, linkId);
  }

  /** Counts one download unless the cap is reached; one statement, so concurrent downloads never pass the cap. */
  countDownload(linkId: string, at: number): boolean {
    return (
      this.sqlite
        .query(
          'UPDATE share_links SET downloads = downloads + 1, last_used_at = ? WHERE id = ? AND (max_downloads IS NULL OR downloads < max_downloads)',
        )
        .run(at, linkId).changes === 1
    );
  }

  touch(linkId: string, at: number): void {
    this.sqlite.query('UPDATE share_links SET last_used_at = ? WHERE id = ?').run(at, linkId);
  }

  ownedByToken(accountId: string, token: string): OwnedLink | null {
    const row = this.sqlite
      .query<OwnedRow, [string, string]>(
        `SELECT ${OWNED} FROM share_links l JOIN items i ON i.id = l.item_id WHERE l.token = ? AND l.account_id = ?`,
      )
      .get(token, accountId);
    return row ? owned(row) : null;
  }

  /**
   * An account's links (every account's when null; only one item's with `itemId`), newest first; `after` is
   * the last row of the previous page.
   */
  ownedPage(
    accountId: string | null,
    limit: number,
    after: { createdAt: number; id: string } | null,
    itemId: string | null = null,
  ): OwnedLink[] {
    return this.sqlite
      .query<OwnedRow, [string | null, number | null, string | null, string | null, number]>(
        `SELECT ${OWNED} FROM share_links l JOIN items i ON i.id = l.item_id
         WHERE (?1 IS NULL OR l.account_id = ?1) AND (?4 IS NULL OR l.item_id = ?4)
           AND (?2 IS NULL OR l.created_at < ?2 OR (l.created_at = ?2 AND l.id < ?3))
         ORDER BY l.created_at DESC, l.id DESC LIMIT ?5`,
      )
      .all(accountId, after?.createdAt ?? null, after?.id ?? null, itemId, limit)
      .map(owned);
  }

  insertDrop(drop: ShareDrop & { ip: string }): void {
    this.sqlite
      .query('INSERT INTO share_drops (item_id, link_id, visit_id, uploader, ip, created_at) VALUES (?, ?, ?, ?, ?, ?)')
      .run(drop.itemId, drop.linkId, drop.visitId, drop.uploader, drop.ip, drop.createdAt);
  }

  /** What one visit dropped through a link (live items only), oldest first, at most `limit`. */
  dropsOfVisit(linkId: string, visitId: string, limit: number): Array<{ name: string; size: number }> {
    return this.sqlite
      .query<{ name: string; size: number }, [string, string, number]>(
        `SELECT i.name AS name, i.size AS size FROM share_drops d JOIN items i ON i.id = d.item_id
         WHERE d.link_id = ? AND d.visit_id = ? AND i.deleted_at IS NULL ORDER BY d.created_at LIMIT ?`,
      )
      .all(linkId, visitId, limit);
  }

  /** Who dropped an item through a link (the name they gave, if any) and when; null when it was not dropped. */
  dropOf(itemId: string): { uploader: string | null; createdAt: number } | null {
    return this.sqlite
      .query<{ uploader: string | null; createdAt: number }, [string]>(
        'SELECT uploader, created_at AS createdAt FROM share_drops WHERE item_id = ?',
      )
      .get(itemId);
  }

  setExpiry(linkId: string, expiresAt: number | null): void {
    this.sqlite.query('UPDATE share_links SET expires_at = ? WHERE id = ?').run(expiresAt, linkId);
  }

  addMember(linkId: string, itemId: string, at: number): void {
    this.sqlite.query('INSERT OR IGNORE INTO share_items (link_id, item_id, shared_at) VALUES (?, ?, ?)').run(linkId, itemId, at);
  }

  /** Removes the items' own links and their memberships in other links; answers the links removed. */
  removeForItems(itemIds: readonly string[]): Array<{ id: string; itemId: string }> {
    const ids = JSON.stringify(itemIds);
    const removed = this.sqlite
      .query<{ id: string; itemId: string }, [string]>(
        'SELECT id, item_id AS itemId FROM share_links WHERE item_id IN (SELECT value FROM json_each(?))',
      )
      .all(ids);
    this.sqlite.query('DELETE FROM share_items WHERE item_id IN (SELECT value FROM json_each(?))').run(ids);
    this.sqlite.query('DELETE FROM share_links WHERE item_id IN (SELECT value FROM json_each(?))').run(ids);
    return removed;
  }

  /**
   * Share status of the given items (docs/api.md › Conventions, item fields): sharedAt is the earliest join; expiresAt is null
   * when any link has no expiry, else the latest. Items in no share are absent. One cheap probe skips
   * the lookup for accounts that share nothing.
   */
  statusOf(accountId: string, ids: readonly string[]): Map<string, ShareStatus> {
    const out = new Map<string, ShareStatus>();
    if (ids.length === 0) return out;
    if (!this.sqlite.query<{ x: number }, [string]>('SELECT 1 AS x FROM share_links WHERE account_id = ? LIMIT 1').get(accountId))
      return out;
    const rows = this.sqlite
      .query<{ itemId: string; sharedAt: number; never: number; latest: number | null }, [string, string]>(
        `SELECT si.item_id AS itemId, MIN(si.shared_at) AS sharedAt, MAX(l.expires_at IS NULL) AS never, MAX(l.expires_at) AS latest
         FROM share_items si JOIN share_links l ON l.id = si.link_id
         WHERE si.item_id IN (SELECT value FROM json_each(?)) AND l.account_id = ?
         GROUP BY si.item_id`,
      )
      .all(JSON.stringify(ids), accountId);
    for (const r of rows) out.set(r.itemId, { sharedAt: r.sharedAt, expiresAt: r.never ? null : r.latest });
    return out;
  }

  linkCount(accountId: string): number {
    return this.sqlite.query<{ n: number }, [string]>('SELECT COUNT(*) AS n FROM share_links WHERE account_id = ?').get(accountId)!.n;
  }

  /** Memberships added with link-parent-share of `id` and everything under it (not the links' own roots). */
  joinedMembershipsBelow(id: string): Array<{ linkId: string; itemId: string; linkRootId: string }> {
    return this.sqlite
      .query<{ linkId: string; itemId: string; linkRootId: string }, [string]>(
        `WITH RECURSIVE sub(id) AS (SELECT ?1 UNION ALL SELECT i.id FROM items i JOIN sub ON i.parent_id = sub.id)
         SELECT si.link_id AS linkId, si.item_id AS itemId, l.item_id AS linkRootId
         FROM share_items si JOIN sub ON si.item_id = sub.id JOIN share_links l ON l.id = si.link_id
         WHERE l.item_id != si.item_id`,
      )
      .all(id);
  }

  /**
   * Memberships added with link-parent-share that removing the links `linkIds`, or the items `itemIds`' own
   * links and memberships (removeForItems), ends.
   */
  joinedEndedBy(ends: { linkIds?: readonly string[]; itemIds?: readonly string[] }): Array<{ linkId: string; itemId: string }> {
    return this.sqlite
      .query<{ linkId: string; itemId: string }, [string, string]>(
        `SELECT si.link_id AS linkId, si.item_id AS itemId FROM share_items si JOIN share_links l ON l.id = si.link_id
         WHERE l.item_id != si.item_id AND (l.id IN (SELECT value FROM json_each(?1))
           OR l.item_id IN (SELECT value FROM json_each(?2)) OR si.item_id IN (SELECT value FROM json_each(?2)))
         ORDER BY si.shared_at, si.item_id`,
      )
      .all(JSON.stringify(ends.linkIds ?? []), JSON.stringify(ends.itemIds ?? []));
  }

  removeMember(linkId: string, itemId: string): number {
    return this.sqlite.query('DELETE FROM share_items WHERE link_id = ? AND item_id = ?').run(linkId, itemId).changes;
  }

  /** Up to `limit` links that expired before `cutoff`, oldest first. */
  expiredBefore(cutoff: number, limit: number): Array<{ id: string; accountId: string; itemId: string }> {
    return this.sqlite
      .query<{ id: string; accountId: string; itemId: string }, [number, number]>(
        'SELECT id, account_id AS accountId, item_id AS itemId FROM share_links WHERE expires_at IS NOT NULL AND expires_at < ? ORDER BY expires_at LIMIT ?',
      )
      .all(cutoff, limit);
  }

  /** Removes links by id (their memberships go with them). */
  removeLinks(ids: readonly string[]): number {
    return this.sqlite.query('DELETE FROM share_links WHERE id IN (SELECT value FROM json_each(?))').run(JSON.stringify(ids)).changes;
  }
}
