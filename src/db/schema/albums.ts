import { index, integer, primaryKey, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import { items } from './items.ts';
import { users } from './users.ts';

/** An account's named set of its files (photos, videos): references only, never copies of the bytes. */
export const albums = sqliteTable(
  'albums',
  {
    id: text('id').primaryKey(),
    accountId: text('account_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    // NULL: the newest photo in it stands for the album.
    coverItemId: text('cover_item_id').references(() => items.id, { onDelete: 'set null' }),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  // The cover's index: purging a file looks here for albums whose cover it was.
  (t) => [index('albums_account_idx').on(t.accountId, t.createdAt, t.id), index('albums_cover_idx').on(t.coverItemId)],
);

/** A file in an album; the row goes when the file is purged. */
export const albumItems = sqliteTable(
  'album_items',
  {
    albumId: text('album_id')
      .notNull()
      .references(() => albums.id, { onDelete: 'cascade' }),
    itemId: text('item_id')
      .notNull()
      .references(() => items.id, { onDelete: 'cascade' }),
    addedAt: integer('added_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.albumId, t.itemId] }), index('album_items_item_idx').on(t.itemId)],
);

/** An account an album is shared with: a viewer sees it, an editor also adds and removes its files. */
export const albumMembers = sqliteTable(
  'album_members',
  {
    albumId: text('album_id')
      .notNull()
      .references(() => albums.id, { onDelete: 'cascade' }),
    accountId: text('account_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    role: text('role', { enum: ['viewer', 'editor'] }).notNull(),
    addedBy: text('added_by').notNull(),
    addedAt: integer('added_at').notNull(),
  },
  // By account: the albums shared with it, newest first.
  (t) => [primaryKey({ columns: [t.albumId, t.accountId] }), index('album_members_account_idx').on(t.accountId, t.addedAt)],
);
