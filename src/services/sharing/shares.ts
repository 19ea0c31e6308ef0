import { qrCodeOf } from '../../lib/qr-code.ts';
import type { Clock } from '../../clock.ts';
import type { Transactions } from '../../db/repos/index.ts';
import type { Item, ItemsRepo } from '../../db/repos/items.ts';
import type { ShareLinkView } from '../../contract/sharing.ts';
import type { LinkOptions, OwnedLink, ShareLink, ShareMode, SharesRepo } from '../../db/repos/shares.ts';
import type { UsersRepo } from '../../db/repos/users.ts';
import type { MembersRepo } from '../../db/repos/members.ts';
import { AppError, badRequest, forbidden, Messages, notFound } from '../../errors.ts';
import { permissionFor } from '../identity/permissions.ts';
import { requirePermission } from '../identity/principal.ts';
import { decodeCursor, encodeCursor } from '../../lib/cursor.ts';
import { newId, newToken } from '../../lib/ids.ts';
import { type Actor, actorFields, AuditActions, type AuditPrincipal, type AuditService } from '../admin/audit.ts';
import { type ChangeBy, ChangeKinds, type ChangeLog } from '../changes/change-log.ts';
import { deleteInBatches } from '../../db/select.ts';
import { FileEventType, type FileEvents } from '../files/file-events.ts';
import { type ItemViews, type PublicItem, toPublicItem } from '../files/item-views.ts';
import type { PageCache } from '../files/page-cache.ts';
import { checkLinkPassword, isUnlocked, recordUnlockRefused, unlockCookie } from './link-unlock.ts';
import { hashPassword } from '../identity/passwords.ts';
import { countedZip, type DownloadCap, downloadCap, LinkLockedError, type LinkVisit, LinkVisits, UnlockAttempts } from './link-access.ts';
import type { Principal } from '../identity/principal.ts';
import { type NotificationService, NotificationType } from './members.ts';
import { sharedOutChanged } from './shared-out.ts';
import type { SettingsService } from '../admin/settings.ts';
import type { CurrentFile, ZipDownload } from '../files/downloads.ts';
import type { HeldItem, Tree } from '../files/tree.ts';
import { personName } from '../files/names.ts';

// Breadcrumbs are folders: none has a thumbnail.
const NONE_PICTURED: ReadonlySet<string> = new Set();

const EXPIRIES = { '7d': 7 * 24 * 3600_000, '30d': 30 * 24 * 3600_000, never: null } as const;
type Expiry = keyof typeof EXPIRIES;
/** A preset, or a moment the owner picked (milliseconds since the epoch). */
export type LinkExpiry = Expiry | { at: number };
const MAX_EXPIRY_MS = 10 * 365 * 24 * 3600_000;

/** A link as the public door sees it: whether it has a password, never its hash (passwords are checked here). */
export interface PublicLink {
  id: string;
  token: string;
  accountId: string;
  itemId: string;
  expiresAt: number | null;
  mode: ShareMode;
  maxDownloads: number | null;
  downloads: number;
  hasPassword: boolean;
}

/** What a share page says of the link: whose it is (the owner's display name, never an email), until when, downloads left. */
export interface ShareFacts {
  sharedBy: string | null;
  expiresAt: number | null;
  downloadsLeft: number | null;
}

const publicLink = (l: ShareLink): PublicLink => ({
  id: l.id,
  token: l.token,
  accountId: l.accountId,
  itemId: l.itemId,
  expiresAt: l.expiresAt,
  mode: l.mode,
  maxDownloads: l.maxDownloads,
  downloads: l.downloads,
  hasPassword: l.passwordHash !== null,
});

/** How long an expired share link keeps answering 410 (expired) before it is removed and answers 404. */
const EXPIRED_LINK_KEEP_MS = 30 * 24 * 3600_000;
const EXPIRED_LINK_BATCH = 500;
/** How long an unlocked link stays unlocked in one browser. */

