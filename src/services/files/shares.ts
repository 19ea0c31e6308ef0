import type { Clock } from '../../clock.ts';
import type { Transactions } from '../../db/repos/index.ts';
import type { Item, ItemsRepo } from '../../db/repos/items.ts';
import type { ShareLink, SharesRepo } from '../../db/repos/shares.ts';
import type { UsersRepo } from '../../db/repos/users.ts';
import { AppError, forbidden, Messages, notFound } from '../../errors.ts';
import { newId, newToken } from '../../lib/ids.ts';
import { AuditActions, type AuditService } from '../administration/audit.ts';
import { FileEventType, type FileEvents } from './file-events.ts';
import { type PublicItem, toPublicItem } from './item-views.ts';
import type { PageCache } from './page-cache.ts';
import type { Principal } from '../accounts/principal.ts';
import type { SettingsService } from '../administration/settings.ts';
import type { Tree } from './tree.ts';

const EXPIRIES = { '7d': 7 * 24 * 3600_000, '30d': 30 * 24 * 3600_000, never: null } as const;
export type Expiry = keyof typeof EXPIRIES;

/** How long an expired share link keeps answering 410 (expired) before it is removed and answers 404. */
const EXPIRED_LINK_KEEP_MS = 30 * 24 * 3600_000;
const VISIT_DEDUP_MS = 10 * 60_000;

type PublicPage = { items: PublicItem[]; nextCursor: string | null };

export interface ShareDeps {
  clock: Clock;
  transactions: Transactions;
  shares: SharesRepo;
  items: ItemsRepo;
  users: UsersRepo;
  tree: Tree;
  events: FileEvents;
  audit: AuditService;
  settings: SettingsService;
  pages: PageCache<PublicPage>;
}

/**
 * Public share links: one link per shared root item (token of 192 random bits), an optional expiry,
 * and membership rows that mark items as shared. What a folder link exposes is structural: the live
 * subtree of its root, so uploads into the folder show at once and items moved out are gone.
 */
export class ShareService {
  private readonly recentVisits = new Map<string, number>();

  constructor(private readonly d: ShareDeps) {}

  /** Links use the share base URL when one is set, else the origin the client used (via known proxies). */
  private linkBase(requestOrigin: string, token: string): string {
    const base = this.d.settings.get('shareBaseUrl');
    return `${base ? new URL(base).origin : requestOrigin}/s/${token}`;
  }

  /** Shares each item under its own link: created, or its expiry updated when it already has one. */
  /** The caller's own live items; a member of a shared item may not make or remove its links (403). */
  private ownItems(principal: Principal, ids: readonly string[]) {
    if (this.d.tree.actor(principal, { ids }, 'view').share) throw forbidden(Messages.memberCannotManage);
    return this.d.tree.requireLiveMany(principal, ids);
  }

  share(principal: Principal, ids: readonly string[], expiry: Expiry, requestOrigin: string): { links: Record<string, string> } {
    const now = this.d.clock.now();
    const ttl = EXPIRIES[expiry];
    const expiresAt = ttl === null ? null : now + ttl;
    const { links, created, rows } = this.d.transactions.immediate(() => {
      const rows = this.ownItems(principal, ids);
      const links: Record<string, string> = {};
      const created: ShareLink[] = [];
      for (const item of rows) {
        let link = this.d.shares.linkOfItem(item.id);
        if (link) {
          this.d.shares.setExpiry(link.id, expiresAt);
        } else {
          link = { id: newId(), token: newToken(), accountId: principal.accountId, itemId: item.id, expiresAt };
          this.d.shares.insertLink(link, principal.loginId, now);
          created.push(link);
        }
        links[item.id] = this.linkBase(requestOrigin, link.token);
      }
      return { links, created, rows };
    });
    for (const link of created) {
      this.d.audit.record({
        action: AuditActions.shareCreate,
        principal,
        targetType: 'share',
        targetId: link.id,
        details: { itemId: link.itemId, expiry },
      });
    }
    for (const row of rows) this.d.events.item(principal, FileEventType.shared, row, { shared: true });
    return { links };
  }

  /** Removes the items' own links and their memberships in other links. */
  unshare(principal: Principal, ids: readonly string[]): { message: string } {
    const { rows, removed } = this.d.transactions.immediate(() => {
      const rows = this.ownItems(principal, ids);
      return { rows, removed: this.d.shares.removeForItems(rows.map((r) => r.id)) };
    });
    for (const l of removed) {
      this.d.audit.record({
        action: AuditActions.shareRemove,
        principal,
        targetType: 'share',
        targetId: l.id,
        details: { itemId: l.itemId },
      });
    }
    for (const row of rows) this.d.events.item(principal, FileEventType.shared, row, { shared: false });
    return { message: rows.length === 1 ? 'Item is no longer shared' : `${rows.length} items are no longer shared` };
  }

  /** Existing links of the items; creates none. */
  links(principal: Principal, ids: readonly string[], requestOrigin: string): { links: Record<string, string> } {
    const out: Record<string, string> = {};
    for (const item of this.ownItems(principal, ids)) {
      const link = this.d.shares.linkOfItem(item.id);
      if (link) out[item.id] = this.linkBase(requestOrigin, link.token);
    }
    return { links: out };
  }

