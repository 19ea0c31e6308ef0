import type { Database } from 'bun:sqlite';
import type { CoreContext } from '../context.ts';
import { AppError, Messages, notFound } from '../errors.ts';
import { decodeCursor, encodeCursor } from '../lib/cursor.ts';
import { newId, newToken } from '../lib/ids.ts';
import type { Principal } from './principal.ts';

export const EXPIRIES = { '7d': 7 * 24 * 3600_000, '30d': 30 * 24 * 3600_000, never: null } as const;
export type Expiry = keyof typeof EXPIRIES;

/** Share fields every item response carries (SPEC "Item"). */
export interface ShareState {
  shared: boolean;
  sharedAt: string | null;
  expiresAt: string | null;
}

export const NOT_SHARED: ShareState = Object.freeze({ shared: false, sharedAt: null, expiresAt: null });

export interface ShareLink {
  id: string;
  token: string;
  accountId: string;
  itemId: string;
  expiresAt: number | null;
}

/** An item as a share page shows it. */
export interface PublicItem {
  id: string;
  name: string;
  type: 'file' | 'folder';
  size: number | null;
  mimeType: string | null;
  modified: string;
}

export interface PublicItemRow {
  id: string;
  account_id: string;
  parent_id: string | null;
  type: 'file' | 'folder';
  name: string;
  name_key: string;
  size: number;
  mime_type: string | null;
  storage_key: string | null;
  wrapped_key: string | null;
  modified_at: number;
}

export const toPublicItem = (r: PublicItemRow): PublicItem => ({
  id: r.id,
  name: r.name,
  type: r.type,
  size: r.type === 'folder' ? null : r.size,
  mimeType: r.type === 'folder' ? null : r.mime_type,
  modified: new Date(r.modified_at).toISOString(),
});

/** What happened to a share, for the audit log (one function, so every path reports the same way). */
export type ShareAuditAction = 'share.created' | 'share.removed' | 'share.accessed' | 'share.downloaded';
export type ShareAuditListener = (event: { action: ShareAuditAction; accountId: string; linkId: string; itemId: string; loginId?: string; ip?: string }) => void;

const ITEM_COLUMNS = 'id, account_id, parent_id, type, name, name_key, size, mime_type, storage_key, wrapped_key, modified_at';

/**
 * Public share links: one link per shared root item (token of 192 random bits), optional expiry, and
 * the membership rows that mark items as shared. Visibility through a folder link is structural: the
 * live subtree of its root, so uploads into the folder show and items moved out leave.
 */
export class ShareService {
  private readonly sqlite: Database;
  private readonly auditListeners = new Set<ShareAuditListener>();

  constructor(private readonly ctx: CoreContext) {
    this.sqlite = ctx.db.$client;
  }

  onAudit(listener: ShareAuditListener): () => void {
    this.auditListeners.add(listener);
    return () => this.auditListeners.delete(listener);
  }

  audit(event: Parameters<ShareAuditListener>[0]): void {
    for (const l of this.auditListeners) l(event);
  }

  /** Live items of the account; any other id (missing, trashed, another account's) is 404. */
  private ownedLive(principal: Principal, ids: readonly string[]): Array<{ id: string; parent_id: string | null; type: string }> {
    const unique = [...new Set(ids)];
    const rows = this.sqlite
      .query<{ id: string; parent_id: string | null; type: string }, string[]>(
        `SELECT id, parent_id, type FROM items WHERE account_id = ? AND deleted_at IS NULL AND id IN (${unique.map(() => '?').join(',')})`,
      )
      .all(principal.accountId, ...unique);
    if (rows.length !== unique.length) throw notFound(Messages.itemNotFound);
    return rows;
  }

  private linkOf(itemId: string): ShareLink | null {
    return (
      this.sqlite
        .query<ShareLink, [string]>('SELECT id, token, account_id AS accountId, item_id AS itemId, expires_at AS expiresAt FROM share_links WHERE item_id = ?')
        .get(itemId) ?? null
    );
  }

