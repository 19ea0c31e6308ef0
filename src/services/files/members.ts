import type { Clock } from '../../clock.ts';
import type { Member, NotificationEntry, SharedWithMeItem } from '../../contract/sharing.ts';
import type { Transactions } from '../../db/repos/index.ts';
import type { After, MemberRole, MemberRow, MembersRepo, Notification, SharedWithRow } from '../../db/repos/members.ts';
import type { UsersRepo } from '../../db/repos/users.ts';
import type { EventHub } from '../../events/hub.ts';
import { badRequest, conflict, forbidden, Messages, notFound } from '../../errors.ts';
import { decodeCursor, encodeCursor } from '../../lib/cursor.ts';
import { newId } from '../../lib/ids.ts';
import { AuditActions, type AuditService } from '../administration/audit.ts';
import type { SettingsService } from '../administration/settings.ts';
import type { Principal } from '../accounts/principal.ts';
import { iso, type ItemViews } from './item-views.ts';
import type { Tree } from './tree.ts';

/** The notification types (COMPAT-style names; clients show `text`). */
export const NotificationType = {
  shared: 'share.added',
  removed: 'share.removed',
  roleChanged: 'share.role_changed',
  dropped: 'drop.files_added',
} as const;

/** The live event an account's open streams get when it loses an item shared with it. */
const SHARE_REMOVED_EVENT = 'share.removed';

const toMember = (m: MemberRow): Member => ({
  accountId: m.accountId,
  email: m.email,
  name: m.name,
  role: m.role,
  addedAt: iso(m.addedAt),
});

/** A keyset cursor of these pages (time, insertion order), else 400. */
function readAfter(cursor: string | undefined): After | null {
  if (!cursor) return null;
  const values = decodeCursor(cursor, ['number', 'number']);
  if (!values) throw badRequest(Messages.invalidCursor);
  return { at: values[0] as number, seq: values[1] as number };
}

const toNotification = (n: Notification): NotificationEntry => ({
  id: n.id,
  type: n.type,
  text: n.text,
  itemId: n.itemId,
  createdAt: iso(n.createdAt),
  readAt: n.readAt === null ? null : iso(n.readAt),
});

interface MemberDeps {
  clock: Clock;
  transactions: Transactions;
  members: MembersRepo;
  users: UsersRepo;
  tree: Tree;
  views: ItemViews;
  hub: EventHub;
  audit: AuditService;
  settings: SettingsService;
}

/** Notifications one account may send another per window; past it they are dropped (the change itself still applies). */
export const NOTIFICATIONS_PER_SENDER = 30;
const SENDER_WINDOW_MS = 3600_000;

/** Notifications of an account: stored, counted, and delivered live over its event streams. */
export class NotificationService {
  // Notifications sent in the current window, by sender and recipient.
  private readonly sent = new Map<string, number>();
  private window = 0;

  constructor(private readonly d: Pick<MemberDeps, 'clock' | 'members' | 'hub'>) {}

  /**
   * Stores and delivers a notification. One from another account (`senderId`) counts against that
   * sender's allowance, and updates the recipient's unread one of the same type about the same item
   * instead of adding another.
   */
  notify(accountId: string, type: string, text: string, itemId: string | null, senderId?: string): void {
    const now = this.d.clock.now();
    if (senderId !== undefined && !this.spend(`${senderId}\n${accountId}`, now)) return;
    const unread = senderId !== undefined && itemId !== null ? this.d.members.unreadAbout(accountId, type, itemId) : null;
    const row: Notification = { id: unread?.id ?? newId(), accountId, type, text, itemId, createdAt: now, readAt: null };
    if (unread) this.d.members.renewNotification(unread.id, text, now);
    else this.d.members.insertNotification(row);
    this.d.hub.publish(accountId, 'notification', { ...toNotification(row), unread: this.d.members.unreadCount(accountId) });
  }

