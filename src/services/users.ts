import type { Database } from 'bun:sqlite';
import type { CoreContext } from '../context.ts';
import { badRequest, Messages, notFound } from '../errors.ts';
import { decodeCursor, encodeCursor } from '../lib/cursor.ts';
import { actorFields, AuditActions, type Actor, type AuditService } from './audit.ts';
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

interface UserRow {
  id: string;
  email: string;
  name: string;
  created_at: number;
  mfa_enabled: number;
  storage_used: number;
  storage_limit: number | null;
  parent_user_id: string | null;
  permissions: string | null;
}

/** The admin's view of every account, and per-account storage limits. */
export class UsersService {
  private readonly sqlite: Database;

  constructor(
    private readonly ctx: CoreContext,
    private readonly quota: QuotaService,
    private readonly audit: AuditService,
  ) {
    this.sqlite = ctx.db.$client;
  }

  countLogins(): number {
    return this.sqlite.query<{ n: number }, []>('SELECT COUNT(*) AS n FROM users').get()!.n;
  }

  /** Owners in creation order, `limit` per page, each followed by all of its sub-users. */
  list(input: { limit: number; cursor?: string }): { users: UserListEntry[]; nextCursor: string | null } {
    const after = input.cursor ? decodeCursor(input.cursor, ['number', 'string']) : null;
    const owners = this.sqlite
      .query<UserRow, [number, number, string, number]>(
        `SELECT * FROM users WHERE parent_user_id IS NULL AND (?1 = 0 OR (created_at, id) > (?2, ?3))
         ORDER BY created_at, id LIMIT ?4`,
      )
      .all(after ? 1 : 0, (after?.[0] as number) ?? 0, (after?.[1] as string) ?? '', input.limit + 1);
    const page = owners.slice(0, input.limit);
    const subs = this.sqlite.query<UserRow, [string]>('SELECT * FROM users WHERE parent_user_id = ? ORDER BY created_at, id');
    const users: UserListEntry[] = [];
    for (const owner of page) {
      const usage = this.quota.usage(owner.id);
      const entry = (r: UserRow): UserListEntry => ({
        id: r.id,
        email: r.email,
        name: r.name,
        createdAt: new Date(r.created_at).toISOString(),
        mfaEnabled: Boolean(r.mfa_enabled),
        storageUsed: usage.used,
        storageLimit: owner.storage_limit,
        storageTotal: usage.total,
        parentUserId: r.parent_user_id,
        permissions: r.parent_user_id ? (JSON.parse(r.permissions ?? '[]') as string[]) : null,
      });
      users.push(entry(owner), ...subs.all(owner.id).map(entry));
    }
    const last = page.at(-1);
    return { users, nextCursor: owners.length > input.limit && last ? encodeCursor([last.created_at, last.id]) : null };
  }

  /** Sets an owner's limit in bytes; null returns it to the instance default. Sub-users share their owner's. */
  setStorageLimit(targetUserId: string, storageLimit: number | null, by?: Actor): { storageLimit: number | null } {
    const row = this.sqlite
      .query<{ parent_user_id: string | null }, [string]>('SELECT parent_user_id FROM users WHERE id = ?')
      .get(targetUserId);
    if (!row) throw notFound(Messages.userNotFound);
    if (row.parent_user_id) throw badRequest(Messages.subUserSharesLimit);
    this.sqlite
      .query('UPDATE users SET storage_limit = ?, updated_at = ? WHERE id = ?')
      .run(storageLimit, this.ctx.clock.now(), targetUserId);
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
