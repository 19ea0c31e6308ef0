import { integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';

/**
 * Objects being written whose row is not committed yet: one row per storage key, inserted before the
 * object is written and deleted in the transaction that commits the item row (or once the object is
 * discarded). A row left by a crash names an object no item will ever point at.
 */
export const uploadIntents = sqliteTable('upload_intents', {
  storageKey: text('storage_key').primaryKey(),
  createdAt: integer('created_at').notNull(),
});
