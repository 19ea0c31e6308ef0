import type { Clock } from '../../clock.ts';
import { ChangeKinds, type ChangeLog } from '../changes/change-log.ts';
import type { TeamFolderChoice, TeamFolderView } from '../../contract/groups.ts';
import { nameProblem, normalizeName } from '../../contract/names.ts';
import { formatSize } from '../../contract/size.ts';
import type { MemberRole } from '../../contract/sharing.ts';
import type { GroupsRepo } from '../../db/repos/groups.ts';
import type { Transactions } from '../../db/repos/index.ts';
import type { ItemsRepo } from '../../db/repos/items.ts';
import type { TeamFolderRow, TeamFoldersRepo } from '../../db/repos/team-folders.ts';
import type { UsersRepo } from '../../db/repos/users.ts';
import { badRequest, forbidden, notFound } from '../../errors.ts';
import { Jobs } from '../../jobs/catalog.ts';
import type { JobQueue } from '../../jobs/queue.ts';
import { newId } from '../../lib/ids.ts';
import { AuditActions, type AuditService } from '../admin/audit.ts';
import type { MemberService } from '../sharing/members.ts';
import { FileEventType, type FileEvents } from '../files/file-events.ts';
import type { Page } from '../files/items.ts';
import type { QuotaService } from '../files/quota.ts';
import type { LinkExpiry, ShareOptions, ShareService } from '../sharing/shares.ts';
import type { TrashPlan, TrashService } from '../files/trash.ts';
import type { ShareLinkPage, ShareLinkView } from '../../contract/sharing.ts';
import type { PageQuery } from '../files/tree.ts';
import type { MembersRepo } from '../../db/repos/members.ts';
import type { Principal } from '../identity/principal.ts';

interface TeamFolderDeps {
  clock: Clock;
  transactions: Transactions;
  users: UsersRepo;
  items: ItemsRepo;
  groups: GroupsRepo;
  teamFolders: TeamFoldersRepo;
  queue: JobQueue;
  quota: QuotaService;
  audit: AuditService;
  members: MemberService;
  membership: MembersRepo;
  trash: TrashService;
  shares: ShareService;
  changes: ChangeLog;
  events: FileEvents;
  peopleSharing: () => boolean;
}

const NOT_FOUND = 'Team folder not found';

/** A team folder's grants: each group once. */
type Grants = ReadonlyArray<{ groupId: string; role: MemberRole }>;

/**
 * Team folders: folders that belong to a team rather than a person. Each has an account of its own,
 * which no one signs in to, so its bytes count against its own limit and deleting any person's account
 * leaves it alone; its groups reach it through the one access rule, as anything shared with a group.
 * The admin grants groups their roles through the members service, acting for the team's account.
 */
export class TeamFolderService {
  constructor(private readonly d: TeamFolderDeps) {}

  list(): { teamFolders: TeamFolderView[] } {
    return { teamFolders: this.d.teamFolders.all().map((r) => this.view(r)) };
  }

  create(
    principal: Principal,
    input: { name: string; groups: Grants; quota: number | null },
    forGroup: string | null = null,
  ): TeamFolderView {
    const name = folderName(input.name);
    this.requireGroups(input.groups);
    const id = newId();
    const folderId = newId();
    const now = this.d.clock.now();
    const team = this.acting(principal, id);
    const folder = this.d.transactions.immediate(() => {
      // Not an email address: nothing that names an account by email can reach this one.
      this.d.users.insert({
        id,
        email: `team:${id}`,
        emailKey: `team:${id.toLowerCase()}`,
        emailTrusted: false,
        name,
        passwordHash: null,
        isAdmin: false,
        parentUserId: null,
        permissions: null,
        createdAt: now,
      });
      this.d.users.setStorageLimit(id, input.quota, now);
      const folder = this.d.items.insertFolder({ id: folderId, accountId: id, parentId: null, name }, now);
      this.d.changes.record({ accountId: id, loginId: principal.loginId }, ChangeKinds.created, folder);
      this.d.teamFolders.insert({ accountId: id, folderId, groupId: forGroup, createdBy: principal.loginId, createdAt: now });
      // In the same transaction: a grant refused (sharing with people off) leaves no team folder behind.
      for (const grant of input.groups) this.d.members.add(team, folderId, grant);
      return folder;
    });
    this.d.audit.record({
      action: AuditActions.teamFolderCreate,
      principal,
      targetType: 'team_folder',
      targetId: id,
      details: { name, quota: input.quota },
    });
    // Once the groups reach it, so their members hear it made, as a stream resumed over it replays it.
    this.d.events.announce({ accountId: id, loginId: principal.loginId }, FileEventType.folderCreated, folder);
    return this.view(this.require(id));
  }

