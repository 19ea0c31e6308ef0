import { index, integer, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { users } from './users.ts';

/**
 * Accounts the admin invited: a one-time link whose token only the invitee holds (the row keeps its
 * SHA-256). Accepting it creates the login; the row stays, marked used, as the record of who invited whom.
 */
export const invitations = sqliteTable(
  'invitations',
  {
    id: text('id').primaryKey(),
    tokenHash: text('token_hash').notNull(),
    email: text('email').notNull(),
    emailKey: text('email_key').notNull(),
    name: text('name').notNull().default(''),
    // Bytes; NULL: the instance default.
    storageLimit: integer('storage_limit'),
    createdBy: text('created_by').references(() => users.id, { onDelete: 'set null' }),
    createdAt: integer('created_at').notNull(),
    expiresAt: integer('expires_at').notNull(),
    usedAt: integer('used_at'),
    // The login the invitation created.
    userId: text('user_id').references(() => users.id, { onDelete: 'set null' }),
  },
  (t) => [uniqueIndex('invitations_token_hash_idx').on(t.tokenHash), index('invitations_email_key_idx').on(t.emailKey)],
);