  /** Counts one notification of a sender to a recipient; false once the window's allowance is spent. */
  private spend(key: string, now: number): boolean {
    const windowStart = now - (now % SENDER_WINDOW_MS);
    if (windowStart !== this.window) {
      this.window = windowStart;
      this.sent.clear();
    }
    const count = (this.sent.get(key) ?? 0) + 1;
    this.sent.set(key, count);
    return count <= NOTIFICATIONS_PER_SENDER;
  }

  /** GET /api/notifications: newest first, keyset paged, with the unread count. */
  list(
    principal: Principal,
    q: { limit?: number; cursor?: string },
  ): { notifications: NotificationEntry[]; unread: number; nextCursor: string | null } {
    const limit = Math.min(100, Math.max(1, q.limit ?? 20));
    const rows = this.d.members.notificationsPage(principal.accountId, readAfter(q.cursor), limit + 1);
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    return {
      notifications: page.map(toNotification),
      unread: this.d.members.unreadCount(principal.accountId),
      nextCursor: rows.length > limit && last ? encodeCursor([last.createdAt, last.seq]) : null,
    };
  }

  /** POST /api/notifications/read: the given ones, or all. */
  markRead(principal: Principal, input: { ids?: string[]; all?: boolean }): { unread: number } {
    if (!input.all && !input.ids?.length) throw badRequest('Send ids (a list of notification ids) or all: true.');
    this.d.members.markRead(principal.accountId, input.all ? 'all' : input.ids!, this.d.clock.now());
    return { unread: this.d.members.unreadCount(principal.accountId) };
  }
}

/**
 * Sharing with people: the members of an item (other owner accounts of this instance) and what is
 * shared with an account. Only the item's own account manages its members; whether a member may reach
 * an item is decided by Tree.actor.
 */
export class MemberService {
  private readonly editorEndListeners: Array<(end: { ownerId: string; itemId: string; accountId: string }) => void> = [];

  constructor(
    private readonly d: MemberDeps,
    private readonly notifications: NotificationService,
  ) {}

  /** `listener` runs when an account stops being an editor of an item: removed, or made viewer. */
  onEditorEnd(listener: (end: { ownerId: string; itemId: string; accountId: string }) => void): void {
    this.editorEndListeners.push(listener);
  }

  private editorEnded(ownerId: string, itemId: string, accountId: string): void {
    for (const listener of this.editorEndListeners) listener({ ownerId, itemId, accountId });
  }

  /** The caller's own live item to manage; a member of it gets 403, anyone else 404. */
  private ownItem(principal: Principal, id: string) {
    if (this.d.tree.actor(principal, { ids: [id] }, 'view').share) throw forbidden(Messages.memberCannotManage);
    return this.d.tree.requireLive(principal, id);
  }

  /** GET /api/files/:id/members: the owner's account and members alike may see who an item is shared with. */
  list(principal: Principal, id: string): { members: Member[] } {
    const actor = this.d.tree.actor(principal, { ids: [id] }, 'view');
    const row = this.d.tree.requireLive(actor, id);
    return { members: this.d.members.ofItem(row.id).map(toMember) };
  }

  add(principal: Principal, id: string, input: { email: string; role: MemberRole }): { member: Member } {
    if (!this.d.settings.get('peopleSharing')) throw forbidden(Messages.peopleSharingOff);
    const item = this.ownItem(principal, id);
    const account = this.d.users.byEmailKey(input.email.trim().toLowerCase());
    const usable = account && account.parentUserId === null && account.disabledAt === null && account.deletionRequestedAt === null;
    if (!usable) throw notFound(Messages.noAccountWithEmail);
    if (account.id === principal.accountId) throw conflict('You own this item: share it with someone else.');
    const now = this.d.clock.now();
    this.d.transactions.immediate(() => {
      if (this.d.members.one(item.id, account.id)) throw conflict(`${account.email} is already a member of "${item.name}".`);
      this.d.members.insert({
        itemId: item.id,
        ownerId: principal.accountId,
        accountId: account.id,
        role: input.role,
        addedBy: principal.loginId,
        addedAt: now,
      });
    });
    this.record(principal, AuditActions.memberAdd, item, { email: account.email, role: input.role });
    this.notifications.notify(
      account.id,
      NotificationType.shared,
      `${this.ownerName(principal)} shared "${item.name}" with you as ${input.role}.`,
      item.id,
      principal.accountId,
    );
    return { member: toMember(this.d.members.one(item.id, account.id)!) };
  }

