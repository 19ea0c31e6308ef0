import type { Clock } from '../../clock.ts';
import { ChangeKinds, type ChangeLog } from '../changes/change-log.ts';
import type { Member, NotificationEntry, PersonSuggestion, SharedGroup, SharedWithMeItem } from '../../contract/sharing.ts';
import type { GroupsRepo, ItemGroupRow } from '../../db/repos/groups.ts';
import type { Transactions } from '../../db/repos/index.ts';
import type { After, MemberRole, MemberRow, MembersRepo, Notification, SharedWithRow } from '../../db/repos/members.ts';
import type { UsersRepo } from '../../db/repos/users.ts';
import type { EventHub } from '../../events/hub.ts';
import { badRequest, conflict, forbidden, Messages, notFound } from '../../errors.ts';
import { decodeCursor, encodeCursor } from '../../lib/cursor.ts';
import { newId } from '../../lib/ids.ts';
import { AuditActions, type AuditService } from '../admin/audit.ts';
import type { SettingsService } from '../admin/settings.ts';
import { EDITOR_PERMISSIONS } from '../identity/permissions.ts';
import { type Principal, requirePermission } from '../identity/principal.ts';
import { iso, type ItemViews } from '../files/item-views.ts';
import type { Tree } from '../files/tree.ts';
import { sharedOutChanged } from './shared-out.ts';

/** The notification types (named like those of docs/compatibility.md › Events; clients show `text`). */
export const NotificationType = {
  shared: 'share.added',
  removed: 'share.removed',
  roleChanged: 'share.role_changed',
  dropped: 'drop.files_added',
  groupJoined: 'group.joined',
  groupLeft: 'group.left',
} as const;

/** The live event an account's open streams get when it loses an item shared with it. */
const SHARE_REMOVED_EVENT = 'share.removed';

const toSharedGroup = (g: ItemGroupRow): SharedGroup => ({
  groupId: g.groupId,
  name: g.name,
  size: g.size,
  role: g.role,
  addedAt: iso(g.addedAt),
});

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
  groups: GroupsRepo;
  users: UsersRepo;
  tree: Tree;
  views: ItemViews;
  hub: EventHub;
  audit: AuditService;
  settings: SettingsService;
  changes: ChangeLog;
}

