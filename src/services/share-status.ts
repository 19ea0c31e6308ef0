import type { Database } from 'bun:sqlite';

/** An item's place in shares: when it first joined one, and when access ends (null: a link never expires). */
export interface ShareStatus {
  sharedAt: number;
  expiresAt: number | null;
}

/**
 * Share status of the given items from `share_items` and `share_links` (SPEC Item fields): sharedAt is
 * the earliest join; expiresAt is null when any link has no expiry, else the latest expiry. Items in no
 * share are absent from the map. One cheap probe skips the lookup for accounts that share nothing.
 */
export function shareStatusOf(sqlite: Database, accountId: string, ids: readonly string[]): Map<string, ShareStatus> {
  const out = new Map<string, ShareStatus>();
  if (ids.length === 0) return out;
  if (!sqlite.query<{ x: number }, [string]>('SELECT 1 AS x FROM share_links WHERE account_id = ? LIMIT 1').get(accountId)) return out;
  const rows = sqlite
    .query<{ item_id: string; shared_at: number; never: number; latest: number | null }, [string, string]>(
      `SELECT si.item_id, MIN(si.shared_at) AS shared_at, MAX(l.expires_at IS NULL) AS never, MAX(l.expires_at) AS latest
       FROM share_items si JOIN share_links l ON l.id = si.link_id
       WHERE si.item_id IN (SELECT value FROM json_each(?)) AND l.account_id = ?
       GROUP BY si.item_id`,
    )
    .all(JSON.stringify(ids), accountId);
  for (const r of rows) out.set(r.item_id, { sharedAt: r.shared_at, expiresAt: r.never ? null : r.latest });
  return out;
}

/** Share links the account has created (stats `sharedCount`). */
export function shareLinkCount(sqlite: Database, accountId: string): number {
  return sqlite.query<{ n: number }, [string]>('SELECT COUNT(*) AS n FROM share_links WHERE account_id = ?').get(accountId)!.n;
}

/** Whether `id` is `rootId` or lies under it. */
export function isWithinItem(sqlite: Database, rootId: string, id: string): boolean {
  const row = sqlite
    .query<{ found: number }, [string, string]>(
      `WITH RECURSIVE up(id, parent_id) AS (
         SELECT id, parent_id FROM items WHERE id = ?1
         UNION ALL
         SELECT i.id, i.parent_id FROM items i JOIN up ON i.id = up.parent_id WHERE up.id != ?2
       )
       SELECT EXISTS (SELECT 1 FROM up WHERE id = ?2) AS found`,
    )
    .get(id, rootId);
  return Boolean(row?.found);
}

/**
 * After a move: items (the moved ones and everything under them) that joined a folder's share with
 * link-parent-share leave it when they are no longer inside that folder. Run in the move's transaction.
 */
export function leaveSharesOutside(sqlite: Database, movedIds: readonly string[]): number {
  let removed = 0;
  const memberships = sqlite.query<{ link_id: string; item_id: string; root: string }, [string]>(
    `WITH RECURSIVE sub(id) AS (SELECT ?1 UNION ALL SELECT i.id FROM items i JOIN sub ON i.parent_id = sub.id)
     SELECT si.link_id, si.item_id, l.item_id AS root
     FROM share_items si JOIN sub ON si.item_id = sub.id JOIN share_links l ON l.id = si.link_id
     WHERE l.item_id != si.item_id`,
  );
  const drop = sqlite.query('DELETE FROM share_items WHERE link_id = ? AND item_id = ?');
  for (const id of movedIds) {
    for (const m of memberships.all(id)) {
      if (!isWithinItem(sqlite, m.root, m.item_id)) removed += drop.run(m.link_id, m.item_id).changes;
    }
  }
  return removed;
}
