import type { Database } from 'bun:sqlite';
import { shareLinks } from '../schema/shares.ts';
import { deleteInBatches, selectList } from '../select.ts';

export type ShareLink = Pick<typeof shareLinks.$inferSelect, 'id' | 'token' | 'accountId' | 'itemId' | 'expiresAt'>;

/** An item's place in shares: when it first joined one, and when access ends (null: a link never expires). */
export interface ShareStatus {
  sharedAt: number;
  expiresAt: number | null;
}

const LINK = selectList(shareLinks, ['id', 'token', 'accountId', 'itemId', 'expiresAt']);

/** The SQL of public links (`share_links`) and what they expose (`share_items`). */
export class SharesRepo {
  constructor(private readonly sqlite: Database) {}

  linkOfItem(itemId: string): ShareLink | null {
    return this.sqlite.query<ShareLink, [string]>(`SELECT ${LINK} FROM share_links WHERE item_id = ?`).get(itemId);
  }

  linkByToken(token: string): ShareLink | null {
    return this.sqlite.query<ShareLink, [string]>(`SELECT ${LINK} FROM share_links WHERE token = ?`).get(token);
  }

  insertLink(link: ShareLink, createdBy: string, at: number): void {
    this.sqlite
      .query('INSERT INTO share_links (id, token, account_id, item_id, created_by, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?)')
      .run(link.id, link.token, link.accountId, link.itemId, createdBy, at, link.expiresAt);
    this.addMember(link.id, link.itemId, at);
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
   * Share status of the given items (SPEC Item fields): sharedAt is the earliest join; expiresAt is null
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

  removeMember(linkId: string, itemId: string): number {
    return this.sqlite.query('DELETE FROM share_items WHERE link_id = ? AND item_id = ?').run(linkId, itemId).changes;
  }

  /** Removes links that expired before `cutoff` (their memberships go with them), in batches. */
  purgeExpiredBefore(cutoff: number, batch = 500): number {
    return deleteInBatches(
      batch,
      (limit) =>
        this.sqlite
          .query('DELETE FROM share_links WHERE id IN (SELECT id FROM share_links WHERE expires_at IS NOT NULL AND expires_at < ? LIMIT ?)')
          .run(cutoff, limit).changes,
    );
  }
}
