import type { UserEntry, UserSort } from '../../contract/admin.ts';
import type { Clock } from '../../clock.ts';
import type { Transactions } from '../../db/repos/index.ts';
import type { MembersRepo } from '../../db/repos/members.ts';
import type { ItemsRepo } from '../../db/repos/items.ts';
import type { TeamFoldersRepo } from '../../db/repos/team-folders.ts';
import type { User, UsersRepo } from '../../db/repos/users.ts';
import { badRequest, conflict, forbidden, Messages, notFound } from '../../errors.ts';
import { Jobs } from '../../jobs/catalog.ts';
import type { JobQueue } from '../../jobs/queue.ts';
import { decodeCursor, encodeCursor } from '../../lib/cursor.ts';
import { actorFields, type AuditAction, AuditActions, type Actor, type AuditService } from '../admin/audit.ts';
import type { DavLockService } from '../dav/dav-locks.ts';
import { parsePermissions } from '../identity/principal.ts';
import type { QuotaService } from '../files/quota.ts';
import type { ConfirmationPurpose, ConfirmedActor, IdentityCheck } from './identity-check.ts';
import type { SessionService } from './sessions.ts';
import type { BatchRun, TrashService } from '../files/trash.ts';
import { sharedOutChanged } from '../sharing/shared-out.ts';
import { runInTurns, type Steps } from '../../lib/steps.ts';

export interface UsersDeps {
  clock: Clock;
  transactions: Transactions;
  users: UsersRepo;
  items: ItemsRepo;
  members: MembersRepo;
  teamFolders: TeamFoldersRepo;
  quota: QuotaService;
  audit: AuditService;
  sessions: SessionService;
  queue: JobQueue;
  trash: TrashService;
  davLocks: DavLockService;
  identity: IdentityCheck;
}

const ROOT_PAGE = 100;

const CONFIRM_DELETION: ConfirmationPurpose = {
  action: AuditActions.userDelete,
  recentSignIn: true,
  passwordNeeded: 'Enter your password to delete the account: its files cannot be brought back, so Coffer checks it is you first.',
  codeNeeded:
    'Enter a code from your authenticator app, or a backup code, to delete the account: its files cannot be brought back, so Coffer checks it is you first.',
  noProof: 'Sign out and sign in again, then delete the account within 10 minutes: Coffer checks it is you first.',
};

/** The admin's view of every account: storage limits, disabling, deleting. */
export class UsersService {
  private readonly purgedListeners: Array<(accountId: string) => void> = [];

  constructor(private readonly d: UsersDeps) {}

  /** `listener` runs once an account (or team folder) is purged, with its id (what others left in progress there ends with it). */
  onPurged(listener: (accountId: string) => void): void {
    this.purgedListeners.push(listener);
  }

  countLogins(): number {
    return this.d.users.count();
  }

  /** Owners in `sort` order (creation by default), `limit` per page, each followed by all of its sub-users; `q` filters. */
  list(input: { limit: number; cursor?: string; q?: string; sort?: UserSort }): { users: UserEntry[]; nextCursor: string | null } {
    const sort = input.sort ?? 'created';
    const after = input.cursor ? decodeCursor(input.cursor, [sort === 'name' || sort === 'email' ? 'string' : 'number', 'string']) : null;
    if (input.cursor && !after) throw badRequest(Messages.invalidCursor);
    const position = after ? ([after[0], after[1]] as [string | number, string]) : null;
    const owners = this.d.users.ownersPage({ sort, q: input.q || undefined, after: position }, input.limit + 1);
    const page = owners.slice(0, input.limit);
    const shared = this.d.members.sharedCounts(page.map((o) => o.id));
    const users: UserEntry[] = [];
    for (const owner of page) {
      const usage = this.d.quota.usage(owner.id);
      const entry = (r: User): UserEntry => ({
        id: r.id,
        email: r.email,
        name: r.name,
        createdAt: new Date(r.createdAt).toISOString(),
        mfaEnabled: r.mfaEnabled,
        storageUsed: usage.used,
        storageLimit: owner.storageLimit,
        storageTotal: usage.total,
        parentUserId: r.parentUserId,
        permissions: r.parentUserId ? [...parsePermissions(r.permissions)] : null,
        disabled: owner.disabledAt !== null,
        deletionPending: owner.deletionRequestedAt !== null,
        emailTrusted: r.emailTrusted,
      });
      users.push({ ...entry(owner), sharedWithPeople: shared.get(owner.id) ?? 0 }, ...this.d.users.subUsersOf(owner.id).map(entry));
    }
    const last = page.at(-1);
    return { users, nextCursor: owners.length > input.limit && last ? encodeCursor([this.d.users.sortValue(last, sort), last.id]) : null };
  }

  /** Sets an owner's limit in bytes; null returns it to the instance default. Sub-users share their owner's. */
  setStorageLimit(targetUserId: string, storageLimit: number | null, by?: Actor): { storageLimit: number | null } {
    const row = this.d.users.byId(targetUserId);
    // A team folder's limit is set on the team folder.
    if (!row || this.d.teamFolders.isTeam(row.id)) throw notFound(Messages.userNotFound);
    if (row.parentUserId) throw badRequest(Messages.subUserSharesLimit);
    this.d.users.setStorageLimit(targetUserId, storageLimit, this.d.clock.now());
    if (by)
      this.d.audit.record({
        action: AuditActions.userStorageLimit,
        ...actorFields(by),
        targetType: 'user',
        targetId: targetUserId,
        details: { storageLimit },
      });
    return { storageLimit };
  }

