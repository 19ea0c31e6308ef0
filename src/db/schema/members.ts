import { index, integer, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { items } from './items.ts';
import { users } from './users.ts';

/** Another owner account given access to an item (and everything below it) of this account. */
export const itemMembers = sqliteTable(
  'item_members',
  {
    itemId: text('item_id')
      .notNull()
      .references(() => items.id, { onDelete: 'cascade' }),
    // The sharing owner's account (the item's account), kept here so its shares are read without a join.
    ownerId: text('owner_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    // The member: an owner account; its sub-users act through it.
    accountId: text('account_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    role: text('role', { enum: ['viewer', 'editor'] }).notNull(),
    addedBy: text('added_by'),
    addedAt: integer('added_at').notNull(),
  },
  (t) => [
    uniqueIndex('item_members_item_account_idx').on(t.itemId, t.accountId),
    index('item_members_account_idx').on(t.accountId, t.addedAt, t.itemId),
    index('item_members_owner_idx').on(t.ownerId),
  ],
);

/** Something that happened to an account: shared with it, removed, role changed, files dropped. */
export const notifications = sqliteTable(
  'notifications',
  {
    id: text('id').primaryKey(),
    accountId: text('account_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    type: text('type').notNull(),
    text: text('text').notNull(),
    itemId: text('item_id'),
    createdAt: integer('created_at').notNull(),
    readAt: integer('read_at'),
  },
  (t) => [index('notifications_account_idx').on(t.accountId, t.createdAt, t.id)],
);

/**
 * One row whose number takes a new random value, by triggers in the writing transaction, on every write that can change who
 * reaches which item (shares, groups, their members, team folders, an item's place or account, an
 * owner's account state): Tree's access cache lives until it moves, so other writes keep it.
 */
export const accessGeneration = sqliteTable('access_generation', {
  id: integer('id').primaryKey(),
  generation: integer('generation').notNull(),
});
