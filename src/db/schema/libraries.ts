import { index, integer, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { groups } from './groups.ts';
import { users } from './users.ts';

/**
 * Libraries: host folders shown in an account's tree as they are (not encrypted, not copied). The library's
 * folder item sits at the top of the owner's My files; every file and folder under it is an item of the
 * owner's account with a `library_entries` row saying where it came from.
 */
export const libraries = sqliteTable(
  'libraries',
  {
    id: text('id').primaryKey(),
    name: text('name').notNull(),
    // Absolute and resolved (no symlink in it), so "inside another library" is a prefix test.
    path: text('path').notNull(),
    accountId: text('account_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    folderId: text('folder_id').notNull(),
    readOnly: integer('read_only', { mode: 'boolean' }).notNull().default(false),
    // The group whose members reach it (as viewers when read-only, else editors); null: its owner alone.
    groupId: text('group_id').references(() => groups.id, { onDelete: 'set null' }),
    createdBy: text('created_by'),
    createdAt: integer('created_at').notNull(),
    // The last scan: when it ended, how many entries it saw, and why it failed (null when it did not).
    scannedAt: integer('scanned_at'),
    scanEntries: integer('scan_entries').notNull().default(0),
    scanError: text('scan_error'),
    // False while the folder is gone (unmounted, removed): its items stay, shown unavailable.
    available: integer('available', { mode: 'boolean' }).notNull().default(true),
    // The data key (wrapped by the master key) its files' thumbnails are sealed under in Coffer's store; null until the first.
    wrappedKey: text('wrapped_key'),
    keyId: text('key_id'),
  },
  (t) => [uniqueIndex('libraries_path_idx').on(t.path), uniqueIndex('libraries_folder_idx').on(t.folderId)],
);

/** Where a library item comes from: its library, the host file's identity (a rename keeps it), and whether it can be read. */
export const libraryEntries = sqliteTable(
  'library_entries',
  {
    itemId: text('item_id').primaryKey(),
    libraryId: text('library_id')
      .notNull()
      .references(() => libraries.id, { onDelete: 'cascade' }),
    // `<dev>:<ino>` of the host file: the same value under another name is the same item moved.
    fileId: text('file_id').notNull(),
    // The host file's modification time in ms when last indexed: a different one means its content changed.
    hostModifiedAt: integer('host_modified_at').notNull(),
    // Unreadable by the service user, or a symlink leaving the library: listed, never opened.
    unavailable: integer('unavailable', { mode: 'boolean' }).notNull().default(false),
    // Names the file's current content (new when its size, time or inode changes): what its thumbnail and text were made of.
    contentKey: text('content_key'),
  },
  (t) => [index('library_entries_library_idx').on(t.libraryId, t.fileId), index('library_entries_content_idx').on(t.contentKey)],
);