  /** The audit record of an admin's action on an account, named by its email. */
  private auditOn(row: User, action: AuditAction, by: Actor): void {
    this.d.audit.record({ action, ...actorFields(by), targetType: 'user', targetId: row.id, details: { email: row.email } });
  }

  /** An account the admin may disable or delete: an owner that is not the first admin. */
  private manageable(targetUserId: string): User {
    const row = this.d.users.byId(targetUserId);
    if (!row || this.d.teamFolders.isTeam(row.id)) throw notFound(Messages.userNotFound);
    if (row.parentUserId) throw badRequest(Messages.subUserOfAccount);
    if (row.isAdmin) throw forbidden(Messages.firstAdminProtected);
    return row;
  }

  /** Signs every login of the account out at once (their token versions move on), ends their event streams and drops their WebDAV locks. */
  private revokeAll(ownerId: string): void {
    for (const loginId of this.d.users.loginIdsOfAccount(ownerId)) this.d.sessions.invalidateAll(loginId);
    this.d.davLocks.forgetAccount(ownerId);
    this.d.davLocks.forgetMember(ownerId);
  }

  /**
   * The admin vouches that a login's address is its person's (one chosen at sign-up or by an owner): single
   * sign-on may then link a provider account to it by that email. Already trusted: nothing changes.
   */
  confirmEmail(loginId: string, by: Actor): { id: string; email: string; changed: boolean } {
    const row = this.d.users.byId(loginId);
    if (!row || this.d.teamFolders.isTeam(row.id)) throw notFound(Messages.userNotFound);
    if (row.emailTrusted) return { id: row.id, email: row.email, changed: false };
    this.d.users.setEmailTrusted(row.id, this.d.clock.now());
    this.auditOn(row, AuditActions.userEmailConfirm, by);
    return { id: row.id, email: row.email, changed: true };
  }

  /** Disables (every session of the account ends at once) or enables an account; the same state again changes nothing. */
  setDisabled(targetUserId: string, disabled: boolean, by: Actor): { id: string; email: string; disabled: boolean } {
    const row = this.manageable(targetUserId);
    if (row.deletionRequestedAt !== null) throw conflict(Messages.accountBeingDeleted);
    const was = row.disabledAt !== null;
    if (was !== disabled) {
      const now = this.d.clock.now();
      this.d.transactions.immediate(() => this.d.users.setAccountDisabled(row.id, disabled ? now : null, now));
      if (disabled) this.revokeAll(row.id);
      this.auditOn(row, disabled ? AuditActions.userDisable : AuditActions.userEnable, by);
    }
    return { id: row.id, email: row.email, disabled };
  }

  /**
   * Deletes an account: disabled and signed out at once, then a job moves its files to the trash and
   * purges them (freeing the usage and the objects) and removes its logins. The audit trail stays.
   */
  async requestDeletion(targetUserId: string, confirmed: ConfirmedActor): Promise<{ message: string; queued: true; jobId: string }> {
    const checked = this.manageable(targetUserId);
    const by = await this.d.identity.actor(confirmed, CONFIRM_DELETION);
    // Read again after the wait: the account may have changed meanwhile.
    const row = this.manageable(checked.id);
    const now = this.d.clock.now();
    const jobId = this.d.transactions.immediate(() => {
      this.d.users.setAccountDisabled(row.id, row.disabledAt ?? now, now);
      this.d.users.markForDeletion(row.id, row.deletionRequestedAt ?? now);
      // Asking again queues another run (after a failed one, say): the job is safe to run twice.
      return this.d.queue.insert(Jobs.accountDelete, { accountId: row.id });
    });
    this.revokeAll(row.id);
    this.auditOn(row, AuditActions.userDelete, by);
    return { message: `Deleting account ${row.email}`, queued: true, jobId };
  }

  /** Job body of `account.delete`: trash every root item, purge the trash, delete the rows; safe to run again. */
  purgeAccount(accountId: string, run: BatchRun = {}): Promise<{ removed: boolean }> {
    return runInTurns(this.purgeSteps(accountId, run));
  }

  private *purgeSteps(accountId: string, run: BatchRun): Steps<{ removed: boolean }> {
    const row = this.d.users.byId(accountId);
    if (!row || row.deletionRequestedAt === null) return { removed: false };
    for (;;) {
      const roots = this.d.items.liveRootIds(accountId, ROOT_PAGE);
      if (roots.length === 0) break;
      yield* this.d.trash.trashSteps(accountId, accountId, roots, run);
    }
    // Everything in its trash goes, whenever it was trashed.
    yield* this.d.trash.emptySteps({ accountId, loginId: accountId }, Number.MAX_SAFE_INTEGER, run, true);
    const logins = this.d.users.loginIdsOfAccount(accountId);
    const removed = this.d.transactions.immediate(() => {
      const memberOf = this.d.members.itemsSharedWith(accountId);
      const gone = this.d.users.deleteAccount(accountId);
      // Its memberships went with it: items shared with it alone are no longer shared out.
      const shared = memberOf.flatMap((m) => this.d.items.get(m.ownerId, m.itemId) ?? []);
      sharedOutChanged({ members: this.d.members, items: this.d.items }, shared, false);
      return gone;
    });
    for (const loginId of logins) this.d.sessions.forgetLogin(loginId);
    for (const listener of this.purgedListeners) listener(accountId);
    this.d.audit.record({
      action: AuditActions.userDeleted,
      actor: 'system',
      targetType: 'user',
      targetId: accountId,
      details: { email: row.email },
    });
    return { removed };
  }
}
