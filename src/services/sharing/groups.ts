import type { Clock } from '../../clock.ts';
import { GROUP_NAME_MAX, type GroupChoice, type GroupDetail, type GroupMember, type GroupView } from '../../contract/groups.ts';
import type { Transactions } from '../../db/repos/index.ts';
import type { GroupMemberRow, GroupRow, GroupSource, GroupsRepo } from '../../db/repos/groups.ts';
import type { MembersRepo } from '../../db/repos/members.ts';
import type { ItemsRepo } from '../../db/repos/items.ts';
import type { UsersRepo } from '../../db/repos/users.ts';
import { AppError, badRequest, conflict, forbidden, Messages, notFound } from '../../errors.ts';
import { newId } from '../../lib/ids.ts';
import { AuditActions, type AuditPrincipal, type AuditService } from '../admin/audit.ts';
import { iso } from '../files/item-views.ts';
import { type MemberService, NotificationType, type NotificationService } from './members.ts';
import { sharedOutChanged } from './shared-out.ts';

/** Who changes a group: a signed-in login (the admin or a group administrator), the command line, or single sign-on. */
export type GroupActor = { principal: AuditPrincipal & { isAdmin: boolean } } | { cli: true } | { idp: AuditPrincipal };

interface GroupDeps {
  clock: Clock;
  transactions: Transactions;
  groups: GroupsRepo;
  members: MembersRepo;
  items: ItemsRepo;
  users: UsersRepo;
  audit: AuditService;
}

const GROUP_NOT_FOUND = 'Group not found';
const NOT_IN_GROUP = 'This account is not a member of this group.';
const NOT_GROUP_ADMIN =
  'Only an administrator of this group can see or change its members: ask the admin of this Coffer to make the change, or to make you an administrator of the group.';
const COMPLETIONS = 10;
// More new groups than one person's claim plausibly brings; past it the rest wait for later sign-ons.
const MAX_GROUPS_CREATED_AT_SIGN_ON = 500;

const toView = (g: GroupRow): GroupView => ({
  id: g.id,
  name: g.name,
  description: g.description,
  source: g.source,
  teamFolderBytes: g.teamFolderBytes,
  size: g.size,
  items: g.items,
  createdAt: iso(g.createdAt),
});

const toMember = (m: GroupMemberRow): GroupMember => ({
  accountId: m.accountId,
  email: m.email,
  name: m.name,
  admin: m.isAdmin,
  addedAt: iso(m.addedAt),
});

/**
 * Groups of owner accounts: the admin makes them and names their members, a group administrator adds
 * and removes members of that group, single sign-on keeps its own groups' memberships. Joining a
 * group reaches what is shared with it at once, leaving ends it at once (Tree.actor reads memberships).
 */
export class GroupService {
  constructor(
    private readonly d: GroupDeps,
    private readonly sharing: MemberService,
    private readonly notifications: NotificationService,
  ) {}

  list(): GroupView[] {
    return this.d.groups.all().map(toView);
  }

  /** A group by id or name (any case), for the command line. */
  find(ref: string): GroupView | null {
    const group = this.d.groups.get(ref) ?? this.d.groups.get(this.d.groups.byNameKey(ref.normalize('NFC').trim().toLowerCase())?.id ?? '');
    return group ? toView(group) : null;
  }

  get(actor: GroupActor, id: string): GroupDetail {
    const group = this.manageable(actor, id);
    return { ...toView(group), members: this.d.groups.members(id).map(toMember) };
  }

  create(actor: GroupActor, input: { name: string; description?: string | undefined; source?: GroupSource | undefined }): GroupDetail {
    const source = input.source ?? 'admin';
    const name = groupName(input.name);
    const id = newId();
    this.d.transactions.immediate(() => {
      if (this.d.groups.byNameKey(name.toLowerCase())) throw conflict(`A group named "${name}" already exists.`);
      this.d.groups.insert({
        id,
        name,
        nameKey: name.toLowerCase(),
        description: input.description?.trim() ?? '',
        source,
        teamFolderBytes: null,
        createdAt: this.d.clock.now(),
      });
    });
    this.record(actor, AuditActions.groupCreate, id, { name, source });
    return this.get(actor, id);
  }

  update(
    actor: GroupActor,
    id: string,
    input: { name?: string | undefined; description?: string | undefined; teamFolderBytes?: number | null | undefined },
  ): GroupDetail {
    const group = this.require(id);
    const name = input.name === undefined ? group.name : groupName(input.name);
    this.d.transactions.immediate(() => {
      const taken = this.d.groups.byNameKey(name.toLowerCase());
      if (taken && taken.id !== id) throw conflict(`A group named "${name}" already exists.`);
      this.d.groups.update(id, { name, nameKey: name.toLowerCase(), description: input.description?.trim() ?? group.description });
      if (input.teamFolderBytes !== undefined) this.d.groups.setTeamFolderBytes(id, input.teamFolderBytes);
    });
    this.record(actor, AuditActions.groupUpdate, id, { name, before: group.name, teamFolderBytes: input.teamFolderBytes });
    return this.get(actor, id);
  }

