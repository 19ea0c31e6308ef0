import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { items } from './items.ts';
import { users } from './users.ts';

/**
 * Groups of owner accounts, made by the admin or by the identity provider (`source = 'idp'`: its
 * memberships follow the sign-on claim). Items are shared with a group as with a person.
 */
export const groups = sqliteTable(
  'groups',
  {
    id: text('id').primaryKey(),
    name: text('name').notNull(),
    // Lower-cased name: names are unique whatever their case.
    nameKey: text('name_key').notNull(),
    description: text('description').notNull().default(''),
    source: text('source', { enum: ['admin', 'idp'] })
      .notNull()
      .default('admin'),
    // Bytes of quota the group's administrators may give team folders they make for it; null: they make none.
    teamFolderBytes: integer('team_folder_bytes'),
    createdAt: integer('created_at').notNull(),
  },
  (t) => [uniqueIndex('groups_name_key_idx').on(t.nameKey)],
);

/** An owner account in a group; a group administrator may add and remove the group's members. */
export const groupMembers = sqliteTable(
  'group_members',
  {
    groupId: text('group_id')
      .notNull()
      .references(() => groups.id, { onDelete: 'cascade' }),
    accountId: text('account_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    isAdmin: integer('is_admin', { mode: 'boolean' }).notNull().default(false),
    addedAt: integer('added_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.groupId, t.accountId] }), index('group_members_account_idx').on(t.accountId, t.groupId)],
);

/** An item (and everything below it) shared with a group: each member reaches it as a person member would. */
export const itemGroups = sqliteTable(
  'item_groups',
  {
    itemId: text('item_id')
      .notNull()
      .references(() => items.id, { onDelete: 'cascade' }),
    // The sharing owner's account (the item's account).
    ownerId: text('owner_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    groupId: text('group_id')
      .notNull()
      .references(() => groups.id, { onDelete: 'cascade' }),
    role: text('role', { enum: ['viewer', 'editor'] }).notNull(),
    addedBy: text('added_by'),
    addedAt: integer('added_at').notNull(),
  },
  (t) => [
    uniqueIndex('item_groups_item_group_idx').on(t.itemId, t.groupId),
    // Covers the shares of an account's groups in time order (shared-with-me reads no table rows for them).
    index('item_groups_group_idx').on(t.groupId, t.addedAt, t.itemId, t.ownerId),
    index('item_groups_owner_idx').on(t.ownerId),
  ],
);

/**
 * Team folders: a folder that belongs to no person. Each has an account of its own (a users row nobody
 * signs in to, its email not an address) that holds the folder's tree, trash, versions and usage against
 * its own limit; groups reach the folder as they reach anything shared with them.
 */
export const teamFolders = sqliteTable('team_folders', {
  accountId: text('account_id')
    .primaryKey()
    .references(() => users.id, { onDelete: 'cascade' }),
  folderId: text('folder_id').notNull(),
  // The group whose administrators made it, out of that group's allowance; null: the admin made it.
  groupId: text('group_id').references(() => groups.id, { onDelete: 'set null' }),
  createdBy: text('created_by'),
  createdAt: integer('created_at').notNull(),
});
