import { integer, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { users } from './users.ts';

/**
 * Identities at an OpenID Connect provider linked to a login: issuer + subject signs that login in.
 * A login has at most one identity per issuer, so a second provider account can never be added to it by email.
 */
export const idpIdentities = sqliteTable(
  'idp_identities',
  {
    issuer: text('issuer').notNull(),
    subject: text('subject').notNull(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    createdAt: integer('created_at').notNull(),
    lastSignInAt: integer('last_sign_in_at').notNull(),
  },
  (t) => [
    uniqueIndex('idp_identities_issuer_subject_idx').on(t.issuer, t.subject),
    uniqueIndex('idp_identities_user_id_issuer_idx').on(t.userId, t.issuer),
  ],
);
