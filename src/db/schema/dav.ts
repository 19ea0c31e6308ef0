import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { items } from './items.ts';
import { users } from './users.ts';

/**
 * Per-device passwords for WebDAV clients: one row per password a login made. Only a SHA-256 of the
 * secret is kept (the secret is 160 random bits, so a slow hash would add nothing but latency to
 * every WebDAV request); deleting the row revokes it at the next request.
 */
export const appPasswords = sqliteTable(
  'app_passwords',
  {
    id: text('id').primaryKey(),
    userId: text('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    secretHash: text('secret_hash').notNull(),
    createdAt: integer('created_at').notNull(),
    lastUsedAt: integer('last_used_at'),
    lastIp: text('last_ip'),
  },
  (t) => [uniqueIndex('app_passwords_secret_hash_idx').on(t.secretHash), index('app_passwords_user_id_idx').on(t.userId, t.createdAt)],
);

/**
 * WebDAV dead properties (PROPPATCH): one row per item, namespace and name; the value is the XML
 * content as the client sent it, namespaces declared inline, and the xml:lang it was sent in. They go with the item when it is purged.
 */
export const davProperties = sqliteTable(
  'dav_properties',
  {
    itemId: text('item_id')
      .notNull()
      .references(() => items.id, { onDelete: 'cascade' }),
    ns: text('ns').notNull(),
    name: text('name').notNull(),
    value: text('value').notNull(),
    // The xml:lang in scope on the property's element when it was set (RFC 4918 §4.3), null for none.
    lang: text('lang'),
  },
  (t) => [primaryKey({ columns: [t.itemId, t.ns, t.name] })],
);

/** The root folder's counterpart of items.tree_version and tree_size: changes anywhere in the account's tree, for the root's ETag and size. */
export const treeVersions = sqliteTable('tree_versions', {
  accountId: text('account_id')
    .primaryKey()
    .references(() => users.id, { onDelete: 'cascade' }),
  version: integer('version').notNull(),
  // The root's counterpart of items.tree_size: the bytes of the account's live files.
  size: integer('size').notNull().default(0),
});