  /**
   * A group administrator's team folder: for its own group, as editor, with a quota out of what the admin
   * allows that group's administrators to give (never more); the admin manages it afterwards.
   */
  createForGroup(principal: Principal, groupId: string, input: { name: string; quota: number }): TeamFolderView {
    const group = this.d.groups.get(groupId);
    const membership = group ? this.d.groups.member(groupId, principal.accountId) : null;
    if (!group || !membership) throw notFound('Group not found');
    if (!membership.isAdmin) throw forbidden('Only an administrator of this group makes team folders for it.');
    if (group.teamFolderBytes === null) throw forbidden(`The admin has not let the administrators of ${group.name} make team folders.`);
    const left = group.teamFolderBytes - this.d.teamFolders.allowanceUsed(groupId);
    if (input.quota > left) {
      throw forbidden(`${group.name} may give team folders ${formatSize(Math.max(0, left))} more; ask the admin for a larger allowance.`);
    }
    return this.create(principal, { name: input.name, groups: [{ groupId, role: 'editor' }], quota: input.quota }, groupId);
  }

  /** Renames the folder, changes its limit (null: the instance default). */
  update(principal: Principal, id: string, input: { name?: string | undefined; quota?: number | null | undefined }): TeamFolderView {
    const row = this.require(id);
    const now = this.d.clock.now();
    if (input.name !== undefined) {
      const name = folderName(input.name);
      const by = { accountId: id, loginId: principal.loginId };
      const { before, renamed } = this.d.transactions.immediate(() => {
        const before = this.d.items.get(id, row.folderId);
        const renamed = this.d.items.rename(row.folderId, name);
        if (before && before.name !== renamed.name) this.d.changes.record(by, ChangeKinds.renamed, renamed, { before });
        this.d.users.setName(id, name, now);
        return { before, renamed };
      });
      if (before && before.name !== renamed.name) this.d.events.announce(by, FileEventType.renamed, renamed, { oldName: before.name });
    }
    if (input.quota !== undefined) this.d.users.setStorageLimit(id, input.quota, now);
    this.d.audit.record({
      action: AuditActions.teamFolderUpdate,
      principal,
      targetType: 'team_folder',
      targetId: id,
      details: { ...input },
    });
    return this.view(this.require(id));
  }

  /** Sets which groups reach the folder and with which role: others lose it at once. */
  setGroups(principal: Principal, id: string, groups: Grants): TeamFolderView {
    const row = this.require(id);
    this.requireGroups(groups);
    const team = this.acting(principal, id);
    const current = new Map(this.d.groups.ofItem(row.folderId).map((g) => [g.groupId, g.role]));
    const wanted = new Map(groups.map((g) => [g.groupId, g.role]));
    // One transaction, additions first: one refused (sharing with people off) changes nothing, and no group hears it lost the folder.
    this.d.transactions.immediate(() => {
      for (const [groupId, role] of wanted) if (!current.has(groupId)) this.d.members.add(team, row.folderId, { groupId, role });
      for (const [groupId, role] of wanted) {
        if (current.has(groupId) && current.get(groupId) !== role) this.d.members.setGroupRole(team, row.folderId, groupId, role);
      }
      for (const groupId of current.keys()) if (!wanted.has(groupId)) this.d.members.removeGroup(team, row.folderId, groupId);
    });
    return this.view(this.require(id));
  }

  /** Deletes the folder and everything in it (a job, as for an account); its groups lose it at once. */
  remove(principal: Principal, id: string): { message: string; jobId: string } {
    const row = this.require(id);
    const team = this.acting(principal, id);
    for (const g of this.d.groups.ofItem(row.folderId)) this.d.members.removeGroup(team, row.folderId, g.groupId);
    const now = this.d.clock.now();
    const jobId = this.d.transactions.immediate(() => {
      this.d.users.setAccountDisabled(id, now, now);
      this.d.users.markForDeletion(id, now);
      return this.d.queue.insert(Jobs.accountDelete, { accountId: id });
    });
    this.d.audit.record({
      action: AuditActions.teamFolderDelete,
      principal,
      targetType: 'team_folder',
      targetId: id,
      details: { name: row.name },
    });
    return { message: `Deleting the team folder ${row.name}`, jobId };
  }

  /** The team folders the caller's account reaches, and whether it administers each. */
  mine(principal: Principal): { teamFolders: TeamFolderChoice[] } {
    if (!this.d.peopleSharing()) return { teamFolders: [] };
    return {
      teamFolders: this.d.teamFolders.reachedBy(principal.accountId).map((f) => ({
        id: f.id,
        name: this.d.teamFolders.get(f.id)?.name ?? '',
        folderId: f.folderId,
        administrator: this.d.teamFolders.administers(principal.accountId, f.id),
      })),
    };
  }

