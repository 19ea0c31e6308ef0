import type { Database } from 'bun:sqlite';

/** A team folder as the admin sees it: its account's name, usage and limit, and the folder. */
export interface TeamFolderRow {
  id: string;
  name: string;
  folderId: string;
  storageUsed: number;
  storageLimit: number | null;
  deleting: boolean;
  createdAt: number;
}

const ROW = `SELECT u.id, u.name, t.folder_id AS folderId, u.storage_used AS storageUsed, u.storage_limit AS storageLimit,
  u.deletion_requested_at IS NOT NULL AS deleting, t.created_at AS createdAt
  FROM team_folders t JOIN users u ON u.id = t.account_id`;

/** The SQL of team folders: which accounts are teams', and the folder each holds. */
export class TeamFoldersRepo {
  constructor(private readonly sqlite: Database) {}

  insert(row: { accountId: string; folderId: string; groupId: string | null; createdBy: string | null; createdAt: number }): void {
    this.sqlite
      .query('INSERT INTO team_folders (account_id, folder_id, group_id, created_by, created_at) VALUES (?, ?, ?, ?, ?)')
      .run(row.accountId, row.folderId, row.groupId, row.createdBy, row.createdAt);
  }

  /** The quota already given to team folders a group's administrators made for it (those being deleted aside). */
  allowanceUsed(groupId: string): number {
    return this.sqlite
      .query<{ n: number }, [string]>(
        `SELECT COALESCE(SUM(u.storage_limit), 0) AS n FROM team_folders t JOIN users u ON u.id = t.account_id
          WHERE t.group_id = ? AND u.deletion_requested_at IS NULL`,
      )
      .get(groupId)!.n;
  }

  /** Every team folder, by name; those being deleted are gone already. */
  all(): TeamFolderRow[] {
    return this.sqlite
      .query<TeamFolderRow, []>(`${ROW} WHERE u.deletion_requested_at IS NULL ORDER BY lower(u.name), u.id`)
      .all()
      .map((r) => ({ ...r, deleting: Boolean(r.deleting) }));
  }

  get(id: string): TeamFolderRow | null {
    const row = this.sqlite.query<TeamFolderRow, [string]>(`${ROW} WHERE t.account_id = ?`).get(id);
    return row ? { ...row, deleting: Boolean(row.deleting) } : null;
  }

  /** The folder a team folder's account holds; null for any other account. */
  folderOf(accountId: string): string | null {
    return (
      this.sqlite
        .query<{ folderId: string }, [string]>('SELECT folder_id AS folderId FROM team_folders WHERE account_id = ?')
        .get(accountId)?.folderId ?? null
    );
  }

  /** Whether an account is a team folder's. */
  isTeam(accountId: string): boolean {
    return this.folderOf(accountId) !== null;
  }

  /** The live team folders an account reaches through its groups, by name (of two with one name, the older first). */
  reachedBy(accountId: string): Array<{ id: string; folderId: string }> {
    return this.sqlite
      .query<{ id: string; folderId: string }, [string]>(
        `SELECT DISTINCT t.account_id AS id, t.folder_id AS folderId
           FROM group_members gm CROSS JOIN item_groups g ON g.group_id = gm.group_id CROSS JOIN team_folders t ON t.folder_id = g.item_id
           JOIN users u ON u.id = t.account_id
          WHERE gm.account_id = ? AND u.disabled_at IS NULL AND u.deletion_requested_at IS NULL
          ORDER BY lower(u.name), t.created_at, t.account_id`,
      )
      .all(accountId);
  }

  /** Whether an account administers a team folder: a group administrator of a group given it as editor. */
  administers(accountId: string, teamId: string): boolean {
    return (
      this.sqlite
        .query(
          `SELECT 1 FROM team_folders t CROSS JOIN item_groups g ON g.item_id = t.folder_id AND g.role = 'editor'
             CROSS JOIN group_members gm ON gm.group_id = g.group_id AND gm.account_id = ?1 AND gm.is_admin = 1
            WHERE t.account_id = ?2 LIMIT 1`,
        )
        .get(accountId, teamId) !== null
    );
  }
}