  setRole(principal: Principal, id: string, accountId: string, role: MemberRole): { member: Member } {
    const item = this.ownItem(principal, id);
    const before = this.d.members.one(item.id, accountId);
    if (!before) throw notFound('This person is not a member of this item.');
    if (before.role !== role) {
      this.d.members.setRole(item.id, accountId, role);
      if (role === 'viewer') this.editorEnded(principal.accountId, item.id, accountId);
      this.record(principal, AuditActions.memberRole, item, { email: before.email, role });
      this.notifications.notify(
        accountId,
        NotificationType.roleChanged,
        `${this.ownerName(principal)} made you ${role} of "${item.name}".`,
        item.id,
        principal.accountId,
      );
    }
    return { member: toMember(this.d.members.one(item.id, accountId)!) };
  }

  remove(principal: Principal, id: string, accountId: string): { message: string } {
    const item = this.ownItem(principal, id);
    const before = this.d.members.one(item.id, accountId);
    if (!before || !this.d.members.remove(item.id, accountId)) throw notFound('This person is not a member of this item.');
    this.record(principal, AuditActions.memberRemove, item, { email: before.email });
    this.editorEnded(principal.accountId, item.id, accountId);
    // Open pages of the removed account leave the item at once.
    this.d.hub.publish(accountId, SHARE_REMOVED_EVENT, { id: item.id, name: item.name });
    this.notifications.notify(
      accountId,
      NotificationType.removed,
      `${this.ownerName(principal)} stopped sharing "${item.name}" with you.`,
      item.id,
      principal.accountId,
    );
    return { message: `Stopped sharing with ${before.email}` };
  }

  /** What an owner account shares with people, item by item (`coffer users shares`). */
  sharesOf(ownerId: string): Array<{ itemId: string; itemName: string; email: string; role: MemberRole; addedAt: string }> {
    return this.d.members.sharesOf(ownerId).map((r) => ({ ...r, addedAt: iso(r.addedAt) }));
  }

  /** GET /api/files/shared-with-me: items other accounts share with the caller's account, newest first. */
  sharedWithMe(principal: Principal, q: { limit?: number; cursor?: string }): { items: SharedWithMeItem[]; nextCursor: string | null } {
    const limit = Math.min(200, Math.max(1, q.limit ?? 50));
    const after = readAfter(q.cursor);
    if (!this.d.settings.get('peopleSharing')) return { items: [], nextCursor: null };
    const rows = this.d.members.sharedWith(principal.accountId, after, limit + 1);
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    return {
      items: page.map((r) => this.sharedView(r)),
      nextCursor: rows.length > limit && last ? encodeCursor([last.addedAt, last.seq]) : null,
    };
  }

  private sharedView(r: SharedWithRow): SharedWithMeItem {
    // The item's place in the owner's tree is the owner's business: it shows at the member's top level.
    const view = this.d.views.one(r.accountId, r);
    return {
      ...view,
      parentId: null,
      owner: { id: r.accountId, name: r.ownerName, email: r.ownerEmail },
      role: r.role,
      sharedAt: iso(r.addedAt),
    };
  }

  /** The sharing account's name as members know it (a sub-user acts for its owner). */
  private ownerName(principal: Principal): string {
    const owner = this.d.users.nameAndEmail(principal.accountId);
    return owner?.name || owner?.email || principal.email;
  }

  private record(
    principal: Principal,
    action: (typeof AuditActions)[keyof typeof AuditActions],
    item: { id: string; name: string; type: string },
    details: Record<string, unknown>,
  ): void {
    this.d.audit.record({ action, principal, targetType: item.type, targetId: item.id, details: { name: item.name, ...details } });
  }
}
