import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';
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

/** An album's public link (one per album): a gallery of its photos for anyone with the token, as a folder's link. */
export const albumLinks = sqliteTable(
  'album_links',
  {
    albumId: text('album_id')
      .primaryKey()
      .references(() => albums.id, { onDelete: 'cascade' }),
    // At least 128 random bits, as a file link's.
    token: text('token').notNull(),
    createdBy: text('created_by').notNull(),
    createdAt: integer('created_at').notNull(),
    // NULL: never expires.
    expiresAt: integer('expires_at'),
    // argon2id (Bun.password); NULL: no password. Unlock cookies are signed over it, so a change ends them.
    passwordHash: text('password_hash'),
    // NULL: no cap on downloads.
    maxDownloads: integer('max_downloads'),
    downloads: integer('downloads').notNull().default(0),
    lastUsedAt: integer('last_used_at'),
  },
  (t) => [uniqueIndex('album_links_token_idx').on(t.token)],
);
