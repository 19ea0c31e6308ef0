import type { Database } from 'bun:sqlite';
import { groups } from '../schema/groups.ts';
import { selectList, toBoolean } from '../select.ts';
import type { MemberRole } from './members.ts';

export type Group = typeof groups.$inferSelect;
export type GroupSource = Group['source'];

/** A group as lists show it: with how many accounts are in it and how many items are shared with it. */
export type GroupRow = Group & { size: number; items: number };

/** An account in a group. */
export interface GroupMemberRow {
  accountId: string;
  email: string;
  name: string;
  isAdmin: boolean;
  addedAt: number;
}

/** A group an item is shared with, as the item's members list shows it. */
export interface ItemGroupRow {
  groupId: string;
  name: string;
  size: number;
  role: MemberRole;
  addedAt: number;
}

const GROUP = selectList(groups, ['id', 'name', 'nameKey', 'description', 'source', 'teamFolderBytes', 'createdAt'], 'g.');
const COUNTS = `(SELECT COUNT(*) FROM group_members gm WHERE gm.group_id = g.id) AS size,
  (SELECT COUNT(*) FROM item_groups ig WHERE ig.group_id = g.id) AS items`;

/** The SQL of groups: the groups, their members, and the items shared with them. */
export class GroupsRepo {
  constructor(private readonly sqlite: Database) {}

  insert(row: Group): void {
    this.sqlite
      .query('INSERT INTO groups (id, name, name_key, description, source, team_folder_bytes, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)')
      .run(row.id, row.name, row.nameKey, row.description, row.source, row.teamFolderBytes, row.createdAt);
  }

  update(id: string, fields: { name: string; nameKey: string; description: string }): void {
    this.sqlite
      .query('UPDATE groups SET name = ?, name_key = ?, description = ? WHERE id = ?')
      .run(fields.name, fields.nameKey, fields.description, id);
  }

  /** What the group's administrators may give team folders they make for it, in bytes; null: none. */
  setTeamFolderBytes(id: string, bytes: number | null): void {
    this.sqlite.query('UPDATE groups SET team_folder_bytes = ? WHERE id = ?').run(bytes, id);
  }

  delete(id: string): boolean {
    return this.sqlite.query('DELETE FROM groups WHERE id = ?').run(id).changes > 0;
  }

  get(id: string): GroupRow | null {
    return this.sqlite.query<GroupRow, [string]>(`SELECT ${GROUP}, ${COUNTS} FROM groups g WHERE g.id = ?`).get(id);
  }

  byNameKey(nameKey: string): Group | null {
    return this.sqlite.query<Group, [string]>(`SELECT ${GROUP} FROM groups g WHERE g.name_key = ?`).get(nameKey);
  }

  /** Every group, by name. */
  all(): GroupRow[] {
    return this.sqlite.query<GroupRow, []>(`SELECT ${GROUP}, ${COUNTS} FROM groups g ORDER BY g.name_key`).all();
  }

  /** The groups an account is in, by name, with whether it administers each. */
  ofAccount(accountId: string): Array<GroupRow & { isAdmin: boolean }> {
    const rows = this.sqlite
      .query<GroupRow & { isAdmin: boolean }, [string]>(
        `SELECT ${GROUP}, ${COUNTS}, m.is_admin AS isAdmin FROM group_members m JOIN groups g ON g.id = m.group_id
          WHERE m.account_id = ? ORDER BY g.name_key`,
      )
      .all(accountId);
    for (const row of rows) row.isAdmin = toBoolean(row.isAdmin);
    return rows;
  }

  /** Groups whose name starts with `prefix` (lower-cased), for completion. */
  named(prefix: string, limit: number): GroupRow[] {
    return this.sqlite
      .query<GroupRow, [string, number]>(
        `SELECT ${GROUP}, ${COUNTS} FROM groups g WHERE g.name_key >= ?1 AND g.name_key < ?1 || char(1114111) ORDER BY g.name_key LIMIT ?2`,
      )
      .all(prefix, limit);
  }