  /** Shares each item under its own link (created, or its expiry updated). */
  share(principal: Principal, ids: readonly string[], expiry: Expiry, origin: string): { links: Record<string, string> } {
    const now = this.ctx.clock.now();
    const ttl = EXPIRIES[expiry];
    const expiresAt = ttl === null ? null : now + ttl;
    const created: ShareLink[] = [];
    const links = this.sqlite
      .transaction(() => {
        const out: Record<string, string> = {};
        for (const item of this.ownedLive(principal, ids)) {
          let link = this.linkOf(item.id);
          if (link) {
            this.sqlite.query('UPDATE share_links SET expires_at = ? WHERE id = ?').run(expiresAt, link.id);
          } else {
            link = { id: newId(), token: newToken(), accountId: principal.accountId, itemId: item.id, expiresAt };
            this.sqlite
              .query('INSERT INTO share_links (id, token, account_id, item_id, created_by, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?)')
              .run(link.id, link.token, link.accountId, link.itemId, principal.loginId, now, expiresAt);
            this.sqlite.query('INSERT OR IGNORE INTO share_items (link_id, item_id, shared_at) VALUES (?, ?, ?)').run(link.id, item.id, now);
            created.push(link);
          }
          out[item.id] = shareUrl(origin, link.token);
        }
        return out;
      })
      .immediate();
    for (const link of created) this.audit({ action: 'share.created', accountId: link.accountId, linkId: link.id, itemId: link.itemId, loginId: principal.loginId, ip: principal.ip });
    return { links };
  }

  /** Removes the items' own links and their memberships in other links. */
  unshare(principal: Principal, ids: readonly string[]): { message: string } {
    const owned = this.ownedLive(principal, ids).map((r) => r.id);
    const marks = owned.map(() => '?').join(',');
    const removed = this.sqlite
      .transaction(() => {
        const links = this.sqlite
          .query<{ id: string; item_id: string }, string[]>(`SELECT id, item_id FROM share_links WHERE item_id IN (${marks})`)
          .all(...owned);
        this.sqlite.query(`DELETE FROM share_items WHERE item_id IN (${marks})`).run(...owned);
        this.sqlite.query(`DELETE FROM share_links WHERE item_id IN (${marks})`).run(...owned);
        return links;
      })
      .immediate();
    for (const l of removed) this.audit({ action: 'share.removed', accountId: principal.accountId, linkId: l.id, itemId: l.item_id, loginId: principal.loginId, ip: principal.ip });
    return { message: owned.length === 1 ? 'Item is no longer shared' : `${owned.length} items are no longer shared` };
  }

  /** Existing links of the items; creates none. */
  links(principal: Principal, ids: readonly string[], origin: string): { links: Record<string, string> } {
    const out: Record<string, string> = {};
    for (const item of this.ownedLive(principal, ids)) {
      const link = this.linkOf(item.id);
      if (link) out[item.id] = shareUrl(origin, link.token);
    }
    return { links: out };
  }

  /** Adds items to their parent folder's share, when the parent is shared; returns their URLs inside it. */
  linkParentShare(principal: Principal, ids: readonly string[], origin: string): { links: Record<string, string> } {
    const now = this.ctx.clock.now();
    const links = this.sqlite
      .transaction(() => {
        const out: Record<string, string> = {};
        for (const item of this.ownedLive(principal, ids)) {
          const parentLink = item.parent_id ? this.linkOf(item.parent_id) : null;
          if (!parentLink) continue;
          this.sqlite.query('INSERT OR IGNORE INTO share_items (link_id, item_id, shared_at) VALUES (?, ?, ?)').run(parentLink.id, item.id, now);
          out[item.id] = `${shareUrl(origin, parentLink.token)}/${item.type === 'folder' ? 'folder' : 'file'}/${item.id}`;
        }
        return out;
      })
      .immediate();
    return { links };
  }

  /** shared/sharedAt/expiresAt for many items at once (null expiry wins; else the latest). */
  stateOf(itemIds: readonly string[]): Map<string, ShareState> {
    const out = new Map<string, ShareState>();
    if (itemIds.length === 0) return out;
    const rows = this.sqlite
      .query<{ item_id: string; shared_at: number; has_never: number; latest: number | null }, string[]>(
        `SELECT si.item_id, MIN(si.shared_at) AS shared_at, MAX(l.expires_at IS NULL) AS has_never, MAX(l.expires_at) AS latest
         FROM share_items si JOIN share_links l ON l.id = si.link_id
         WHERE si.item_id IN (${itemIds.map(() => '?').join(',')}) GROUP BY si.item_id`,
      )
      .all(...itemIds);
    for (const r of rows) {
      out.set(r.item_id, {
        shared: true,
        sharedAt: new Date(r.shared_at).toISOString(),
        expiresAt: r.has_never || r.latest === null ? null : new Date(r.latest).toISOString(),
      });
    }
    return out;
  }

  sharedCount(accountId: string): number {
    return this.sqlite.query<{ n: number }, [string]>('SELECT COUNT(*) AS n FROM share_links WHERE account_id = ?').get(accountId)!.n;
  }

