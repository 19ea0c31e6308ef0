import type { Database } from 'bun:sqlite';
import type { CoreContext } from '../context.ts';
import { ITEM_COLUMNS, type ItemRow } from '../db/repos/items.ts';
import { AppError, Messages, notFound } from '../errors.ts';
import { decodeCursor, encodeCursor } from '../lib/cursor.ts';
import { newId, newToken } from '../lib/ids.ts';
import { AuditActions, type AuditService } from './audit.ts';
import { FileEventType } from './file-events.ts';
import type { ItemService } from './items.ts';
import type { Principal } from './principal.ts';
import { isWithinItem } from './share-status.ts';
import { PageCache } from './page-cache.ts';

export const EXPIRIES = { '7d': 7 * 24 * 3600_000, '30d': 30 * 24 * 3600_000, never: null } as const;
export type Expiry = keyof typeof EXPIRIES;

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

// What a share page shows of a row (never key material).
const PAGE_COLUMNS = 'id, type, name, name_key, size, mime_type, modified_at';
type PageRow = Pick<ItemRow, 'id' | 'type' | 'name' | 'name_key' | 'size' | 'mime_type' | 'modified_at'>;

export const toPublicItem = (r: PageRow): PublicItem => ({
  id: r.id,
  name: r.name,
  type: r.type,
  size: r.type === 'folder' ? null : r.size,
  mimeType: r.type === 'folder' ? null : r.mime_type,
  modified: new Date(r.modified_at).toISOString(),
});

const VISIT_DEDUP_MS = 10 * 60_000;
const LINK_COLUMNS = 'id, token, account_id AS accountId, item_id AS itemId, expires_at AS expiresAt';

/**
 * Public share links: one link per shared root item (token of 192 random bits), an optional expiry,
 * and membership rows that mark items as shared. What a folder link exposes is structural: the live
 * subtree of its root, so uploads into the folder show at once and items moved out are gone.
 */
export class ShareService {
  private readonly sqlite: Database;
  private readonly recentVisits = new Map<string, number>();
  private readonly pages: PageCache<{ items: PublicItem[]; nextCursor: string | null }>;

  constructor(
    private readonly ctx: CoreContext,
    private readonly items: ItemService,
    private readonly audit: AuditService,
  ) {
    this.sqlite = ctx.db.$client;
    this.pages = new PageCache(this.sqlite, (page) => page.items.length);
  }

  private linkOf(itemId: string): ShareLink | null {
    return this.sqlite.query<ShareLink, [string]>(`SELECT ${LINK_COLUMNS} FROM share_links WHERE item_id = ?`).get(itemId) ?? null;
  }

  /** Shares each item under its own link: created, or its expiry updated when it already has one. */
  share(principal: Principal, ids: readonly string[], expiry: Expiry, origin: string): { links: Record<string, string> } {
    const now = this.ctx.clock.now();
    const ttl = EXPIRIES[expiry];
    const expiresAt = ttl === null ? null : now + ttl;
    const { links, created, rows } = this.sqlite
      .transaction(() => {
        const rows = this.items.requireLiveMany(principal, [...new Set(ids)]);
        const links: Record<string, string> = {};
        const created: ShareLink[] = [];
        for (const item of rows) {
          let link = this.linkOf(item.id);
          if (link) {
            this.sqlite.query('UPDATE share_links SET expires_at = ? WHERE id = ?').run(expiresAt, link.id);
          } else {
            link = { id: newId(), token: newToken(), accountId: principal.accountId, itemId: item.id, expiresAt };
            this.sqlite
              .query(
                'INSERT INTO share_links (id, token, account_id, item_id, created_by, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
              )
              .run(link.id, link.token, link.accountId, link.itemId, principal.loginId, now, expiresAt);
            this.sqlite
              .query('INSERT OR IGNORE INTO share_items (link_id, item_id, shared_at) VALUES (?, ?, ?)')
              .run(link.id, item.id, now);
            created.push(link);
          }
          links[item.id] = shareUrl(origin, link.token);
        }
        return { links, created, rows };
      })
      .immediate();
    for (const link of created) {
      this.audit.record({
        action: AuditActions.shareCreate,
        principal,
        targetType: 'share',
        targetId: link.id,
        details: { itemId: link.itemId, expiry },
      });
    }
    for (const row of rows) this.items.events.item(principal, FileEventType.shared, row, { shared: true });
    return { links };
  }