  /** Deletes a group: its memberships and every share with it end; the shared items stay their owners'. */
  remove(actor: GroupActor, id: string): { message: string } {
    const group = this.require(id);
    const accounts = this.d.groups.members(id).map((m) => m.accountId);
    const items = this.d.groups.itemsOf(id);
    this.d.transactions.immediate(() => {
      this.d.groups.delete(id);
      const shared = items.flatMap((i) => this.d.items.get(i.ownerId, i.itemId) ?? []);
      sharedOutChanged(this.d, shared, false);
    });
    for (const accountId of accounts) this.accessEnded(accountId, items, `The group "${group.name}" was deleted.`);
    this.record(actor, AuditActions.groupDelete, id, { name: group.name, members: accounts.length, shares: items.length });
    return { message: `Deleted the group ${group.name}` };
  }

  addMember(actor: GroupActor, id: string, email: string, admin = false): { member: GroupMember } {
    const group = this.manageable(actor, id);
    const account = this.d.users.byEmailKey(email.trim().toLowerCase());
    // A group administrator learns no more of a disabled account than of an unknown email; the admin may add one.
    const hidden = account?.disabledAt != null && !isInstanceAdmin(actor);
    const usable = account && account.parentUserId === null && account.deletionRequestedAt === null && !hidden;
    if (!usable) throw notFound(Messages.noAccountWithEmail);
    if (admin && !isInstanceAdmin(actor)) throw forbidden('Only the admin makes group administrators.');
    if (!this.d.groups.addMember(id, account.id, admin, this.d.clock.now())) {
      throw conflict(`${account.email} is already a member of ${group.name}.`);
    }
    this.record(actor, AuditActions.groupMemberAdd, id, { name: group.name, email: account.email, admin });
    this.joined(account.id, group);
    return { member: this.memberOf(id, account.id) };
  }

  setAdmin(actor: GroupActor, id: string, accountId: string, admin: boolean): { member: GroupMember } {
    const group = this.require(id);
    if (!this.d.groups.setAdmin(id, accountId, admin)) throw notFound(NOT_IN_GROUP);
    const member = this.memberOf(id, accountId);
    this.record(actor, AuditActions.groupAdmin, id, { name: group.name, email: member.email, admin });
    return { member };
  }

  removeMember(actor: GroupActor, id: string, accountId: string): { message: string } {
    const group = this.manageable(actor, id);
    const before = this.d.groups.members(id).find((m) => m.accountId === accountId);
    if (!before) throw notFound(NOT_IN_GROUP);
    if (before.isAdmin && !isInstanceAdmin(actor) && !('idp' in actor)) throw forbidden('Only the admin removes a group administrator.');
    this.d.groups.removeMember(id, accountId);
    this.record(actor, AuditActions.groupMemberRemove, id, { name: group.name, email: before.email });
    this.accessEnded(accountId, this.d.groups.itemsOf(id), `You are no longer in the group "${group.name}".`);
    return { message: `Removed ${before.email} from ${group.name}` };
  }

  /** Groups for the share dialog: those whose name starts with `q`, else the account's own. */
  choices(accountId: string, q: string | undefined): { groups: GroupChoice[] } {
    const mine = new Map(this.d.groups.ofAccount(accountId).map((g) => [g.id, g.isAdmin]));
    const prefix = q?.normalize('NFC').trim().toLowerCase() ?? '';
    const rows = prefix ? this.d.groups.named(prefix, COMPLETIONS) : this.d.groups.ofAccount(accountId);
    return {
      groups: rows.map((g) => {
        const admin = mine.get(g.id) ?? false;
        return { id: g.id, name: g.name, size: g.size, member: mine.has(g.id), admin, teamFolderBytes: admin ? g.teamFolderBytes : null };
      }),
    };
  }