/** How many people a suggestion answer names at most. */
const SUGGESTIONS = 8;

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
    // Another account's id is a 404, as everywhere, and marks none of the list.
    if (!input.all && this.d.members.countNotificationsOf(principal.accountId, input.ids!) !== new Set(input.ids).size)
      throw notFound(Messages.notificationNotFound);
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

  /** An account stopped being an editor of an item (removed, made viewer, or out of the group that made it one). */
  editorEnded(ownerId: string, itemId: string, accountId: string): void {
    for (const listener of this.editorEndListeners) listener({ ownerId, itemId, accountId });
  }

  /** The accounts' rights on items changed: their desktop clients waiting for push are told to look again. */
  rightsChanged(accountIds: Iterable<string>): void {
    for (const accountId of new Set(accountIds)) this.d.hub.accessChanged(accountId);
  }

  /** An account no longer reaches an item: its open pages leave it at once. */
  accessRemoved(accountId: string, item: { id: string; name: string }): void {
    this.d.hub.publish(accountId, SHARE_REMOVED_EVENT, { id: item.id, name: item.name });
  }

  /** The caller's own live item to manage; a member of it gets 403, anyone else 404. */
  private ownItem(principal: Principal, id: string) {
    if (this.d.tree.actor(principal, { ids: [id] }, 'view').share) throw forbidden(Messages.memberCannotManage);
    return this.d.tree.requireLive(principal, id);
  }

  /** GET /api/files/:id/members: the owner's account and members alike may see who an item is shared with. */
  list(principal: Principal, id: string): { members: Member[]; groups: SharedGroup[] } {
    const actor = this.d.tree.actor(principal, { ids: [id] }, 'view');
    const row = this.d.tree.requireLive(actor, id);
    return { members: this.d.members.ofItem(row.id).map(toMember), groups: this.d.groups.ofItem(row.id).map(toSharedGroup) };
  }

  /**
   * GET /api/people/suggestions: accounts of this instance to share with, found by the start of a name
   * (or of an email, for an account owner); a sub-user never sees another account's email.
   */
  suggest(principal: Principal, q: string): { people: PersonSuggestion[] } {
    if (!this.d.settings.get('peopleSharing')) throw forbidden(Messages.peopleSharingOff);
    const owner = principal.isOwner;
    const rows = this.d.users.suggestions(q, { exclude: principal.accountId, byEmail: owner, limit: SUGGESTIONS });
    return { people: rows.map((r) => (owner ? { accountId: r.id, name: r.name, email: r.email } : { accountId: r.id, name: r.name })) };
  }

  /** POST /api/files/:id/members: a person by email or account id, or a group by id. */
  add(
    principal: Principal,
    id: string,
    input: { email?: string | undefined; accountId?: string | undefined; groupId?: string | undefined; role: MemberRole },
  ): { member: Member } | { group: SharedGroup } {
    if (input.groupId !== undefined) return this.addGroup(principal, id, input.groupId, input.role);
    if (input.accountId !== undefined) return this.addPerson(principal, id, { accountId: input.accountId }, input.role);
    if (input.email === undefined) throw badRequest('Send email or accountId (a person) or groupId (a group), one of them');
    return this.addPerson(principal, id, { email: input.email }, input.role);
  }

  private addPerson(
    principal: Principal,
    id: string,
    who: { email: string } | { accountId: string },
    role: MemberRole,
  ): { member: Member } {
    const input = { role };
    if (!this.d.settings.get('peopleSharing')) throw forbidden(Messages.peopleSharingOff);
    const item = this.ownItem(principal, id);
    assertMayGive(principal, role);
    const account = 'email' in who ? this.d.users.byEmailKey(who.email.trim().toLowerCase()) : this.d.users.personById(who.accountId);
    const usable = account && account.parentUserId === null && account.disabledAt === null && account.deletionRequestedAt === null;
    if (!usable) throw notFound('email' in who ? Messages.noAccountWithEmail : 'No account with this id on this Coffer.');
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
      this.d.changes.record(principal, ChangeKinds.memberAdded, item, { details: { memberId: account.id, role: input.role } });
      sharedOutChanged({ members: this.d.members, items: this.d.tree.items }, [item], true);
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
      assertMayGive(principal, role);
      this.d.members.setRole(item.id, accountId, role);
      this.d.hub.accessChanged(accountId);
      if (role === 'viewer' && this.d.members.membershipOf(accountId, item.id)?.role !== 'editor') {
        this.editorEnded(principal.accountId, item.id, accountId);
      }
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
    const removed =
      before !== null &&
      this.d.transactions.immediate(() => {
        if (!this.d.members.remove(item.id, accountId)) return false;
        this.d.changes.record(principal, ChangeKinds.memberRemoved, item, { details: { memberId: accountId } });
        sharedOutChanged({ members: this.d.members, items: this.d.tree.items }, [item], false);
        return true;
      });
    if (!before || !removed) throw notFound('This person is not a member of this item.');
    this.d.hub.accessChanged(accountId);
    this.record(principal, AuditActions.memberRemove, item, { email: before.email });
    // A group the account is in may still give it the item.
    const left = this.d.members.membershipOf(accountId, item.id);
    if (left?.role !== 'editor') this.editorEnded(principal.accountId, item.id, accountId);
    // Open pages of the removed account leave the item at once.
    if (!left) this.accessRemoved(accountId, item);
    this.notifications.notify(
      accountId,
      NotificationType.removed,
      `${this.ownerName(principal)} stopped sharing "${item.name}" with you.`,
      item.id,
      principal.accountId,
    );
    return { message: `Stopped sharing with ${before.email}` };
  }

  private addGroup(principal: Principal, id: string, groupId: string, role: MemberRole): { group: SharedGroup } {
    if (!this.d.settings.get('peopleSharing')) throw forbidden(Messages.peopleSharingOff);
    const item = this.ownItem(principal, id);
    const group = this.d.groups.get(groupId);
    if (!group) throw notFound('Group not found');
    assertMayGive(principal, role);
    this.d.transactions.immediate(() => {
      if (this.d.groups.ofItem(item.id).some((g) => g.groupId === groupId))
        throw conflict(`"${item.name}" is already shared with ${group.name}.`);
      this.d.groups.shareWith({
        itemId: item.id,
        ownerId: principal.accountId,
        groupId,
        role,
        addedBy: principal.loginId,
        addedAt: this.d.clock.now(),
      });
      this.d.changes.record(principal, ChangeKinds.memberAdded, item, { details: { groupId, role } });
      sharedOutChanged({ members: this.d.members, items: this.d.tree.items }, [item], true);
    });
    this.record(principal, AuditActions.memberAdd, item, { group: group.name, groupId, role });
    const text = `${this.ownerName(principal)} shared "${item.name}" with ${group.name} as ${role}.`;
    for (const m of this.d.groups.members(groupId)) {
      if (m.accountId !== principal.accountId)
        this.notifications.notify(m.accountId, NotificationType.shared, text, item.id, principal.accountId);
    }
    return { group: this.sharedGroup(item.id, groupId) };
  }

  setGroupRole(principal: Principal, id: string, groupId: string, role: MemberRole): { group: SharedGroup } {
    const item = this.ownItem(principal, id);
    const before = this.d.groups.ofItem(item.id).find((g) => g.groupId === groupId);
    if (!before) throw notFound('This item is not shared with this group.');
    if (before.role !== role) {
      assertMayGive(principal, role);
      this.d.groups.setShareRole(item.id, groupId, role);
      this.rightsChanged(this.d.groups.members(groupId).map((m) => m.accountId));
      if (role === 'viewer') this.groupAccessChanged(item, groupId);
      this.record(principal, AuditActions.memberRole, item, { group: before.name, groupId, role });
      const text = `${this.ownerName(principal)} made ${before.name} ${role} of "${item.name}".`;
      for (const m of this.d.groups.members(groupId)) {
        if (m.accountId !== principal.accountId)
          this.notifications.notify(m.accountId, NotificationType.roleChanged, text, item.id, principal.accountId);
      }
    }
    return { group: this.sharedGroup(item.id, groupId) };
  }

  removeGroup(principal: Principal, id: string, groupId: string): { message: string } {
    const item = this.ownItem(principal, id);
    const before = this.d.groups.ofItem(item.id).find((g) => g.groupId === groupId);
    const removed =
      before !== undefined &&
      this.d.transactions.immediate(() => {
        if (!this.d.groups.unshare(item.id, groupId)) return false;
        this.d.changes.record(principal, ChangeKinds.memberRemoved, item, { details: { groupId } });
        sharedOutChanged({ members: this.d.members, items: this.d.tree.items }, [item], false);
        return true;
      });
    if (!before || !removed) throw notFound('This item is not shared with this group.');
    this.rightsChanged(this.d.groups.members(groupId).map((m) => m.accountId));
    this.record(principal, AuditActions.memberRemove, item, { group: before.name, groupId });
    const text = `${this.ownerName(principal)} stopped sharing "${item.name}" with ${before.name}.`;
    for (const accountId of this.groupAccessChanged(item, groupId)) {
      this.notifications.notify(accountId, NotificationType.removed, text, item.id, principal.accountId);
    }
    return { message: `Stopped sharing with ${before.name}` };
  }

  /** After a group's share of an item weakened or ended: ends edits and access its members no longer have; returns those who lost the item. */
  private groupAccessChanged(item: { id: string; name: string; accountId: string }, groupId: string): string[] {
    const lost: string[] = [];
    for (const m of this.d.groups.members(groupId)) {
      if (m.accountId === item.accountId) continue;
      const left = this.d.members.membershipOf(m.accountId, item.id);
      if (left?.role !== 'editor') this.editorEnded(item.accountId, item.id, m.accountId);
      if (!left) {
        this.accessRemoved(m.accountId, item);
        lost.push(m.accountId);
      }
    }
    return lost;
  }

  private sharedGroup(itemId: string, groupId: string): SharedGroup {
    return toSharedGroup(this.d.groups.ofItem(itemId).find((g) => g.groupId === groupId)!);
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
      owner: { id: r.accountId, name: r.ownerName, email: r.teamFolder ? '' : r.ownerEmail },
      role: r.role,
      sharedAt: iso(r.addedAt),
      teamFolder: r.teamFolder,
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

/** 403 unless the login holds what the role lets its members do (a sub-user without them makes viewers only). */
function assertMayGive(principal: Principal, role: MemberRole): void {
  if (role === 'editor') for (const permission of EDITOR_PERMISSIONS) requirePermission(principal, permission);
}
