import { index, integer, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { items } from './items.ts';
import { users } from './users.ts';

/** A public link: one per shared root item; the token is at least 128 random bits. */
export const shareLinks = sqliteTable(
  'share_links',
  {
    id: text('id').primaryKey(),
    token: text('token').notNull(),
    accountId: text('account_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    itemId: text('item_id')
      .notNull()
      .references(() => items.id, { onDelete: 'cascade' }),
    createdBy: text('created_by'),
    createdAt: integer('created_at').notNull(),
    // NULL: never expires.
    expiresAt: integer('expires_at'),
    // argon2id (Bun.password); NULL: no password. Unlock cookies are signed over it, so a change ends them.
    passwordHash: text('password_hash'),
    // view | upload | view_upload (the last two for folders only).
    mode: text('mode', { enum: ['view', 'upload', 'view_upload'] })
      .notNull()
      .default('view'),
    // NULL: no cap on downloads.
    maxDownloads: integer('max_downloads'),
    downloads: integer('downloads').notNull().default(0),
    lastUsedAt: integer('last_used_at'),
  },
  (t) => [
    uniqueIndex('share_links_token_idx').on(t.token),
    uniqueIndex('share_links_item_id_idx').on(t.itemId),
    index('share_links_account_id_idx').on(t.accountId, t.createdAt),
  ],
);

/** Which items a link exposes by name (its root, and items added with link-parent-share), and since when. */
export const shareItems = sqliteTable(
  'share_items',
  {
    linkId: text('link_id')
      .notNull()
      .references(() => shareLinks.id, { onDelete: 'cascade' }),
    itemId: text('item_id')
      .notNull()
      .references(() => items.id, { onDelete: 'cascade' }),
    sharedAt: integer('shared_at').notNull(),
  },
  (t) => [uniqueIndex('share_items_link_item_idx').on(t.linkId, t.itemId), index('share_items_item_id_idx').on(t.itemId)],
);

/** Files dropped into a folder through an upload link: who (the name they gave) and in which visit. */
export const shareDrops = sqliteTable(
  'share_drops',
  {
    itemId: text('item_id')
      .primaryKey()
      .references(() => items.id, { onDelete: 'cascade' }),
    // No foreign key: who dropped a file stays known after its link is removed.
    linkId: text('link_id').notNull(),
    // The visit's random id (a cookie scoped to the link): an upload-only page lists this visit's files only.
    visitId: text('visit_id').notNull(),
    uploader: text('uploader'),
    ip: text('ip'),
    createdAt: integer('created_at').notNull(),
  },
  (t) => [index('share_drops_link_visit_idx').on(t.linkId, t.visitId, t.createdAt)],
);
