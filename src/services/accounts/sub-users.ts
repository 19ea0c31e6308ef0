import type { EventHub } from '../../events/hub.ts';
import type { SubUser } from '../../contract/accounts.ts';
import type { Clock } from '../../clock.ts';
import type { User, UsersRepo } from '../../db/repos/users.ts';
import { AppError, Messages, notFound } from '../../errors.ts';
import type { AccountService } from './accounts.ts';
import type { DavLockService } from '../dav/dav-locks.ts';
import { PERMISSION_CATALOG, type Permission } from '../../contract/permissions.ts';
import { parsePermissions, type Principal } from '../identity/principal.ts';
import type { SessionService } from './sessions.ts';
import { AuditActions, type AuditService } from '../admin/audit.ts';

/** Sub-users an account may have. */
const SUB_USERS_PER_ACCOUNT = 1000;

const toView = (r: User): SubUser => ({
  id: r.id,
  email: r.email,
  name: r.name,
  permissions: [...parsePermissions(r.permissions)],
  createdAt: new Date(r.createdAt).toISOString(),
  mfaEnabled: r.mfaEnabled,
});

/** Extra logins of an account, each with its own password, MFA, sessions and permission set. */
export class SubUserService {
  constructor(
    private readonly users: UsersRepo,
    private readonly clock: Clock,
    private readonly accounts: AccountService,
    private readonly sessions: SessionService,
    private readonly audit: AuditService,
    private readonly davLocks: DavLockService,
    private readonly hub: Pick<EventHub, 'accessChanged'>,
  ) {}

  private readonly removedListeners: Array<(loginId: string) => void> = [];
  private readonly takenListeners: Array<(loginId: string, taken: readonly Permission[]) => void> = [];

  /** `listener` runs once a sub-user is removed, with its login id (what it left in progress ends with it). */
  onRemoved(listener: (loginId: string) => void): void {
    this.removedListeners.push(listener);
  }

  /** `listener` runs once permissions are taken from a sub-user, with its login id and those taken. */
  onPermissionsTaken(listener: (loginId: string, taken: readonly Permission[]) => void): void {
    this.takenListeners.push(listener);
  }

  list(owner: Principal) {
    const rows = this.users.subUsersOf(owner.accountId);
    return { subUsers: rows.map(toView), availablePermissions: PERMISSION_CATALOG.map((p) => ({ ...p })) };
  }

  async create(
    owner: Principal,
    input: { email: string; password: string; name: string; permissions: Permission[] },
  ): Promise<{ subUser: SubUser }> {
    // Every list of the account's sub-users (its own, the admin's user list) is answered whole.
    if (this.users.countSubUsers(owner.accountId) >= SUB_USERS_PER_ACCOUNT)
      throw new AppError(
        409,
        `There are already ${SUB_USERS_PER_ACCOUNT.toLocaleString('en-US')} sub-users: delete one you no longer use first`,
      );
    const row = await this.accounts.createLogin({
      email: input.email,
      password: input.password,
      name: input.name,
      owner: { id: owner.accountId, permissions: orderPermissions(input.permissions) },
    });
    const subUser = this.view(owner, row.id);
    this.audit.record({
      action: AuditActions.subUserCreate,
      principal: owner,
      targetType: 'user',
      targetId: row.id,
      details: { email: subUser.email, permissions: subUser.permissions },
    });
    return { subUser };
  }

  /**
   * Replaces the whole set; the sub-user's next request sees it (permissions are read per request). A
   * permission taken away drops the sub-user's WebDAV locks: they were taken under what it may no longer do.
   */
  setPermissions(owner: Principal, id: string, permissions: Permission[]): { subUser: SubUser } {
    const before = this.view(owner, id).permissions;
    const changed = this.users.setPermissions(owner.accountId, id, JSON.stringify(orderPermissions(permissions)), this.clock.now());
    if (!changed) throw notFound(Messages.subUserNotFound);
    const subUser = this.view(owner, id);
    const taken = before.filter((p) => !subUser.permissions.includes(p));
    if (taken.length > 0) {
      this.davLocks.forgetLogin(id);
      for (const listener of this.takenListeners) listener(id, taken);
    }
    this.hub.accessChanged(owner.accountId);
    this.audit.record({
      action: AuditActions.subUserPermissions,
      principal: owner,
      targetType: 'user',
      targetId: id,
      details: { permissions: subUser.permissions },
    });
    return { subUser };
  }

  /** Removes the login with its sessions, presence and WebDAV locks at once; its files belong to the owner and stay. */
  remove(owner: Principal, id: string): { message: string } {
    const email = this.users.deleteSubUser(owner.accountId, id);
    if (email === null) throw notFound(Messages.subUserNotFound);
    this.sessions.forgetLogin(id);
    this.davLocks.forgetLogin(id);
    for (const listener of this.removedListeners) listener(id);
    this.audit.record({
      action: AuditActions.subUserDelete,
      principal: owner,
      targetType: 'user',
      targetId: id,
      details: { email },
    });
    return { message: 'Sub-user deleted' };
  }

  private view(owner: Principal, id: string): SubUser {
    const row = this.users.subUser(owner.accountId, id);
    if (!row) throw notFound(Messages.subUserNotFound);
    return toView(row);
  }
}

/** Stores permissions in catalog order without duplicates. */
function orderPermissions(permissions: readonly Permission[]): Permission[] {
  const wanted = new Set(permissions);
  return PERMISSION_CATALOG.map((p) => p.key).filter((k) => wanted.has(k));
}