/** Options a request may set on a link; absent fields keep their value, null removes it. */
export interface ShareOptions {
  password?: string | null;
  mode?: ShareMode | null;
  maxDownloads?: number | null;
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** When a link made now with this expiry ends; a picked moment must be in the future and within ten years (400). */
export function expiryTime(expiry: LinkExpiry, now: number): number | null {
  if (typeof expiry === 'string') {
    const ttl = EXPIRIES[expiry];
    return ttl === null ? null : now + ttl;
  }
  if (expiry.at <= now) throw badRequest('Pick an expiry date in the future.');
  if (expiry.at > now + MAX_EXPIRY_MS) throw badRequest('Pick an expiry date at most ten years ahead, or choose Never.');
  return expiry.at;
}

type PublicPage = { items: PublicItem[]; nextCursor: string | null };

export interface ShareDeps {
  clock: Clock;
  retentionClock: Pick<Clock, 'now'>;
  transactions: Transactions;
  shares: SharesRepo;
  items: ItemsRepo;
  members: MembersRepo;
  users: UsersRepo;
  tree: Tree;
  events: FileEvents;
  changes: ChangeLog;
  audit: AuditService;
  settings: SettingsService;
  notifications: Pick<NotificationService, 'notify'>;
  pages: PageCache<PublicPage>;
  views: Pick<ItemViews, 'pictured'>;
  /** Key of the unlock cookies' signatures (derived from the instance's token secret). */
  unlockKey: Uint8Array;
}

/**
 * Public share links: one link per shared root item (token of 192 random bits), an optional expiry,
 * and membership rows that mark items as shared. What a folder link exposes is structural: the live
 * subtree of its root, so uploads into the folder show at once and items moved out are gone.
 */
export class ShareService {
  private readonly openListeners: Array<(open: { link: PublicLink; item: HeldItem }) => void> = [];
  private readonly unlockAttempts: UnlockAttempts;
  private readonly visits: LinkVisits;

  constructor(private readonly d: ShareDeps) {
    this.unlockAttempts = new UnlockAttempts(d.clock);
    this.visits = new LinkVisits(d.audit, d.clock);
  }

  /** `listener` runs when a link's page is opened (once per link, address and 10 minutes). */
  onLinkOpened(listener: (open: { link: PublicLink; item: HeldItem }) => void): void {
    this.openListeners.push(listener);
  }

  /** Links use the share base URL when one is set, else the origin the client used (via known proxies). */
  private linkBase(requestOrigin: string, token: string): string {
    const base = this.d.settings.get('shareBaseUrl');
    return `${base ? new URL(base).origin : requestOrigin}/s/${token}`;
  }

  /**
   * The caller's own live items (`trashed`: in the trash too, whose links wait for a restore and may be removed
   * or changed meanwhile); a member of a shared item may not make or remove its links (403).
   */
  private ownItems(principal: Principal, ids: readonly string[], trashed = false) {
    if (this.d.tree.actor(principal, { ids }, 'view').share) throw forbidden(Messages.memberCannotManage);
    return trashed ? this.d.tree.requireMany(principal, ids) : this.d.tree.requireLiveMany(principal, ids);
  }