  /** After a move: memberships whose link root is no longer an ancestor (or the item itself) are dropped. */
  detachMoved(itemIds: readonly string[]): number {
    let removed = 0;
    const memberships = this.sqlite.query<{ link_id: string; root: string }, [string]>(
      'SELECT si.link_id, l.item_id AS root FROM share_items si JOIN share_links l ON l.id = si.link_id WHERE si.item_id = ? AND l.item_id != si.item_id',
    );
    for (const id of itemIds) {
      for (const m of memberships.all(id)) {
        if (!this.isWithin(m.root, id)) {
          removed += this.sqlite.query('DELETE FROM share_items WHERE link_id = ? AND item_id = ?').run(m.link_id, id).changes;
        }
      }
    }
    return removed;
  }

  // ---- public side (no session) ----

  /** The link of a token and its live root item: 404 when missing or the root is gone, 410 when expired. */
  resolve(token: string): { link: ShareLink; root: PublicItemRow } {
    const link =
      this.sqlite
        .query<ShareLink, [string]>('SELECT id, token, account_id AS accountId, item_id AS itemId, expires_at AS expiresAt FROM share_links WHERE token = ?')
        .get(token) ?? null;
    if (!link) throw notFound(Messages.shareNotFound);
    if (link.expiresAt !== null && link.expiresAt <= this.ctx.clock.now()) throw new AppError(410, Messages.shareExpired);
    const root = this.sqlite
      .query<PublicItemRow, [string]>(`SELECT ${ITEM_COLUMNS} FROM items WHERE id = ? AND deleted_at IS NULL`)
      .get(link.itemId);
    if (!root) throw notFound(Messages.shareNotFound);
    return { link, root };
  }

  /** An item reachable through the link: its root or a live descendant of it; anything else is 404. */
  itemInShare(token: string, itemId: string): { link: ShareLink; root: PublicItemRow; item: PublicItemRow } {
    const { link, root } = this.resolve(token);
    if (itemId === root.id) return { link, root, item: root };
    const item = this.sqlite
      .query<PublicItemRow, [string, string]>(`SELECT ${ITEM_COLUMNS} FROM items WHERE id = ? AND account_id = ? AND deleted_at IS NULL`)
      .get(itemId, link.accountId);
    if (!item || root.type !== 'folder' || !this.isWithin(root.id, item.id)) throw notFound(Messages.itemNotInShare);
    return { link, root, item };
  }

  /** One page of a shared folder: folders first, then by name; `cursor` continues the previous page. */
  folderPage(accountId: string, folderId: string, opts: { limit: number; cursor?: string }): { items: PublicItem[]; nextCursor: string | null } {
    const after = opts.cursor ? decodeCursor(opts.cursor, ['string', 'string', 'string']) : null;
    if (after && after[0] !== 'folder' && after[0] !== 'file') throw new AppError(400, Messages.invalidCursor);
    const page = this.sqlite.query<PublicItemRow, [string, string, string, number, string, string, number]>(
      `SELECT ${ITEM_COLUMNS} FROM items
       WHERE account_id = ?1 AND parent_id = ?2 AND deleted_at IS NULL AND type = ?3
         AND (?4 = 0 OR (name_key, id) > (?5, ?6))
       ORDER BY name_key, id LIMIT ?7`,
    );
    const rows: PublicItemRow[] = [];
    const want = opts.limit + 1;
    for (const type of ['folder', 'file'] as const) {
      if (after?.[0] === 'file' && type === 'folder') continue;
      const resume = after !== null && after[0] === type;
      rows.push(...page.all(accountId, folderId, type, resume ? 1 : 0, resume ? (after![1] as string) : '', resume ? (after![2] as string) : '', want - rows.length));
      if (rows.length >= want) break;
    }
    const items = rows.slice(0, opts.limit);
    const last = items.at(-1);
    return {
      items: items.map(toPublicItem),
      nextCursor: rows.length > opts.limit && last ? encodeCursor([last.type, last.name_key, last.id]) : null,
    };
  }

  /** Whether `id` is `rootId` or lies under it through live folders. */
  private isWithin(rootId: string, id: string): boolean {
    const row = this.sqlite
      .query<{ found: number }, [string, string]>(
        `WITH RECURSIVE up(id, parent_id, depth) AS (
           SELECT id, parent_id, 0 FROM items WHERE id = ?1 AND deleted_at IS NULL
           UNION ALL
           SELECT i.id, i.parent_id, up.depth + 1 FROM items i JOIN up ON i.id = up.parent_id
           WHERE up.id != ?2 AND i.deleted_at IS NULL AND up.depth < 10000
         )
         SELECT EXISTS (SELECT 1 FROM up WHERE id = ?2) AS found`,
      )
      .get(id, rootId);
    return Boolean(row?.found);
  }
}

export function shareUrl(origin: string, token: string): string {
  return `${origin}/s/${token}`;
}
