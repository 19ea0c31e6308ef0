import { sql } from 'drizzle-orm';
import { index, integer, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { users } from './users.ts';

/**
 * The file tree: files and folders of an account (owner id). Trashed items keep their place and get
 * `deleted_at`; `deleted_root_id` is the item the user trashed (for the item itself or a descendant
 * trashed with it), so restoring or purging a trash entry acts on exactly what was trashed with it.
 */
export const items = sqliteTable(
  'items',
  {
    // An explicit integer key keeps rowids stable through VACUUM (INTO), which the search index relies on.
    seq: integer('seq').primaryKey({ autoIncrement: true }),
    id: text('id').notNull(),
    accountId: text('account_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    parentId: text('parent_id'),
    // The root as '' rather than NULL, so the unique name index also covers the root folder.
    parentKey: text('parent_key').generatedAlwaysAs(sql`coalesce(parent_id, '')`, { mode: 'virtual' }),
    type: text('type', { enum: ['file', 'folder'] }).notNull(),
    name: text('name').notNull(),
    // Lower-cased name: collisions and name ordering are case-insensitive.
    nameKey: text('name_key').notNull(),
    // Plaintext bytes; 0 for folders (reported as null).
    size: integer('size').notNull().default(0),
    mimeType: text('mime_type'),
    // Files: the sealed object, its wrapped data key and the id of the master key that wrapped it.
    storageKey: text('storage_key'),
    wrappedKey: text('wrapped_key'),
    keyId: text('key_id'),
    // How the current content was written and by which login (a version keeps both when it is replaced).
    contentSource: text('content_source', { enum: ['upload', 'replace', 'webdav', 'docserver', 'restore'] }),
    contentAuthorId: text('content_author_id'),
    starred: integer('starred', { mode: 'boolean' }).notNull().default(false),
    modifiedAt: integer('modified_at').notNull(),
    accessedAt: integer('accessed_at').notNull(),
    createdAt: integer('created_at').notNull(),
    deletedAt: integer('deleted_at'),
    deletedRootId: text('deleted_root_id'),
    // Photos: when the current content was taken (EXIF DateTimeOriginal), copied from its thumbnail record by triggers.
    takenAt: integer('taken_at'),
    // Folders: counts the changes below it (sync clients compare a folder's ETag, made of it, to skip unchanged subtrees).
    treeVersion: integer('tree_version').notNull().default(0),
    // Folders: the bytes of the live files below it, at any depth (a trashed folder keeps what was trashed with it).
    treeSize: integer('tree_size').notNull().default(0),
  },
  (t) => [
    uniqueIndex('items_id_idx').on(t.id),
    uniqueIndex('items_storage_key_idx').on(t.storageKey),
    // Display names are unique among the live items of a folder (root: parent '').
    uniqueIndex('items_live_name_idx').on(t.accountId, t.parentKey, t.nameKey).where(sql`deleted_at IS NULL`),
    // Folder pages, one index per sort field, so any page costs the same as the first.
    index('items_live_parent_name_idx').on(t.accountId, t.parentId, t.type, t.nameKey, t.id).where(sql`deleted_at IS NULL`),
    index('items_live_parent_modified_idx').on(t.accountId, t.parentId, t.type, t.modifiedAt, t.id).where(sql`deleted_at IS NULL`),
    index('items_live_parent_size_idx').on(t.accountId, t.parentId, t.type, t.size, t.id).where(sql`deleted_at IS NULL`),
    index('items_live_parent_accessed_idx').on(t.accountId, t.parentId, t.type, t.accessedAt, t.id).where(sql`deleted_at IS NULL`),
    // Any parent, live or not: subtree walks for trash, restore, copy and folder info (every walk names a parent, so root items stay out).
    index('items_parent_id_idx').on(t.parentId).where(sql`parent_id IS NOT NULL`),
    index('items_account_type_idx').on(t.accountId, t.type).where(sql`deleted_at IS NULL`),
    index('items_starred_idx').on(t.accountId, t.type, t.modifiedAt, t.id).where(sql`starred = 1 AND deleted_at IS NULL`),
    // The Photos view's keyset: newest taken (else modified) first.
    index('items_photos_idx').on(t.accountId, sql`coalesce(taken_at, modified_at)`, t.id).where(sql`type = 'file' AND deleted_at IS NULL`),
    // The thumbnail sweep's sources by type, in upload order: its query reads image and video rows only, not every row.
    index('items_thumbnail_sources_idx').on(t.mimeType, t.seq).where(sql`type = 'file' AND deleted_at IS NULL AND storage_key IS NOT NULL`),
    index('items_recent_idx').on(t.accountId, t.accessedAt, t.id).where(sql`type = 'file' AND deleted_at IS NULL`),
    // Account-wide exact and prefix name lookups (search ranks those first).
    index('items_live_name_key_idx').on(t.accountId, t.nameKey).where(sql`deleted_at IS NULL`),
    // Trashed items only: a live insert (the upload's) skips it.
    index('items_deleted_root_idx').on(t.deletedRootId).where(sql`deleted_root_id IS NOT NULL`),
    // Trash pages list the roots of what was trashed, folders first.
    index('items_trash_idx').on(t.accountId, t.type, t.deletedAt, t.id).where(sql`deleted_at IS NOT NULL AND deleted_root_id = id`),
  ],
);