  /**
   * Single sign-on: the account's memberships in the identity provider's groups follow `names` (the
   * token's groups claim). Groups made here are left alone; an unknown name makes a group when `create`.
   */
  syncFromIdp(actor: AuditPrincipal, names: readonly string[], create: boolean): void {
    const accountId = actor.accountId;
    const wanted = new Map<string, { name: string; asSent: string }>();
    for (const raw of names) {
      const name = raw.normalize('NFC').trim();
      // A name no group here could have (too long, control characters) is skipped, not the whole sign-on refused.
      if (!groupNameProblem(name)) wanted.set(name.toLowerCase(), { name, asSent: raw.trim().toLowerCase() });
    }
    const by = { idp: actor } as const;
    let created = 0;
    for (const [key, { name, asSent }] of wanted) {
      // A group made before names were stored in NFC keeps its key as the provider first sent it.
      let group = this.d.groups.byNameKey(key) ?? (asSent === key ? null : this.d.groups.byNameKey(asSent));
      if (!group && create && created < MAX_GROUPS_CREATED_AT_SIGN_ON) {
        created++;
        try {
          this.create(by, { name, source: 'idp' });
        } catch (err) {
          // Another sign-on made it meanwhile: use that one.
          if (!(err instanceof AppError && err.status === 409)) throw err;
        }
        group = this.d.groups.byNameKey(key);
      }
      if (!group || group.source !== 'idp' || this.d.groups.member(group.id, accountId)) continue;
      this.d.groups.addMember(group.id, accountId, false, this.d.clock.now());
      this.record(by, AuditActions.groupMemberAdd, group.id, { name: group.name, email: actor.email ?? null, admin: false });
      const row = this.d.groups.get(group.id);
      if (row) this.joined(accountId, row);
    }
    for (const group of this.d.groups.idpGroupsOf(accountId)) {
      if (!wanted.has(group.nameKey.normalize('NFC'))) this.removeMember(by, group.id, accountId);
    }
  }

  /** A group the actor may manage: the admin and the command line any, a group administrator theirs (a member 403, anyone else 404). */
  private manageable(actor: GroupActor, id: string): GroupRow {
    if ('principal' in actor && !actor.principal.isAdmin) {
      const membership = this.d.groups.member(id, actor.principal.accountId);
      if (!membership) throw notFound(GROUP_NOT_FOUND);
      if (!membership.isAdmin) throw forbidden(NOT_GROUP_ADMIN);
    }
    return this.require(id);
  }

  private require(id: string): GroupRow {
    const group = this.d.groups.get(id);
    if (!group) throw notFound(GROUP_NOT_FOUND);
    return group;
  }

  private memberOf(groupId: string, accountId: string): GroupMember {
    return toMember(this.d.groups.members(groupId).find((m) => m.accountId === accountId)!);
  }

  private joined(accountId: string, group: GroupRow): void {
    const shared = group.items === 1 ? '1 item is shared with it' : `${group.items} items are shared with it`;
    this.notifications.notify(accountId, NotificationType.groupJoined, `You are now in the group "${group.name}": ${shared}.`, null);
  }

  /** What an account loses on leaving a group: open pages leave what it no longer reaches, edits end. */
  private accessEnded(
    accountId: string,
    items: ReadonlyArray<{ itemId: string; ownerId: string; name: string; role: string }>,
    text: string,
  ): void {
    this.sharing.rightsChanged([accountId]);
    for (const item of items) {
      if (item.ownerId === accountId) continue;
      const left = this.d.members.membershipOf(accountId, item.itemId);
      if (item.role === 'editor' && left?.role !== 'editor') this.sharing.editorEnded(item.ownerId, item.itemId, accountId);
      if (!left) this.sharing.accessRemoved(accountId, { id: item.itemId, name: item.name });
    }
    this.notifications.notify(accountId, NotificationType.groupLeft, text, null);
  }

  private record(
    actor: GroupActor,
    action: (typeof AuditActions)[keyof typeof AuditActions],
    id: string,
    details: Record<string, unknown>,
  ): void {
    if ('cli' in actor) this.d.audit.record({ action, actor: 'cli', targetType: 'group', targetId: id, details });
    else if ('idp' in actor)
      this.d.audit.record({ action, principal: actor.idp, targetType: 'group', targetId: id, details: { ...details, by: 'sign-on' } });
    else this.d.audit.record({ action, principal: actor.principal, targetType: 'group', targetId: id, details });
  }
}

function isInstanceAdmin(actor: GroupActor): boolean {
  return 'cli' in actor || ('principal' in actor && actor.principal.isAdmin);
}

/** Why `name` (trimmed, NFC) cannot be a group's name (1 to 64 characters, no control characters), or null when it can. */
function groupNameProblem(name: string): string | null {
  if (name.length < 1 || name.length > GROUP_NAME_MAX) return `A group name is 1 to ${GROUP_NAME_MAX} characters.`;
  if (/[\u0000-\u001f\u007f]/.test(name)) return 'A group name cannot hold control characters.';
  return null;
}

/** A group's name, trimmed and in NFC: one name whatever Unicode form typed it ("é" as one code point or "e" and an accent). */
function groupName(raw: string): string {
  const name = raw.normalize('NFC').trim();
  const problem = groupNameProblem(name);
  if (problem) throw badRequest(problem);
  return name;
}
