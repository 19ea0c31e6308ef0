import { index, integer, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { users } from './users.ts';

/** WebAuthn credentials (passkeys), one login's each: sub-users have their own. Times are epoch milliseconds. */
export const passkeys = sqliteTable(
  'passkeys',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    // The authenticator's credential id, base64url: what a sign-in assertion names.
    credentialId: text('credential_id').notNull(),
    // COSE public key, base64url.
    publicKey: text('public_key').notNull(),
    // The authenticator's signature counter: an assertion whose counter does not grow is a replay or a clone.
    counter: integer('counter').notNull().default(0),
    // JSON array of transports (internal, usb, hybrid...), handed back to the browser as hints.
    transports: text('transports').notNull().default('[]'),
    name: text('name').notNull(),
    backedUp: integer('backed_up', { mode: 'boolean' }).notNull().default(false),
    createdAt: integer('created_at').notNull(),
    lastUsedAt: integer('last_used_at'),
  },
  (t) => [uniqueIndex('passkeys_credential_id_idx').on(t.credentialId), index('passkeys_user_id_idx').on(t.userId, t.createdAt)],
);
