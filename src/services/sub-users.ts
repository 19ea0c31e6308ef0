import type { Database } from 'bun:sqlite';
import type { CoreContext } from '../context.ts';
import { Messages, notFound } from '../errors.ts';
import type { AccountService } from './accounts.ts';
import { PERMISSION_CATALOG, type Permission, type Principal } from './principal.ts';
import type { SessionService } from './sessions.ts';
import { AuditActions, type AuditService } from './audit.ts';

export interface SubUserView {
  id: string;
  email: string;
  name: string;
  permissions: Permission[];
  createdAt: string;
  mfaEnabled: boolean;
}

interface SubUserRow {
  id: string;
  email: string;
  name: string;
  permissions: string | null;
  created_at: number;
  mfa_enabled: number;
}

const toView = (r: SubUserRow): SubUserView => ({
  id: r.id,
  email: r.email,
  name: r.name,
  permissions: JSON.parse(r.permissions ?? '[]') as Permission[],
  createdAt: new Date(r.created_at).toISOString(),
  mfaEnabled: Boolean(r.mfa_enabled),
});

/** Extra logins of an account, each with its own password, MFA, sessions and permission set. */
export class SubUserService {
  private readonly sqlite: Database;

  constructor(
    private readonly ctx: CoreContext,
    private readonly accounts: AccountService,
    private readonly sessions: SessionService,
    private readonly audit: AuditService,
  ) {
    this.sqlite = ctx.db.$client;
  }

  list(owner: Principal) {
    const rows = this.sqlite
      .query<SubUserRow, [string]>('SELECT * FROM users WHERE parent_user_id = ? ORDER BY created_at, id')
      .all(owner.accountId);
    return { subUsers: rows.map(toView), availablePermissions: PERMISSION_CATALOG.map((p) => ({ ...p })) };
  }

  async create(
    owner: Principal,
    input: { email: string; password: string; name: string; permissions: Permission[] },
  ): Promise<{ subUser: SubUserView }> {
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

  /** Replaces the whole set; the sub-user's next request sees it (permissions are read per request). */
  setPermissions(owner: Principal, id: string, permissions: Permission[]): { subUser: SubUserView } {
    const changes = this.sqlite
      .query('UPDATE users SET permissions = ?, updated_at = ? WHERE id = ? AND parent_user_id = ?')
      .run(JSON.stringify(orderPermissions(permissions)), this.ctx.clock.now(), id, owner.accountId).changes;
    if (changes === 0) throw notFound(Messages.subUserNotFound);
    const subUser = this.view(owner, id);
    this.audit.record({
      action: AuditActions.subUserPermissions,
      principal: owner,
      targetType: 'user',
      targetId: id,
      details: { permissions: subUser.permissions },
    });
    return { subUser };
  }

  /** Removes the login with its sessions and presence at once; its files belong to the owner and stay. */
  remove(owner: Principal, id: string): { message: string } {
    const gone = this.sqlite
      .query<{ email: string }, [string, string]>('DELETE FROM users WHERE id = ? AND parent_user_id = ? RETURNING email')
      .get(id, owner.accountId);
    if (!gone) throw notFound(Messages.subUserNotFound);
    this.sessions.forgetLogin(id);
    this.audit.record({
      action: AuditActions.subUserDelete,
      principal: owner,
      targetType: 'user',
      targetId: id,
      details: { email: gone.email },
    });
    return { message: 'Sub-user deleted' };
  }

  private view(owner: Principal, id: string): SubUserView {
    const row = this.sqlite
      .query<SubUserRow, [string, string]>('SELECT * FROM users WHERE id = ? AND parent_user_id = ?')
      .get(id, owner.accountId);
    if (!row) throw notFound(Messages.subUserNotFound);
    return toView(row);
  }
}

/** Stores permissions in catalog order without duplicates. */
function orderPermissions(permissions: readonly Permission[]): Permission[] {
  const wanted = new Set(permissions);
  return PERMISSION_CATALOG.map((p) => p.key).filter((k) => wanted.has(k));
}
