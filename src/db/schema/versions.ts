import { index, integer, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { items } from './items.ts';
import { users } from './users.ts';

/**
 * Earlier contents of a file: when an overwrite replaces a file's object, the old sealed object is kept
 * under its key and described here (the item keeps its id). `modified_at` is when that content was
 * written, `created_at` when it stopped being current; `source` and `author_id` say how and by which
 * login it was written. Rows go with their item (purge) and account (deletion); their objects are
 * deleted by whoever removes the row.
 */
export const fileVersions = sqliteTable(
  'file_versions',
  {
    seq: integer('seq').primaryKey({ autoIncrement: true }),
    id: text('id').notNull(),
    itemId: text('item_id')
      .notNull()
      .references(() => items.id, { onDelete: 'cascade' }),
    accountId: text('account_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    size: integer('size').notNull(),
    mimeType: text('mime_type'),
    storageKey: text('storage_key').notNull(),
    wrappedKey: text('wrapped_key').notNull(),
    keyId: text('key_id').notNull(),
    source: text('source', { enum: ['upload', 'replace', 'webdav', 'docserver', 'restore'] }).notNull(),
    authorId: text('author_id'),
    modifiedAt: integer('modified_at').notNull(),
    createdAt: integer('created_at').notNull(),
  },
  (t) => [
    uniqueIndex('file_versions_id_idx').on(t.id),
    uniqueIndex('file_versions_storage_key_idx').on(t.storageKey),
    index('file_versions_item_idx').on(t.itemId, t.createdAt),
    index('file_versions_account_idx').on(t.accountId, t.createdAt),
    index('file_versions_key_id_idx').on(t.keyId),
  ],
);