  /** Adds items to their parent folder's share when the parent is shared; answers their URLs inside it. */
  linkParentShare(principal: Principal, ids: readonly string[], requestOrigin: string): { links: Record<string, string> } {
    const now = this.d.clock.now();
    const { links, joined } = this.d.transactions.immediate(() => {
      const links: Record<string, string> = {};
      const joined: Item[] = [];
      for (const item of this.ownItems(principal, ids)) {
        const parentLink = item.parentId ? this.d.shares.linkOfItem(item.parentId) : null;
        if (!parentLink) continue;
        this.d.shares.addMember(parentLink.id, item.id, now);
        links[item.id] = `${this.linkBase(requestOrigin, parentLink.token)}/${item.type === 'folder' ? 'folder' : 'file'}/${item.id}`;
        joined.push(item);
      }
      return { links, joined };
    });
    for (const row of joined) this.d.events.item(principal, FileEventType.shared, row, { shared: true });
    return { links };
  }

  /**
   * After a move: items (the moved ones and everything under them) that joined a folder's share with
   * link-parent-share leave it when they are no longer inside that folder. Run in the move's transaction.
   */
  leaveSharesOutside(movedIds: readonly string[]): number {
    let removed = 0;
    for (const id of movedIds) {
      for (const m of this.d.shares.joinedMembershipsBelow(id)) {
        if (!this.d.tree.isInside(new Set([m.linkRootId]), m.itemId)) removed += this.d.shares.removeMember(m.linkId, m.itemId);
      }
    }
    return removed;
  }

  /** Daily: links that expired more than EXPIRED_LINK_KEEP_MS ago go (their memberships with them). */
  purgeExpiredLinks(): number {
    return this.d.shares.purgeExpiredBefore(this.d.clock.now() - EXPIRED_LINK_KEEP_MS);
  }

  // ---- the public side (no session) ----

  /** The link of a token and its live root: 404 when missing or the root is gone, 410 when expired. */
  resolve(token: string): { link: ShareLink; root: Item } {
    const link = this.d.shares.linkByToken(token);
    if (!link) throw notFound(Messages.shareNotFound);
    if (link.expiresAt !== null && link.expiresAt <= this.d.clock.now()) throw new AppError(410, Messages.shareExpired);
    // A disabled account's links stop with it (and work again when it is enabled).
    if (this.d.users.authUser(link.accountId)?.disabledAt != null) throw notFound(Messages.shareNotFound);
    const root = this.d.items.getLiveAnyAccount(link.itemId);
    if (!root) throw notFound(Messages.shareNotFound);
    return { link, root };
  }

  /** An item reachable through the link: its root, or a live item under a shared folder; else 404. */
  itemInShare(token: string, itemId: string): { link: ShareLink; root: Item; item: Item } {
    const { link, root } = this.resolve(token);
    if (itemId === root.id) return { link, root, item: root };
    const item = this.d.items.getLive(link.accountId, itemId);
    // Trashing a folder trashes everything under it, so a live item under the root is reached only through live folders.
    if (!item || root.type !== 'folder' || !this.d.tree.isInside(new Set([root.id]), item.id)) throw notFound(Messages.itemNotInShare);
    return { link, root, item };
  }

  /** Folders from the root down to `folder` (both included), for breadcrumbs. */
  trail(root: Item, folder: Item): PublicItem[] {
    return this.d.tree.trail(root, folder).map(toPublicItem);
  }

  /** One page of a shared folder: folders first, then by name; `cursor` continues the previous page. */
  folderPage(accountId: string, folderId: string, opts: { limit: number; cursor?: string }): PublicPage {
    return this.d.pages.get(JSON.stringify([accountId, folderId, opts.limit, opts.cursor ?? null]), () => {
      const scope = { kind: 'folder', accountId, parentId: folderId } as const;
      const { rows, nextCursor } = this.d.tree.page(scope, { sortBy: 'name', order: 'asc', limit: opts.limit, cursor: opts.cursor });
      return { items: rows.map(toPublicItem), nextCursor };
    });
  }

  /**
   * Public visits and downloads, for the audit log (the visitor is anonymous: only the address is known).
   * Page views are recorded once per link, address and 10 minutes, so browsing a folder is one event.
   */
  recordVisit(link: ShareLink, item: Item, ip: string, kind: 'access' | 'download'): void {
    if (kind === 'access') {
      const key = `${link.id}|${ip}`;
      const now = this.d.clock.now();
      const last = this.recentVisits.get(key);
      if (last !== undefined && now - last < VISIT_DEDUP_MS) return;
      if (this.recentVisits.size >= 10_000) this.recentVisits.clear();
      this.recentVisits.set(key, now);
    }
    this.d.audit.record({
      action: kind === 'access' ? AuditActions.shareAccess : AuditActions.shareDownload,
      ip,
      accountId: link.accountId,
      targetType: 'share',
      targetId: link.id,
      details: { itemId: item.id, name: item.name },
    });
  }
}
