import { integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';

/**
 * Objects being written whose row is not committed yet: one row per storage key, inserted before the
 * object is written and deleted in the transaction that commits the item row (or once the object is
 * discarded). A row left by a crash names an object no item will ever point at. WITHOUT ROWID (migration
 * 0038, hand-written): one b-tree, so each of an upload's two commits writes one page of it, not two.
 */
export const uploadIntents = sqliteTable('upload_intents', {
  storageKey: text('storage_key').primaryKey(),
  createdAt: integer('created_at').notNull(),
});