  /** Removes the items' own links and their memberships in other links. */
  unshare(principal: Principal, ids: readonly string[]): { message: string } {
    const { rows, removed } = this.sqlite
      .transaction(() => {
        const rows = this.items.requireLiveMany(principal, [...new Set(ids)]);
        const marks = rows.map(() => '?').join(',');
        const itemIds = rows.map((r) => r.id);
        const removed = this.sqlite
          .query<{ id: string; item_id: string }, string[]>(`SELECT id, item_id FROM share_links WHERE item_id IN (${marks})`)
          .all(...itemIds);
        this.sqlite.query(`DELETE FROM share_items WHERE item_id IN (${marks})`).run(...itemIds);
        this.sqlite.query(`DELETE FROM share_links WHERE item_id IN (${marks})`).run(...itemIds);
        return { rows, removed };
      })
      .immediate();
    for (const l of removed) {
      this.audit.record({
        action: AuditActions.shareRemove,
        principal,
        targetType: 'share',
        targetId: l.id,
        details: { itemId: l.item_id },
      });
    }
    for (const row of rows) this.items.events.item(principal, FileEventType.shared, row, { shared: false });
    return { message: rows.length === 1 ? 'Item is no longer shared' : `${rows.length} items are no longer shared` };
  }

  /** Existing links of the items; creates none. */
  links(principal: Principal, ids: readonly string[], origin: string): { links: Record<string, string> } {
    const out: Record<string, string> = {};
    for (const item of this.items.requireLiveMany(principal, [...new Set(ids)])) {
      const link = this.linkOf(item.id);
      if (link) out[item.id] = shareUrl(origin, link.token);
    }
    return { links: out };
  }

  /** Adds items to their parent folder's share when the parent is shared; answers their URLs inside it. */
  linkParentShare(principal: Principal, ids: readonly string[], origin: string): { links: Record<string, string> } {
    const now = this.ctx.clock.now();
    const { links, joined } = this.sqlite
      .transaction(() => {
        const links: Record<string, string> = {};
        const joined: ItemRow[] = [];
        for (const item of this.items.requireLiveMany(principal, [...new Set(ids)])) {
          const parentLink = item.parent_id ? this.linkOf(item.parent_id) : null;
          if (!parentLink) continue;
          this.sqlite
            .query('INSERT OR IGNORE INTO share_items (link_id, item_id, shared_at) VALUES (?, ?, ?)')
            .run(parentLink.id, item.id, now);
          links[item.id] = `${shareUrl(origin, parentLink.token)}/${item.type === 'folder' ? 'folder' : 'file'}/${item.id}`;
          joined.push(item);
        }
        return { links, joined };
      })
      .immediate();
    for (const row of joined) this.items.events.item(principal, FileEventType.shared, row, { shared: true });
    return { links };
  }

  // ---- the public side (no session) ----

  /** The link of a token and its live root: 404 when missing or the root is gone, 410 when expired. */
  resolve(token: string): { link: ShareLink; root: ItemRow } {
    const link = this.sqlite.query<ShareLink, [string]>(`SELECT ${LINK_COLUMNS} FROM share_links WHERE token = ?`).get(token) ?? null;
    if (!link) throw notFound(Messages.shareNotFound);
    if (link.expiresAt !== null && link.expiresAt <= this.ctx.clock.now()) throw new AppError(410, Messages.shareExpired);
    const root = this.sqlite
      .query<ItemRow, [string]>(`SELECT ${ITEM_COLUMNS} FROM items WHERE id = ? AND deleted_at IS NULL`)
      .get(link.itemId);
    if (!root) throw notFound(Messages.shareNotFound);
    return { link, root };
  }

  /** An item reachable through the link: its root, or a live item under a shared folder; else 404. */
  itemInShare(token: string, itemId: string): { link: ShareLink; root: ItemRow; item: ItemRow } {
    const { link, root } = this.resolve(token);
    if (itemId === root.id) return { link, root, item: root };
    const item = this.items.repo.getLive(link.accountId, itemId);
    // Trashing a folder trashes everything under it, so a live item under the root is reached only through live folders.
    if (!item || root.type !== 'folder' || !isWithinItem(this.sqlite, root.id, item.id)) throw notFound(Messages.itemNotInShare);
    return { link, root, item };
  }

