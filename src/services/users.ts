import type { Clock } from '../clock.ts';
import type { User, UsersRepo } from '../db/repos/users.ts';
import { badRequest, Messages, notFound } from '../errors.ts';
import { decodeCursor, encodeCursor } from '../lib/cursor.ts';
import { actorFields, AuditActions, type Actor, type AuditService } from './audit.ts';
import { parsePermissions } from './principal.ts';
import type { QuotaService } from './quota.ts';

export interface UserListEntry {
  id: string;
  email: string;
  name: string;
  createdAt: string;
  mfaEnabled: boolean;
  storageUsed: number;
  /** The account's own limit; null when it follows the instance default. */
  storageLimit: number | null;
  /** The limit in effect (own, else the instance default); null when unlimited. */
  storageTotal: number | null;
  parentUserId: string | null;
  permissions: string[] | null;
}

/** The admin's view of every account, and per-account storage limits. */
export class UsersService {
  constructor(
    private readonly users: UsersRepo,
    private readonly quota: QuotaService,
    private readonly audit: AuditService,
    private readonly clock: Clock,
  ) {}

  countLogins(): number {
    return this.users.count();
  }

  /** Owners in creation order, `limit` per page, each followed by all of its sub-users. */
  list(input: { limit: number; cursor?: string }): { users: UserListEntry[]; nextCursor: string | null } {
    const after = input.cursor ? decodeCursor(input.cursor, ['number', 'string']) : null;
    if (input.cursor && !after) throw badRequest(Messages.invalidCursor);
    const owners = this.users.ownersPage(after ? { createdAt: after[0] as number, id: after[1] as string } : null, input.limit + 1);
    const page = owners.slice(0, input.limit);
    const users: UserListEntry[] = [];
    for (const owner of page) {
      const usage = this.quota.usage(owner.id);
      const entry = (r: User): UserListEntry => ({
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
      });
      users.push(entry(owner), ...this.users.subUsersOf(owner.id).map(entry));
    }
    const last = page.at(-1);
    return { users, nextCursor: owners.length > input.limit && last ? encodeCursor([last.createdAt, last.id]) : null };
  }

  /** Sets an owner's limit in bytes; null returns it to the instance default. Sub-users share their owner's. */
  setStorageLimit(targetUserId: string, storageLimit: number | null, by?: Actor): { storageLimit: number | null } {
    const row = this.users.byId(targetUserId);
    if (!row) throw notFound(Messages.userNotFound);
    if (row.parentUserId) throw badRequest(Messages.subUserSharesLimit);
    this.users.setStorageLimit(targetUserId, storageLimit, this.clock.now());
    if (by)
      this.audit.record({
        action: AuditActions.userStorageLimit,
        ...actorFields(by),
        targetType: 'user',
        targetId: targetUserId,
        details: { storageLimit },
      });
    return { storageLimit };
  }
}