  /** The team folder's trash, for its administrators. */
  trashPage(principal: Principal, id: string, q: PageQuery): Page {
    return this.d.trash.list(this.administered(principal, id), q);
  }

  restore(principal: Principal, id: string, ids: string[]): TrashPlan {
    return this.d.trash.planRestore(this.administered(principal, id), ids);
  }

  deleteForever(principal: Principal, id: string, ids: string[]): { message: string; queued: true; jobId: string } {
    return this.d.trash.startPermanentDelete(this.administered(principal, id), ids);
  }

  /** Public links of items in the team folder, made or removed by its administrators (the links are the team's). */
  share(
    principal: Principal,
    id: string,
    input: { ids: readonly string[]; shared: boolean; expiry: LinkExpiry; options: ShareOptions; origin: string },
  ): Promise<{ links: Record<string, string> }> | { message: string } {
    const team = this.administered(principal, id);
    return input.shared
      ? this.d.shares.share(team, input.ids, input.expiry, input.origin, input.options)
      : this.d.shares.unshare(team, input.ids);
  }

  /** The existing public links of items in the team folder, by item id; creates none. */
  links(principal: Principal, id: string, ids: readonly string[], origin: string): { links: Record<string, string> } {
    return this.d.shares.links(this.administered(principal, id), ids, origin);
  }

  /** A page of the team folder's links with their options, newest first (its administrators manage them as an owner does). */
  linkPage(principal: Principal, id: string, query: { limit: number; cursor?: string; itemId?: string }, origin: string): ShareLinkPage {
    const { links, nextCursor } = this.d.shares.list(this.administered(principal, id).accountId, query, origin);
    return { links: links.map(({ accountId: _, ...link }) => link), nextCursor };
  }

  updateLink(principal: Principal, id: string, token: string, options: ShareOptions, origin: string): Promise<ShareLinkView> {
    return this.d.shares.update(this.administered(principal, id), token, options, origin);
  }

  removeLink(principal: Principal, id: string, token: string): { message: string } {
    return this.d.shares.unshareToken(this.administered(principal, id), token);
  }

  /**
   * The caller acting for the team's account, when its account administers the team folder (a group
   * administrator of a group given it as editor); a member otherwise 403, anyone else 404. What it does
   * is recorded under its own login.
   */
  private administered(principal: Principal, id: string): Principal {
    const row = this.d.teamFolders.get(id);
    const reaches =
      row && !row.deleting && this.d.peopleSharing() && this.d.membership.membershipOf(principal.accountId, row.folderId) !== null;
    if (!row || !reaches) throw notFound(NOT_FOUND);
    if (!this.d.teamFolders.administers(principal.accountId, id)) {
      throw forbidden('Only an administrator of a group that edits this team folder manages its trash and links.');
    }
    return {
      loginId: principal.loginId,
      sessionId: principal.sessionId,
      ip: principal.ip,
      requestId: principal.requestId,
      email: principal.email,
      name: principal.name,
      permissions: principal.permissions,
      isOwner: principal.isOwner,
      isAdmin: false,
      accountId: id,
    };
  }

  private require(id: string): TeamFolderRow {
    const row = this.d.teamFolders.get(id);
    if (!row || row.deleting) throw notFound(NOT_FOUND);
    return row;
  }

  private requireGroups(groups: Grants): void {
    if (new Set(groups.map((g) => g.groupId)).size !== groups.length) throw badRequest('Name each group once.');
    for (const g of groups) if (!this.d.groups.get(g.groupId)) throw notFound(`No group with id ${g.groupId}`);
  }

  /** The admin acting for the team's account: what it does is recorded under the admin's login. */
  private acting(principal: Principal, id: string): Principal {
    return { ...principal, accountId: id, isOwner: true, isAdmin: false };
  }

  private view(r: TeamFolderRow): TeamFolderView {
    const usage = this.d.quota.usage(r.id);
    return {
      id: r.id,
      name: r.name,
      folderId: r.folderId,
      size: r.storageUsed,
      quota: usage.total,
      ownQuota: r.storageLimit !== null,
      groups: this.d.groups.ofItem(r.folderId).map((g) => ({ groupId: g.groupId, name: g.name, size: g.size, role: g.role })),
      createdAt: new Date(r.createdAt).toISOString(),
    };
  }
}

/** A team folder's name follows the rule of every item name. */
function folderName(raw: string): string {
  const name = normalizeName(raw.trim());
  const problem = nameProblem(name);
  if (problem) throw badRequest(problem);
  return name;
}