  /**
   * Shares each item under its own link: created, or its expiry updated when it already has one. Of the
   * options, only those the request names change: an omitted one keeps its value, null removes it.
   */
  async share(
    principal: Principal,
    ids: readonly string[],
    expiry: LinkExpiry,
    requestOrigin: string,
    options: ShareOptions = {},
  ): Promise<{ links: Record<string, string> }> {
    assertMayGiveMode(principal, options);
    const now = this.d.clock.now();
    const expiresAt = expiryTime(expiry, now);
    const stored = await storedOptions(options);
    const { links, created, rows } = this.d.transactions.immediate(() => {
      const rows = this.ownItems(principal, ids);
      const links: Record<string, string> = {};
      const created: ShareLink[] = [];
      for (const item of rows) {
        let link = this.d.shares.linkOfItem(item.id);
        const mode = stored.mode ?? link?.mode ?? 'view';
        if (mode !== 'view' && item.type !== 'folder') throw badRequest(Messages.shareUploadNeedsFolder);
        if (link) {
          this.d.shares.setExpiry(link.id, expiresAt);
          this.d.shares.setOptions(link.id, stored);
        } else {
          link = {
            id: newId(),
            token: newToken(),
            accountId: principal.accountId,
            itemId: item.id,
            expiresAt,
            passwordHash: stored.passwordHash ?? null,
            mode,
            maxDownloads: stored.maxDownloads ?? null,
            downloads: 0,
          };
          this.d.shares.insertLink(link, principal.loginId, now);
          this.d.changes.record(principal, ChangeKinds.linkCreated, item, { details: { linkId: link.id, mode } });
          sharedOutChanged(this.d, [item], true);
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
        details: { itemId: link.itemId, expiry: typeof expiry === 'string' ? expiry : iso(expiresAt), ...optionDetails(options) },
      });
    }
    for (const row of rows) this.d.events.item(principal, FileEventType.shared, row, { shared: true });
    return { links };
  }

  /** Removes the items' own links and their memberships in other links. */
  unshare(principal: Principal, ids: readonly string[]): { message: string } {
    const { rows, removed } = this.d.transactions.immediate(() => {
      const rows = this.ownItems(principal, ids, true);
      const itemIds = rows.map((r) => r.id);
      const joined = this.d.shares.joinedEndedBy({ itemIds });
      const removed = this.d.shares.removeForItems(itemIds);
      this.recordRemoved(principal, removed, rows);
      const left = this.recordLeft(principal, joined).filter((item) => !itemIds.includes(item.id));
      sharedOutChanged(this.d, [...rows, ...left], false);
      return { rows: [...rows, ...left], removed };
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

  /** PATCH /api/files/share/links/:token: changes the options the request names; another account's token is 404. */
  async update(principal: Principal, token: string, options: ShareOptions, requestOrigin: string): Promise<ShareLinkView> {
    assertMayGiveMode(principal, options);
    const stored = await storedOptions(options);
    const link = this.d.transactions.immediate(() => {
      const link = this.d.shares.ownedByToken(principal.accountId, token);
      if (!link) throw notFound(Messages.shareNotFound);
      const [item] = this.ownItems(principal, [link.itemId], true);
      if ((stored.mode ?? link.mode) !== 'view' && item!.type !== 'folder') throw badRequest(Messages.shareUploadNeedsFolder);
      this.d.shares.setOptions(link.id, stored);
      return this.d.shares.ownedByToken(principal.accountId, token)!;
    });
    this.d.audit.record({
      action: AuditActions.shareUpdate,
      principal,
      targetType: 'share',
      targetId: link.id,
      details: { itemId: link.itemId, ...optionDetails(options) },
    });
    return this.view(link, requestOrigin);
  }

  /** GET /api/files/share/links/:token/qr: the link's URL as a QR code; another account's token is 404. */
  async qrCode(principal: Principal, token: string, requestOrigin: string): Promise<{ qrCode: string }> {
    const link = this.d.shares.ownedByToken(principal.accountId, token);
    if (!link) throw notFound(Messages.shareNotFound);
    const url = this.linkBase(requestOrigin, link.token);
    return { qrCode: await qrCodeOf(url) };
  }

  /** Removes the link of one of the account's tokens (and the item's places in other links); another account's token is 404. */
  unshareToken(principal: Principal, token: string): { message: string } {
    const link = this.d.shares.ownedByToken(principal.accountId, token);
    if (!link) throw notFound(Messages.shareNotFound);
    return this.unshare(principal, [link.itemId]);
  }

  /** One page of an account's links, newest first (every account's for `null`, as the CLI lists them). */
  list(accountId: string | null, opts: { limit: number; cursor?: string; itemId?: string }, requestOrigin: string) {
    let after: { createdAt: number; id: string } | null = null;
    if (opts.cursor) {
      const values = decodeCursor(opts.cursor, ['number', 'string']);
      if (!values) throw badRequest(Messages.invalidCursor);
      after = { createdAt: values[0] as number, id: values[1] as string };
    }
    const rows = this.d.shares.ownedPage(accountId, opts.limit + 1, after, opts.itemId ?? null);
    const more = rows.length > opts.limit;
    const page = rows.slice(0, opts.limit);
    const last = page.at(-1);
    return {
      links: page.map((l) => ({ ...this.view(l, requestOrigin), accountId: l.accountId })),
      nextCursor: more && last ? encodeCursor([last.createdAt, last.id]) : null,
    };
  }

  /** Removes the link of a token (the CLI's `shares revoke`); 404 when there is none. */
  revoke(by: Actor, token: string): { itemId: string } {
    const link = this.d.shares.linkByToken(token);
    if (!link) throw notFound(Messages.shareNotFound);
    this.d.transactions.immediate(() => {
      const joined = this.d.shares.joinedEndedBy({ itemIds: [link.itemId] });
      const removed = this.d.shares.removeForItems([link.itemId]);
      const item = this.d.items.get(link.accountId, link.itemId);
      const changer: ChangeBy =
        by === 'cli'
          ? { accountId: link.accountId, actor: { kind: 'system', id: null } }
          : { loginId: by.loginId, accountId: link.accountId };
      if (item) this.recordRemoved(changer, removed, [item]);
      sharedOutChanged(this.d, [...(item ? [item] : []), ...this.recordLeft(changer, joined)], false);
    });
    this.d.audit.record({
      action: AuditActions.shareRemove,
      ...actorFields(by),
      accountId: link.accountId,
      targetType: 'share',
      targetId: link.id,
      details: { itemId: link.itemId },
    });
    return { itemId: link.itemId };
  }

  private view(l: OwnedLink, requestOrigin: string): ShareLinkView {
    return {
      token: l.token,
      url: this.linkBase(requestOrigin, l.token),
      itemId: l.itemId,
      itemName: l.itemName,
      createdAt: iso(l.createdAt)!,
      expiresAt: iso(l.expiresAt),
      mode: l.mode,
      hasPassword: l.hasPassword,
      maxDownloads: l.maxDownloads,
      downloads: l.downloads,
      lastUsedAt: iso(l.lastUsedAt),
    };
  }

  /** The change log's link.removed rows of links just removed from `items`. */
  private recordRemoved(by: ChangeBy, removed: ReadonlyArray<{ id: string; itemId: string }>, items: readonly Item[]): void {
    const byId = new Map(items.map((i) => [i.id, i]));
    for (const link of removed) {
      const item = byId.get(link.itemId);
      if (item) this.d.changes.record(by, ChangeKinds.linkRemoved, item, { details: { linkId: link.id } });
    }
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
        // Recorded as every link change is, so a stream resumed over it replays the `file.shared` sent live.
        this.d.changes.record(principal, ChangeKinds.linkCreated, item, { details: { linkId: parentLink.id, joined: true } });
        sharedOutChanged(this.d, [item], true);
        links[item.id] = `${this.linkBase(requestOrigin, parentLink.token)}/${item.type === 'folder' ? 'folder' : 'file'}/${item.id}`;
        joined.push(item);
      }
      return { links, joined };
    });
    for (const row of joined) this.d.events.item(principal, FileEventType.shared, row, { shared: true });
    return { links };
  }

  /**
   * After a move by `by`: items (the moved ones and everything under them) that joined a folder's share with
   * link-parent-share leave it when they are no longer inside that folder, each a link.removed of its own as
   * joining was a link.created. Run in the move's transaction; answers the items that left, for their `file.shared`.
   */
  leaveSharesOutside(by: ChangeBy, movedIds: readonly string[]): Item[] {
    const left: Array<{ linkId: string; itemId: string }> = [];
    for (const id of movedIds) {
      for (const m of this.d.shares.joinedMembershipsBelow(id)) {
        if (!this.d.tree.isInside(new Set([m.linkRootId]), m.itemId) && this.d.shares.removeMember(m.linkId, m.itemId) > 0) left.push(m);
      }
    }
    const items = this.recordLeft(by, left);
    sharedOutChanged(this.d, items, false);
    return items;
  }

  /**
   * Items that left a link they joined (link-parent-share), however it ended: each a link.removed of its own
   * (details.joined, and details.expired when the link expired), as joining was a link.created; answers them, for
   * their `file.shared` `{shared: false}`.
   */
  private recordLeft(by: ChangeBy, left: ReadonlyArray<{ linkId: string; itemId: string }>, why: { expired?: true } = {}): Item[] {
    const items: Item[] = [];
    for (const m of left) {
      const item = this.d.items.get(by.accountId, m.itemId);
      if (!item) continue;
      this.d.changes.record(by, ChangeKinds.linkRemoved, item, { details: { linkId: m.linkId, joined: true, ...why } });
      items.push(item);
    }
    return items;
  }

  /** Daily: links that expired more than EXPIRED_LINK_KEEP_MS ago go (their memberships with them). */
  purgeExpiredLinks(): number {
    const cutoff = this.d.retentionClock.now() - EXPIRED_LINK_KEEP_MS;
    return deleteInBatches(EXPIRED_LINK_BATCH, (limit) => {
      const unshared: Item[] = [];
      const removed = this.d.transactions.immediate(() => {
        const links = this.d.shares.expiredBefore(cutoff, limit);
        for (const link of links) {
          const item = this.d.items.get(link.accountId, link.itemId);
          const by: ChangeBy = { accountId: link.accountId, actor: { kind: 'system', id: null } };
          if (!item) continue;
          this.d.changes.record(by, ChangeKinds.linkRemoved, item, { details: { linkId: link.id, expired: true } });
          unshared.push(item, ...this.recordLeft(by, this.d.shares.joinedEndedBy({ linkIds: [link.id] }), { expired: true }));
        }
        const count = this.d.shares.removeLinks(links.map((l) => l.id));
        sharedOutChanged(this.d, unshared, false);
        return count;
      });
      // Announced as an unshare is: open lists drop the mark, and the changes' seqs stop holding streams' ids back.
      for (const item of unshared)
        this.d.events.announce({ accountId: item.accountId, loginId: item.accountId }, FileEventType.shared, item, { shared: false });
      return removed;
    });
  }

  // ---- the public side (no session) ----

  /**
   * The link of a token and its live root: 404 when missing or the root is gone, 410 when expired or (unless
   * `pastCap`, for the rest of a download already counted) when its downloads are used up. `unlocked`: the
   * request may use it (no password, or `unlockCookie` signed for this link and its current password).
   */
  private resolve(
    token: string,
    opts: { pastCap?: boolean; unlockCookie?: string | null } = {},
  ): { link: PublicLink; root: CurrentFile; unlocked: boolean } {
    const link = this.d.shares.linkByToken(token);
    if (!link) throw notFound(Messages.shareNotFound);
    if (link.expiresAt !== null && link.expiresAt <= this.d.clock.now()) throw new AppError(410, Messages.shareExpired);
    if (!opts.pastCap && link.maxDownloads !== null && link.downloads >= link.maxDownloads)
      throw new AppError(410, Messages.shareDownloadsUsed);
    // A disabled account's links stop with it (and work again when it is enabled).
    if (this.d.users.authUser(link.accountId)?.disabledAt != null) throw notFound(Messages.shareNotFound);
    const root = this.d.items.getLiveAnyAccount(link.itemId);
    if (!root) throw notFound(Messages.shareNotFound);
    return { link: publicLink(link), root, unlocked: this.isUnlocked(link, opts.unlockCookie ?? null) };
  }

  /**
   * The link of `token` as a visitor's request may use it, checked in this order on every URL under it: it
   * exists and is live, the visitor unlocked it (when it has a password), then its download cap (`cap`).
   */
  open(token: string, visit: LinkVisit, cap: DownloadCap): { link: PublicLink; root: CurrentFile } {
    const opened = this.resolve(token, { pastCap: true, unlockCookie: visit.unlockCookie });
    if (!opened.unlocked) throw new LinkLockedError(token, 'file');
    if (cap === 'count') this.countDownload(opened.link);
    else if (cap === 'page') this.resolve(token);
    return opened;
  }

  /** The link's own page (its root): its visit is recorded. */
  openRoot(token: string, visit: LinkVisit): { link: PublicLink; root: HeldItem } {
    const opened = this.open(token, visit, 'page');
    this.recordVisit(opened.link, opened.root, visit.ip, 'access');
    return opened;
  }

  /** `open` for what the link shows (a page, a thumbnail): a drop folder shows nothing of its content. */
  openShown(token: string, visit: LinkVisit): { link: PublicLink; root: CurrentFile } {
    const opened = this.open(token, visit, 'page');
    if (opened.link.mode === 'upload') throw notFound(Messages.itemNotInShare);
    return opened;
  }

  /** An item under the link as its pages and thumbnails show it (no download counted). */
  openItem(token: string, visit: LinkVisit, itemId: string): { link: PublicLink; root: HeldItem; item: HeldItem } {
    const { link, root } = this.openShown(token, visit);
    return { link, root, item: this.itemUnder(link, root, itemId) };
  }

  /** A folder under the link as its page shows it; its visit is recorded. */
  openFolder(token: string, visit: LinkVisit, folderId: string): { link: PublicLink; root: HeldItem; folder: HeldItem } {
    const { link, root, item } = this.openItem(token, visit, folderId);
    if (item.type !== 'folder') throw notFound(Messages.itemNotInShare);
    this.recordVisit(link, item, visit.ip, 'access');
    return { link, root, folder: item };
  }

  /**
   * An item's bytes (a folder's as the ZIP `zipFolder` makes): the download is counted and recorded when what is
   * served covers byte 0. `zip` is the folder's ZIP, null for a file.
   */
  openDownload(
    token: string,
    visit: LinkVisit,
    itemId: string,
    zipFolder: (accountId: string, folder: HeldItem) => ZipDownload,
  ): { link: PublicLink; item: CurrentFile; zip: ZipDownload | null } {
    const { link, root } = this.open(token, visit, 'none');
    if (link.mode === 'upload') throw notFound(Messages.itemNotInShare);
    const item = this.itemUnder(link, root, itemId);
    const cap = downloadCap(visit, item);
    if (item.type === 'folder') {
      this.open(token, visit, 'page');
      const zip = zipFolder(link.accountId, item);
      if (cap === 'count') {
        countedZip(zip, () => this.countDownload(link));
        this.recordVisit(link, item, visit.ip, 'download');
      }
      return { link, item, zip };
    }
    if (cap !== 'none') this.open(token, visit, cap);
    if (cap === 'count') this.recordVisit(link, item, visit.ip, 'download');
    return { link, item, zip: null };
  }

  /** The shared folder whole as the ZIP `zipFolder` makes: one download (HEAD none), recorded. */
  openZip(token: string, visit: LinkVisit, zipFolder: (accountId: string, folder: HeldItem) => ZipDownload): ZipDownload {
    const { link, root } = this.openShown(token, visit);
    if (root.type !== 'folder') throw notFound(Messages.shareNotAFolder);
    const zip = zipFolder(link.accountId, root);
    if (!visit.headOnly) {
      countedZip(zip, () => this.countDownload(link));
      this.recordVisit(link, root, visit.ip, 'download');
    }
    return zip;
  }

  /**
   * A link that takes uploads into its folder (403 for a view-only link or a file). Bytes (`page`) stop with
   * the page once its downloads are used up; reading or ending an upload (`none`) does not.
   */
  openDrop(token: string, visit: LinkVisit, cap: 'page' | 'none'): { link: PublicLink; root: HeldItem } {
    const opened = this.open(token, visit, cap);
    if (opened.link.mode === 'view' || opened.root.type !== 'folder') throw new AppError(403, Messages.shareNoUploads);
    return opened;
  }

  /**
   * A visitor's password for a link, one attempt of the link's limits (per address, and from all; 429 past either, audited);
   * the unlock cookie's value, or null for a link without a password (nothing to unlock); 401 when wrong.
   */
  async attemptUnlock(token: string, password: string, ip: string): Promise<{ token: string; cookie: string | null }> {
    const { link } = this.resolve(token, { pastCap: true });
    const cookie = await this.unlockAttempts.spend(
      link.id,
      ip,
      () => this.unlock(link, password, ip),
      () => recordUnlockRefused(this.d.audit, { ip, accountId: link.accountId, targetType: 'share', targetId: link.id }),
    );
    return { token: link.token, cookie };
  }

  /** An item reachable through a resolved link: its root, or a live item under a shared folder; else 404. */
  private itemUnder(link: PublicLink, root: CurrentFile, itemId: string): CurrentFile {
    if (itemId === root.id) return root;
    const item = this.d.items.getLive(link.accountId, itemId);
    // Trashing a folder trashes everything under it, so a live item under the root is reached only through live folders.
    if (!item || root.type !== 'folder' || !this.d.tree.isInside(new Set([root.id]), item.id)) throw notFound(Messages.itemNotInShare);
    return item;
  }

  /**
   * Files a visitor drops into an upload link's folder: stored as the owner's (quota, free names), with who
   * sent them and in which visit; the owner sees them arrive (live event) and in the audit log.
   */
  async drop(
    link: PublicLink,
    folder: HeldItem,
    visit: { visitId: string; ip: string },
    store: (owner: AuditPrincipal, within: (rows: Item[], fields: Map<string, string>) => void) => Promise<Item[]>,
  ): Promise<Array<{ name: string; size: number }>> {
    const owner = { loginId: link.accountId, accountId: link.accountId, ip: visit.ip };
    let uploader: string | null = null;
    const rows: Item[] = [];
    try {
      await store(owner, (inserted, fields) => {
        this.assertTakesDrops(link.id);
        uploader = uploaderName(fields.get('uploader'));
        const now = this.d.clock.now();
        for (const row of inserted) {
          this.d.shares.insertDrop({ itemId: row.id, linkId: link.id, visitId: visit.visitId, uploader, ip: visit.ip, createdAt: now });
          this.d.changes.record({ accountId: link.accountId, actor: { kind: 'link', id: link.id } }, ChangeKinds.dropped, row, {
            details: { size: row.size, mimeType: row.mimeType, linkId: link.id, uploader },
          });
        }
        this.d.shares.touch(link.id, now);
        rows.push(...inserted);
      });
    } finally {
      // Files are committed a chunk at a time: those that were stay the owner's even when a later chunk failed.
      if (rows.length > 0) {
        this.recordDrop({ accountId: link.accountId, linkId: link.id, folderId: folder.id, uploader, ip: visit.ip }, rows);
      }
    }
    return rows.map((r) => ({ name: r.name, size: r.size ?? 0 }));
  }

  /** A file sent through a drop folder's resumable endpoint was created: who sent it, as for a drop through the page. */
  recordResumed(
    upload: { accountId: string; shareLinkId: string | null; shareVisitId: string | null; shareUploader: string | null },
    item: Item,
  ): void {
    if (!upload.shareLinkId) return;
    this.assertTakesDrops(upload.shareLinkId);
    this.d.shares.insertDrop({
      itemId: item.id,
      linkId: upload.shareLinkId,
      visitId: upload.shareVisitId ?? '',
      uploader: upload.shareUploader,
      ip: '',
      createdAt: this.d.clock.now(),
    });
    const drop = { accountId: upload.accountId, linkId: upload.shareLinkId, folderId: item.parentId, uploader: upload.shareUploader };
    this.recordDrop(drop, [item]);
  }

  /**
   * In the transaction that keeps a visitor's files: the link still takes them, as its requests check it (gone 404,
   * expired 410, made view-only 403). The owner may have ended it while their bytes arrived.
   */
  private assertTakesDrops(linkId: string): void {
    const link = this.d.shares.linkById(linkId);
    if (!link) throw notFound(Messages.shareNotFound);
    const { link: live } = this.resolve(link.token, { pastCap: true });
    if (live.mode === 'view') throw new AppError(403, Messages.shareNoUploads);
  }

  /** Files a visitor dropped, through the page or resumably: one audit record for them, and the owner's notification. */
  private recordDrop(
    drop: { accountId: string; linkId: string; folderId: string | null; uploader: string | null; ip?: string },
    files: Item[],
  ): void {
    const { accountId, linkId, folderId, uploader, ip } = drop;
    this.d.audit.record({
      action: AuditActions.shareDrop,
      ...(ip === undefined ? {} : { ip }),
      accountId,
      targetType: 'share',
      targetId: linkId,
      details: { folderId, uploader, files: files.map((r) => ({ id: r.id, name: r.name, size: r.size })) },
    });
    if (folderId) this.notifyDrop(accountId, folderId, uploader, files.length);
  }

  /** The owner's notification of files a visitor dropped into a folder. */
  private notifyDrop(accountId: string, folderId: string, uploader: string | null, count: number): void {
    if (count === 0) return;
    const folder = this.d.items.getLive(accountId, folderId);
    const files = `${count} file${count === 1 ? '' : 's'}`;
    const text = `${uploader ?? 'A visitor'} added ${files} to "${folder?.name ?? 'a drop folder'}" through a share link.`;
    this.d.notifications.notify(accountId, NotificationType.dropped, text, folderId);
  }

  /**
   * A drop folder's visitor as the acting principal of a resumable upload: the owner's account, named by it
   * in events and the audit log, allowed nothing but uploading (the link's folder is fixed by the route).
   */
  visitor(link: PublicLink, ip: string): Principal {
    return {
      loginId: link.accountId,
      accountId: link.accountId,
      sessionId: `share:${link.id}`,
      ip,
      email: '',
      name: 'Share link visitor',
      isOwner: false,
      isAdmin: false,
      permissions: new Set(['files.upload']),
    };
  }

  /** What one visit sent through an upload link (its page shows only that). */
  dropsOfVisit(link: PublicLink, visitId: string): Array<{ name: string; size: number }> {
    return this.d.shares.dropsOfVisit(link.id, visitId, 500);
  }

  /** Counts one download against the link's cap (atomically): 410 once the cap is reached. */
  private countDownload(link: PublicLink): void {
    if (!this.d.shares.countDownload(link.id, this.d.clock.now())) throw new AppError(410, Messages.shareDownloadsUsed);
  }

  /**
   * Checks a password for a link (one attempt already spent): the unlock cookie's value (expiry and
   * signature), null for a link without a password, or 401 (audited).
   */
  private async unlock(opened: PublicLink, password: string, ip: string): Promise<string | null> {
    const link = this.d.shares.linkByToken(opened.token);
    if (!link) throw notFound(Messages.shareNotFound);
    if (link.passwordHash === null) return null;
    await checkLinkPassword(this.d.audit, link.passwordHash, password, {
      ip,
      accountId: link.accountId,
      targetType: 'share',
      targetId: link.id,
    });
    this.d.shares.touch(link.id, this.d.clock.now());
    return unlockCookie(this.d.unlockKey, link, this.d.clock.now());
  }

  private isUnlocked(link: ShareLink, cookie: string | null): boolean {
    return isUnlocked(this.d.unlockKey, link, cookie, this.d.clock.now());
  }

  /** Folders from the root down to `folder` (both included), for breadcrumbs. */
  trail(root: HeldItem, folder: HeldItem): PublicItem[] {
    return this.d.tree.trail(root, folder).map((r) => toPublicItem(r, NONE_PICTURED));
  }

  /** One page of a shared folder: folders first, then by name; `cursor` continues the previous page. */
  folderPage(accountId: string, folderId: string, opts: { limit: number; cursor?: string }): PublicPage {
    return this.d.pages.get(JSON.stringify([accountId, folderId, opts.limit, opts.cursor ?? null]), () => {
      const scope = { kind: 'folder', accountId, parentId: folderId } as const;
      const { rows, nextCursor } = this.d.tree.page(scope, { sortBy: 'name', order: 'asc', limit: opts.limit, cursor: opts.cursor });
      const pictured = this.d.views.pictured(rows);
      return { items: rows.map((r) => toPublicItem(r, pictured)), nextCursor };
    });
  }

  /**
   * Public visits and downloads, for the audit log (the visitor is anonymous: only the address is known).
   * Page views are recorded once per link, address and 10 minutes, so browsing a folder is one event.
   */
  facts(link: PublicLink): ShareFacts {
    return {
      sharedBy: this.d.users.byId(link.accountId)?.name.trim() || null,
      expiresAt: link.expiresAt,
      downloadsLeft: link.maxDownloads === null ? null : Math.max(0, link.maxDownloads - link.downloads),
    };
  }

  private recordVisit(link: PublicLink, item: HeldItem, ip: string, kind: 'access' | 'download'): void {
    const details = { itemId: item.id, name: item.name };
    if (!this.visits.record(kind, { ip, accountId: link.accountId, targetType: 'share', targetId: link.id, details }) || kind !== 'access')
      return;
    this.d.shares.touch(link.id, this.d.clock.now());
    for (const listener of this.openListeners) listener({ link, item });
  }
}

/** The name a visitor gives with a drop, cleaned as a person's name (the owner's screens show it); blank is none. */
export function uploaderName(text: string | undefined): string | null {
  const name = personName(text ?? '', 100);
  return name === '' ? null : name;
}

/** A drop folder creates files in the account: a login may give a link an upload mode only if it may upload itself. */
function assertMayGiveMode(principal: Principal, options: ShareOptions): void {
  if (options.mode === 'upload' || options.mode === 'view_upload') requirePermission(principal, permissionFor('shares.uploadMode'));
}

/** The options as stored: the password hashed (argon2id), absent fields left absent. */
async function storedOptions(options: ShareOptions): Promise<LinkOptions> {
  const out: LinkOptions = {};
  if (options.password !== undefined) out.passwordHash = options.password === null ? null : await hashPassword(options.password);
  if (options.mode !== undefined) out.mode = options.mode ?? 'view';
  if (options.maxDownloads !== undefined) out.maxDownloads = options.maxDownloads;
  return out;
}

/** What the audit log says of options: never the password, only whether it was set or removed. */
function optionDetails(options: ShareOptions): Record<string, unknown> {
  const { password, ...rest } = options;
  return password === undefined ? rest : { ...rest, password: password === null ? 'removed' : 'set' };
}