  members(groupId: string): GroupMemberRow[] {
    const rows = this.sqlite
      .query<GroupMemberRow, [string]>(
        `SELECT m.account_id AS accountId, u.email, u.name, m.is_admin AS isAdmin, m.added_at AS addedAt
           FROM group_members m JOIN users u ON u.id = m.account_id
          WHERE m.group_id = ? ORDER BY u.email_key`,
      )
      .all(groupId);
    for (const row of rows) row.isAdmin = toBoolean(row.isAdmin);
    return rows;
  }

  member(groupId: string, accountId: string): { isAdmin: boolean } | null {
    const row = this.sqlite
      .query<{ isAdmin: number }, [string, string]>('SELECT is_admin AS isAdmin FROM group_members WHERE group_id = ? AND account_id = ?')
      .get(groupId, accountId);
    return row ? { isAdmin: toBoolean(row.isAdmin) } : null;
  }

  addMember(groupId: string, accountId: string, isAdmin: boolean, at: number): boolean {
    return (
      this.sqlite
        .query('INSERT INTO group_members (group_id, account_id, is_admin, added_at) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING')
        .run(groupId, accountId, isAdmin ? 1 : 0, at).changes > 0
    );
  }

  setAdmin(groupId: string, accountId: string, isAdmin: boolean): boolean {
    return (
      this.sqlite
        .query('UPDATE group_members SET is_admin = ? WHERE group_id = ? AND account_id = ?')
        .run(isAdmin ? 1 : 0, groupId, accountId).changes > 0
    );
  }

  removeMember(groupId: string, accountId: string): boolean {
    return this.sqlite.query('DELETE FROM group_members WHERE group_id = ? AND account_id = ?').run(groupId, accountId).changes > 0;
  }

  /** The identity provider's groups an account is in. */
  idpGroupsOf(accountId: string): Group[] {
    return this.sqlite
      .query<Group, [string]>(
        `SELECT ${GROUP} FROM group_members m JOIN groups g ON g.id = m.group_id WHERE m.account_id = ? AND g.source = 'idp'`,
      )
      .all(accountId);
  }

  shareWith(row: { itemId: string; ownerId: string; groupId: string; role: MemberRole; addedBy: string; addedAt: number }): void {
    this.sqlite
      .query('INSERT INTO item_groups (item_id, owner_id, group_id, role, added_by, added_at) VALUES (?, ?, ?, ?, ?, ?)')
      .run(row.itemId, row.ownerId, row.groupId, row.role, row.addedBy, row.addedAt);
  }

  setShareRole(itemId: string, groupId: string, role: MemberRole): boolean {
    return this.sqlite.query('UPDATE item_groups SET role = ? WHERE item_id = ? AND group_id = ?').run(role, itemId, groupId).changes > 0;
  }

  unshare(itemId: string, groupId: string): boolean {
    return this.sqlite.query('DELETE FROM item_groups WHERE item_id = ? AND group_id = ?').run(itemId, groupId).changes > 0;
  }

  /** The groups one item is shared with, in the order they were added. */
  ofItem(itemId: string): ItemGroupRow[] {
    return this.sqlite
      .query<ItemGroupRow, [string]>(
        `SELECT ig.group_id AS groupId, g.name, (SELECT COUNT(*) FROM group_members gm WHERE gm.group_id = g.id) AS size,
                ig.role, ig.added_at AS addedAt
           FROM item_groups ig JOIN groups g ON g.id = ig.group_id
          WHERE ig.item_id = ? ORDER BY ig.added_at, g.name_key`,
      )
      .all(itemId);
  }

  /** The live items shared with a group, with their owner: what a member gains or loses on joining or leaving. */
  itemsOf(groupId: string): Array<{ itemId: string; ownerId: string; name: string; role: MemberRole }> {
    return this.sqlite
      .query<{ itemId: string; ownerId: string; name: string; role: MemberRole }, [string]>(
        `SELECT ig.item_id AS itemId, ig.owner_id AS ownerId, i.name, ig.role
           FROM item_groups ig JOIN items i ON i.id = ig.item_id
          WHERE ig.group_id = ? AND i.deleted_at IS NULL ORDER BY ig.added_at`,
      )
      .all(groupId);
  }
}
