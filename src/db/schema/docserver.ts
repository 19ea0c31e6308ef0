import { sql } from 'drizzle-orm';
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { items } from './items.ts';

/**
 * Document keys handed to the document server: one per editing session of a file's content. While a
 * key is open, everyone who opens that content gets it (and so joins one session); a force-save moves
 * the key to the content it saved, and closing the session (callback status 2 or 4) retires it, so
 * changed content always gets a new key. The callback finds the file and account only through this row.
 */
export const documentKeys = sqliteTable(
  'document_keys',
  {
    key: text('key').primaryKey(),
    itemId: text('item_id')
      .notNull()
      .references(() => items.id, { onDelete: 'cascade' }),
    accountId: text('account_id').notNull(),
    // The stored object whose content this key stands for.
    storageKey: text('storage_key').notNull(),
    // Who the document server last named as editing (callback status 1 naming anyone), a JSON array of login ids.
    editors: text('editors'),
    closedAt: integer('closed_at'),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  (t) => [
    uniqueIndex('document_keys_open_idx').on(t.itemId, t.storageKey).where(sql`closed_at IS NULL`),
    index('document_keys_item_idx').on(t.itemId),
    index('document_keys_updated_idx').on(t.updatedAt),
  ],
);

/** Edited versions already saved, by key and download URL: a callback repeated by the document server saves once. */
export const documentSaves = sqliteTable(
  'document_saves',
  {
    key: text('key')
      .notNull()
      .references(() => documentKeys.key, { onDelete: 'cascade' }),
    url: text('url').notNull(),
    savedAt: integer('saved_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.key, t.url] })],
);