  /** Folders from the root down to `folder` (both included), for breadcrumbs. */
  trail(root: ItemRow, folder: ItemRow): ItemRow[] {
    const out = [folder];
    let current = folder;
    while (current.id !== root.id && current.parent_id) {
      const parent = this.items.repo.getLive(root.account_id, current.parent_id);
      if (!parent) break;
      out.unshift(parent);
      current = parent;
    }
    return out;
  }

  /** One page of a shared folder: folders first, then by name; `cursor` continues the previous page. */
  folderPage(
    accountId: string,
    folderId: string,
    opts: { limit: number; cursor?: string },
  ): { items: PublicItem[]; nextCursor: string | null } {
    return this.pages.get(JSON.stringify([accountId, folderId, opts.limit, opts.cursor ?? null]), () =>
      this.readFolderPage(accountId, folderId, opts),
    );
  }

  private readFolderPage(
    accountId: string,
    folderId: string,
    opts: { limit: number; cursor?: string },
  ): { items: PublicItem[]; nextCursor: string | null } {
    const after = opts.cursor ? decodeCursor(opts.cursor, ['string', 'string', 'string']) : null;
    if (after && after[0] !== 'folder' && after[0] !== 'file') throw new AppError(400, Messages.invalidCursor);
    const rows: PageRow[] = [];
    const want = opts.limit + 1;
    for (const type of ['folder', 'file'] as const) {
      if (after?.[0] === 'file' && type === 'folder') continue;
      const resume = after !== null && after[0] === type;
      // Separate statements, so a later page seeks in the index instead of walking past the earlier ones.
      rows.push(
        ...(resume
          ? this.pageAfter.all(accountId, folderId, type, String(after![1]), String(after![2]), want - rows.length)
          : this.pageFirst.all(accountId, folderId, type, want - rows.length)),
      );
      if (rows.length >= want) break;
    }
    const items = rows.slice(0, opts.limit);
    const last = items.at(-1);
    return {
      items: items.map(toPublicItem),
      nextCursor: rows.length > opts.limit && last ? encodeCursor([last.type, last.name_key, last.id]) : null,
    };
  }

  private get pageFirst() {
    return this.sqlite.query<PageRow, [string, string, string, number]>(
      `SELECT ${PAGE_COLUMNS} FROM items WHERE account_id = ?1 AND parent_id = ?2 AND deleted_at IS NULL AND type = ?3
       ORDER BY name_key, id LIMIT ?4`,
    );
  }

  private get pageAfter() {
    return this.sqlite.query<PageRow, [string, string, string, string, string, number]>(
      `SELECT ${PAGE_COLUMNS} FROM items WHERE account_id = ?1 AND parent_id = ?2 AND deleted_at IS NULL AND type = ?3
         AND (name_key, id) > (?4, ?5)
       ORDER BY name_key, id LIMIT ?6`,
    );
  }

  /**
   * Public visits and downloads, for the audit log (the visitor is anonymous: only the address is known).
   * Page views are recorded once per link, address and 10 minutes, so browsing a folder is one event.
   */
  recordVisit(link: ShareLink, item: ItemRow, ip: string, kind: 'access' | 'download'): void {
    if (kind === 'access') {
      const key = `${link.id}|${ip}`;
      const now = this.ctx.clock.now();
      const last = this.recentVisits.get(key);
      if (last !== undefined && now - last < VISIT_DEDUP_MS) return;
      if (this.recentVisits.size >= 10_000) this.recentVisits.clear();
      this.recentVisits.set(key, now);
    }
    this.audit.record({
      action: kind === 'access' ? AuditActions.shareAccess : AuditActions.shareDownload,
      ip,
      accountId: link.accountId,
      targetType: 'share',
      targetId: link.id,
      details: { itemId: item.id, name: item.name },
    });
  }
}

export function shareUrl(origin: string, token: string): string {
  return `${origin}/s/${token}`;
}
