import type { Statement } from 'bun:sqlite';
import { and, asc, eq, getTableColumns, sql } from 'drizzle-orm';
import type { UserSort } from '../../contract/admin.ts';
import type { Db } from '../client.ts';
import { users } from '../schema/users.ts';
import { selectList, toBoolean, changesOf } from '../select.ts';

// lower() as SQLite computes it folds ASCII only, as does sortValue's toLowerCase for the names people type here.
const SORT_KEYS: Record<UserSort, { expr: string; desc: boolean }> = {
  created: { expr: 'created_at', desc: false },
  name: { expr: 'lower(name)', desc: false },
  email: { expr: 'email_key', desc: false },
  storage: { expr: 'storage_used', desc: true },
};

/** A login (owner or sub-user) as the schema describes it. */
export type User = typeof users.$inferSelect;
/** What every request reads of its login: one primary-key lookup. */
export type AuthUser = Pick<User, 'id' | 'email' | 'name' | 'isAdmin' | 'parentUserId' | 'permissions' | 'tokenVersion' | 'disabledAt'>;
export type NewUser = Pick<
  User,
  'id' | 'email' | 'emailKey' | 'name' | 'passwordHash' | 'isAdmin' | 'parentUserId' | 'permissions' | 'createdAt'
> &
  Partial<Pick<User, 'emailTrusted'>>;

/** What the profile shows of a login, and how it signs in. */
export type ProfileUser = Pick<User, 'id' | 'email' | 'name' | 'createdAt' | 'mfaEnabled'> & {
  hasPassword: boolean;
  idpLinked: boolean;
  hasPasskey: boolean;
};

const PROFILE = selectList(users, ['id', 'email', 'name', 'createdAt', 'mfaEnabled']);
const STORAGE = selectList(users, ['storageUsed', 'storageLimit', 'disabledAt']);
const AUTH = selectList(users, ['id', 'email', 'name', 'isAdmin', 'parentUserId', 'permissions', 'tokenVersion', 'disabledAt']);
const PROFILE_SQL = `SELECT ${PROFILE},
    coalesce(password_hash, '') <> '' AS hasPassword,
    EXISTS (SELECT 1 FROM idp_identities WHERE user_id = users.id) AS idpLinked,
    EXISTS (SELECT 1 FROM passkeys WHERE user_id = users.id) AS hasPasskey
  FROM users WHERE id = ?`;
const USER = selectList(users, Object.keys(getTableColumns(users)) as Array<keyof User>);

function user(row: User | null): User | null {
  if (!row) return null;
  row.isAdmin = toBoolean(row.isAdmin);
  row.mfaEnabled = toBoolean(row.mfaEnabled);
  row.emailTrusted = toBoolean(row.emailTrusted);
  return row;
}

/** The SQL of logins (`users`): accounts, sub-users, token versions, storage counters. */
export class UsersRepo {
  private profileStatement?: Statement<ProfileUser, [string]>;

  constructor(private readonly db: Db) {}

  /** Hot: every profile read and sign-in (a raw statement: drizzle's row mapping costs more than the lookup). */
  byId(id: string): User | null {
    return user(this.db.$client.query<User, [string]>(`SELECT ${USER} FROM users WHERE id = ?`).get(id));
  }

  /** The login with this email; a team folder's account has none anyone can name. */
  byEmailKey(emailKey: string): User | null {
    return user(
      this.db.$client
        .query<User, [string]>(`SELECT ${USER} FROM users WHERE email_key = ? AND id NOT IN (SELECT account_id FROM team_folders)`)
        .get(emailKey),
    );
  }

