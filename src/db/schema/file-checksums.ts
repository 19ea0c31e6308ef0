import { sqliteTable, text } from 'drizzle-orm/sqlite-core';
import { items } from './items.ts';

/**
 * A file's SHA1 where a client sent it (OC-Checksum) and the bytes matched: it holds while the file's
 * content is the one stored under `storageKey` (a new content has a new key), and goes when the file is purged.
 */
export const fileChecksums = sqliteTable('file_checksums', {
  itemId: text('item_id')
    .primaryKey()
    .references(() => items.id, { onDelete: 'cascade' }),
  storageKey: text('storage_key').notNull(),
  sha1: text('sha1').notNull(),
});
