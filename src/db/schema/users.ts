import { sql } from 'drizzle-orm';
import { index, integer, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';

/**
 * Logins: owners (parent_user_id NULL) and their sub-users. An account is an owner plus its sub-users;
 * items, quota and usage belong to the owner's row. Times are epoch milliseconds.
 */
export const users = sqliteTable(
  'users',
  {
    id: text('id').primaryKey(),
    email: text('email').notNull(),
    // Lower-cased email: sign-in and uniqueness are case-insensitive, display keeps what was given.
    emailKey: text('email_key').notNull(),
    // The address was chosen by the admin (or the login is the admin's): single sign-on may link a provider account to it by email.
    emailTrusted: integer('email_trusted', { mode: 'boolean' }).notNull().default(false),
    name: text('name').notNull().default(''),
    passwordHash: text('password_hash'),
    isAdmin: integer('is_admin', { mode: 'boolean' }).notNull().default(false),
    parentUserId: text('parent_user_id').references((): any => users.id, { onDelete: 'cascade' }),
    // Sub-users: JSON array of permission keys. Owners: NULL (they hold every permission).
    permissions: text('permissions'),
    // Bumped by password change and logout-all: every token carrying an older version is refused.
    tokenVersion: integer('token_version').notNull().default(1),
    mfaEnabled: integer('mfa_enabled', { mode: 'boolean' }).notNull().default(false),
    // TOTP seeds sealed with the master key; pending until the first code is verified.
    mfaSecret: text('mfa_secret'),
    mfaPendingSecret: text('mfa_pending_secret'),
    // Last TOTP time step accepted: a code is never accepted twice.
    mfaLastStep: integer('mfa_last_step'),
    // When the secret was confirmed: its codes, and the backup codes issued with it, confirm only sessions signed in after.
    mfaEnabledAt: integer('mfa_enabled_at'),
    backupCodesRegeneratedAt: integer('backup_codes_regenerated_at'),
    // Owners only: bytes stored (trash included), kept in the same transaction as the items it counts.
    storageUsed: integer('storage_used').notNull().default(0),
    // Owners only: NULL means the instance default.
    storageLimit: integer('storage_limit'),
    // Set on an owner and its sub-users together: none of them may sign in, and their sessions were revoked.
    disabledAt: integer('disabled_at'),
    // Owners only: the admin deleted the account; a job is removing its files, then the rows.
    deletionRequestedAt: integer('deletion_requested_at'),
    // Owners only: the account opted out of content search; its documents are not indexed.
    contentSearchOptOut: integer('content_search_opt_out', { mode: 'boolean' }).notNull().default(false),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  (t) => [
    uniqueIndex('users_email_key_idx').on(t.emailKey),
    index('users_parent_user_id_idx').on(t.parentUserId, t.createdAt),
    index('users_owner_created_at_idx').on(t.createdAt, t.id).where(sql`parent_user_id IS NULL`),
  ],
);

export const mfaBackupCodes = sqliteTable(
  'mfa_backup_codes',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    codeHash: text('code_hash').notNull(),
    usedAt: integer('used_at'),
  },
  (t) => [uniqueIndex('mfa_backup_codes_user_id_code_hash_idx').on(t.userId, t.codeHash)],
);

/** One row per sign-in; deleting the row revokes the session at once. */
export const sessions = sqliteTable(
  'sessions',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    tokenVersion: integer('token_version').notNull(),
    userAgent: text('user_agent').notNull().default(''),
    ipAddress: text('ip_address').notNull().default(''),
    createdAt: integer('created_at').notNull(),
    lastActivityAt: integer('last_activity_at').notNull(),
  },
  (t) => [index('sessions_user_id_idx').on(t.userId), index('sessions_last_activity_at_idx').on(t.lastActivityAt)],
);

/** Instance settings an admin edits; one row per key, JSON values. Missing rows mean the default. */
export const settings = sqliteTable('settings', {
  key: text('key').primaryKey(),
  value: text('value').notNull(),
  updatedAt: integer('updated_at').notNull(),
});

/**
 * One row whose number takes a new random value, by triggers in the writing transaction, on every write that can
 * change what authenticating a request reads: a login's identity, role, permissions, token version or state,
 * and a session's removal. The sessions' cache of authenticated requests lives until it moves.
 */
export const authGeneration = sqliteTable('auth_generation', {
  id: integer('id').primaryKey(),
  generation: integer('generation').notNull(),
});