  /**
   * Usable owner accounts (not `exclude`) whose name, or a word of it, starts with `prefix`, and with
   * `byEmail` also those whose email does; by name.
   */
  suggestions(
    prefix: string,
    opts: { exclude: string; byEmail: boolean; limit: number },
  ): Array<{ id: string; name: string; email: string }> {
    const like = `${prefix.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    const email = opts.byEmail ? "OR email_key LIKE ?2 ESCAPE '\\'" : '';
    return this.db.$client
      .query<{ id: string; name: string; email: string }, [string, string, string, number]>(
        `SELECT id, name, email FROM users
         WHERE parent_user_id IS NULL AND disabled_at IS NULL AND deletion_requested_at IS NULL AND id <> ?1
           AND (lower(name) LIKE ?2 ESCAPE '\\' OR lower(name) LIKE ?3 ESCAPE '\\' ${email})
           AND id NOT IN (SELECT account_id FROM team_folders)
         ORDER BY lower(name), email_key LIMIT ?4`,
      )
      .all(opts.exclude, like, `% ${like}`, opts.limit);
  }

  /** The login with this id; a team folder's account has none anyone can pick. */
  personById(id: string): User | null {
    return user(
      this.db.$client
        .query<User, [string]>(`SELECT ${USER} FROM users WHERE id = ? AND id NOT IN (SELECT account_id FROM team_folders)`)
        .get(id),
    );
  }

  /**
   * Hot: every profile read. One statement: the same three lookups in a read transaction cost more in its
   * BEGIN and COMMIT than in the lookups.
   */
  profile(id: string): ProfileUser | null {
    // Held, not looked up by its text: the runtime's statement cache keeps only the last 20 texts it was given.
    this.profileStatement ??= this.db.$client.prepare<ProfileUser, [string]>(PROFILE_SQL);
    const row = this.profileStatement.get(id);
    if (!row) return null;
    row.mfaEnabled = toBoolean(row.mfaEnabled);
    row.hasPassword = toBoolean(row.hasPassword);
    row.idpLinked = toBoolean(row.idpLinked);
    row.hasPasskey = toBoolean(row.hasPasskey);
    return row;
  }

  /** Hot: every authenticated request. */
  authUser(id: string): AuthUser | null {
    const row = this.db.$client.query<AuthUser, [string]>(`SELECT ${AUTH} FROM users WHERE id = ?`).get(id);
    if (row) row.isAdmin = toBoolean(row.isAdmin);
    return row;
  }

  /** Logins, team folders' accounts left out. */
  count(): number {
    return this.db.$client
      .query<{ n: number }, []>('SELECT COUNT(*) AS n FROM users WHERE id NOT IN (SELECT account_id FROM team_folders)')
      .get()!.n;
  }

  hasAny(): boolean {
    return this.db.$client.query('SELECT 1 FROM users LIMIT 1').get() !== null;
  }

  hasAdmin(): boolean {
    return this.db.select({ id: users.id }).from(users).where(eq(users.isAdmin, true)).limit(1).get() !== undefined;
  }

  insert(row: NewUser): User {
    return this.db
      .insert(users)
      .values({ ...row, updatedAt: row.createdAt })
      .returning()
      .get();
  }

  setPasswordHash(id: string, hash: string, at: number): void {
    this.db.update(users).set({ passwordHash: hash, updatedAt: at }).where(eq(users.id, id)).run();
  }

  tokenVersion(id: string): number | null {
    return this.byId(id)?.tokenVersion ?? null;
  }

  bumpTokenVersion(id: string, at: number): void {
    this.db
      .update(users)
      .set({ tokenVersion: sql`${users.tokenVersion} + 1`, updatedAt: at })
      .where(eq(users.id, id))
      .run();
  }

  nameAndEmail(id: string): Pick<User, 'name' | 'email'> | null {
    const row = this.byId(id);
    return row ? { name: row.name, email: row.email } : null;
  }

  // ---- storage counters (owners) ----

  /** The usage row, with whether the account is disabled (or being deleted): a write into it is refused. */
  storage(accountId: string): Pick<User, 'storageUsed' | 'storageLimit' | 'disabledAt'> | null {
    return (
      this.db.$client
        .query<Pick<User, 'storageUsed' | 'storageLimit' | 'disabledAt'>, [string]>(`SELECT ${STORAGE} FROM users WHERE id = ?`)
        .get(accountId) ?? null
    );
  }

  /** Adds (or with a negative delta, removes) bytes; inside the transaction that changes the items. */
  adjustStorageUsed(accountId: string, delta: number): void {
    this.db.$client.query('UPDATE users SET storage_used = MAX(0, storage_used + ?) WHERE id = ?').run(delta, accountId);
  }

  /** Owners only: whether the account keeps its documents out of content search. */
  contentSearchOptOut(accountId: string): boolean {
    return this.db.select({ v: users.contentSearchOptOut }).from(users).where(eq(users.id, accountId)).get()?.v ?? false;
  }

  setContentSearchOptOut(accountId: string, optOut: boolean, at: number): void {
    this.db.update(users).set({ contentSearchOptOut: optOut, updatedAt: at }).where(eq(users.id, accountId)).run();
  }

  setName(id: string, name: string, at: number): void {
    this.db.update(users).set({ name, updatedAt: at }).where(eq(users.id, id)).run();
  }

  setStorageLimit(accountId: string, limit: number | null, at: number): void {
    this.db.update(users).set({ storageLimit: limit, updatedAt: at }).where(eq(users.id, accountId)).run();
  }

  /** Owners whose usage counter differs from the sum of their files and versions, with both figures. */
  usageCheck(): Array<{ id: string; email: string; storageUsed: number; actual: number }> {
    return this.db.$client
      .query<{ id: string; email: string; storageUsed: number; actual: number }, []>(
        `SELECT u.id, u.email, u.storage_used AS storageUsed,
                (SELECT COALESCE(SUM(i.size), 0) FROM items i WHERE i.account_id = u.id AND i.type = 'file'
                   AND NOT EXISTS (SELECT 1 FROM library_entries le WHERE le.item_id = i.id))
                  + (SELECT COALESCE(SUM(v.size), 0) FROM file_versions v WHERE v.account_id = u.id) AS actual
         FROM users u WHERE u.parent_user_id IS NULL ORDER BY u.created_at, u.id`,
      )
      .all();
  }

  /** Recomputed inside the UPDATE, so an upload committing meanwhile is counted, not overwritten. */
  repairUsage(accountId: string): boolean {
    return (
      this.db.$client
        .query(
          `UPDATE users SET storage_used = (SELECT COALESCE(SUM(size), 0) FROM items
                WHERE account_id = ?1 AND type = 'file' AND NOT EXISTS (SELECT 1 FROM library_entries le WHERE le.item_id = items.id))
              + (SELECT COALESCE(SUM(size), 0) FROM file_versions WHERE account_id = ?1)
            WHERE id = ?1`,
        )
        .run(accountId).changes > 0
    );
  }

  // ---- owners and sub-users ----

  /**
   * Owners in `sort` order (storage largest first, the rest ascending; id breaks ties), after the keyset
   * position `after` ([sort value, id]); with `q`, only owners whose email or name, or a sub-user's, contains it;
   * team folders' accounts only with `teams`.
   */
  ownersPage(opts: { sort: UserSort; q?: string; after: [string | number, string] | null; teams?: boolean }, limit: number): User[] {
    const key = SORT_KEYS[opts.sort];
    const where = ['parent_user_id IS NULL'];
    if (!opts.teams) where.push('id NOT IN (SELECT account_id FROM team_folders)');
    const args: Array<string | number> = [];
    if (opts.q) {
      const like = `%${opts.q.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
      where.push(
        `(email_key LIKE ?1 ESCAPE '\\' OR lower(name) LIKE ?1 ESCAPE '\\' OR EXISTS (SELECT 1 FROM users s WHERE s.parent_user_id = users.id AND (s.email_key LIKE ?1 ESCAPE '\\' OR lower(s.name) LIKE ?1 ESCAPE '\\')))`,
      );
      args.push(like);
    }
    if (opts.after) {
      const n = args.length;
      where.push(`(${key.expr} ${key.desc ? '<' : '>'} ?${n + 1} OR (${key.expr} = ?${n + 1} AND id > ?${n + 2}))`);
      args.push(opts.after[0], opts.after[1]);
    }
    args.push(limit);
    const rows = this.db.$client
      .query<User, Array<string | number>>(
        `SELECT ${USER} FROM users WHERE ${where.join(' AND ')} ORDER BY ${key.expr} ${key.desc ? 'DESC' : 'ASC'}, id ASC LIMIT ?${args.length}`,
      )
      .all(...args);
    return rows.map((r) => user(r)!);
  }

  /** The value a row is sorted by in `ownersPage`, for its cursor. */
  sortValue(row: User, sort: UserSort): string | number {
    if (sort === 'name') return row.name.toLowerCase();
    if (sort === 'email') return row.emailKey;
    if (sort === 'storage') return row.storageUsed;
    return row.createdAt;
  }

  countSubUsers(ownerId: string): number {
    return this.db.$client.query<{ n: number }, [string]>('SELECT COUNT(*) AS n FROM users WHERE parent_user_id = ?').get(ownerId)!.n;
  }

  subUsersOf(ownerId: string): User[] {
    return this.db.select().from(users).where(eq(users.parentUserId, ownerId)).orderBy(asc(users.createdAt), asc(users.id)).all();
  }

  subUser(ownerId: string, id: string): User | null {
    return (
      this.db
        .select()
        .from(users)
        .where(and(eq(users.id, id), eq(users.parentUserId, ownerId)))
        .get() ?? null
    );
  }

  setPermissions(ownerId: string, id: string, permissions: string, at: number): boolean {
    return (
      changesOf(
        this.db
          .update(users)
          .set({ permissions, updatedAt: at })
          .where(and(eq(users.id, id), eq(users.parentUserId, ownerId)))
          .run(),
      ) > 0
    );
  }

  setEmailTrusted(id: string, at: number): void {
    this.db.update(users).set({ emailTrusted: true, updatedAt: at }).where(eq(users.id, id)).run();
  }

  /** Disables (a time) or enables (null) an owner and every sub-user of it together. */
  setAccountDisabled(ownerId: string, at: number | null, now: number): void {
    this.db.$client.query('UPDATE users SET disabled_at = ?1, updated_at = ?2 WHERE id = ?3 OR parent_user_id = ?3').run(at, now, ownerId);
  }

  markForDeletion(ownerId: string, at: number): void {
    this.db.update(users).set({ deletionRequestedAt: at, updatedAt: at }).where(eq(users.id, ownerId)).run();
  }

  /** The owner's id and its sub-users' ids. */
  loginIdsOfAccount(ownerId: string): string[] {
    return this.db.$client
      .query<{ id: string }, [string]>('SELECT id FROM users WHERE id = ?1 OR parent_user_id = ?1')
      .all(ownerId)
      .map((r) => r.id);
  }

  /** Deletes an owner's row; its sub-users, sessions and share links go with it (foreign keys). */
  deleteAccount(ownerId: string): boolean {
    return this.db.$client.query('DELETE FROM users WHERE id = ? AND parent_user_id IS NULL').run(ownerId).changes > 0;
  }

  /** Deletes a sub-user (its sessions go with it); its email, or null when there was none. */
  deleteSubUser(ownerId: string, id: string): string | null {
    return (
      this.db
        .delete(users)
        .where(and(eq(users.id, id), eq(users.parentUserId, ownerId)))
        .returning({ email: users.email })
        .get()?.email ?? null
    );
  }
}
