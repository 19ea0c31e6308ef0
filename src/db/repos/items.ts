import type { Database, SQLQueryBindings } from 'bun:sqlite';
import { nameKeyOf, numberedName, splitExtension } from '../../services/names.ts';

export type ItemType = 'file' | 'folder';

/** One row of `items` as SQLite returns it. */
export interface ItemRow {
  id: string;
  account_id: string;
  parent_id: string | null;
  type: ItemType;
  name: string;
  name_key: string;
  size: number;
  mime_type: string | null;
  storage_key: string | null;
  wrapped_key: string | null;
  key_id: string | null;
  starred: number;
  modified_at: number;
  accessed_at: number;
  created_at: number;
  deleted_at: number | null;
  deleted_root_id: string | null;
}

export const ITEM_COLUMNS =
  'id, account_id, parent_id, type, name, name_key, size, mime_type, storage_key, wrapped_key, key_id, starred, modified_at, accessed_at, created_at, deleted_at, deleted_root_id';

/** A row as list pages read it: everything an API item shows, without the object's key material. */
export type ListedRow = Omit<ItemRow, 'storage_key' | 'wrapped_key' | 'key_id' | 'created_at'>;

const LISTED_COLUMNS =
  'id, account_id, parent_id, type, name, name_key, size, mime_type, starred, modified_at, accessed_at, deleted_at, deleted_root_id';

export type SortField = 'name' | 'size' | 'modified' | 'accessedAt' | 'deletedAt';
export type SortOrder = 'asc' | 'desc';

const SORT_COLUMN: Record<SortField, string> = {
  name: 'name_key',
  size: 'size',
  modified: 'modified_at',
  accessedAt: 'accessed_at',
  deletedAt: 'deleted_at',
};

/** Position after the last row of a page: its type (folders come first), sort value and id. */
export interface PagePosition {
  type: ItemType;
  value: string | number;
  id: string;
}

/**
 * Which rows a list shows. `where` must name the account and match one of the partial indexes
 * (folder pages, starred, trash roots), so a page is an index range scan whatever the list's size.
 */
export interface ListScope {
  where: string;
  params: SQLQueryBindings[];
}

export interface PageRequest {
  sort: SortField;
  order: SortOrder;
  limit: number;
  after: PagePosition | null;
}

export interface NewItem {
  id: string;
  accountId: string;
  parentId: string | null;
  type: ItemType;
  name: string;
  size: number;
  mimeType: string | null;
  storageKey: string | null;
  wrappedKey: string | null;
  keyId: string | null;
  starred: boolean;
  modifiedAt: number;
  accessedAt: number;
  createdAt: number;
}

/** The SQL of the file tree shared by the file services (hot paths as prepared statements). */
export class ItemRepo {
  constructor(readonly sqlite: Database) {}

  get(accountId: string, id: string): ItemRow | null {
    return (
      this.sqlite
        .query<ItemRow, [string, string]>(`SELECT ${ITEM_COLUMNS} FROM items WHERE id = ? AND account_id = ?`)
        .get(id, accountId) ?? null
    );
  }

  getLive(accountId: string, id: string): ItemRow | null {
    return (
      this.sqlite
        .query<ItemRow, [string, string]>(`SELECT ${ITEM_COLUMNS} FROM items WHERE id = ? AND account_id = ? AND deleted_at IS NULL`)
        .get(id, accountId) ?? null
    );
  }

  /** Rows for the given ids that belong to the account (any state), in no particular order. */
  getMany(accountId: string, ids: readonly string[]): ItemRow[] {
    return this.sqlite
      .query<ItemRow, [string, string]>(`SELECT ${ITEM_COLUMNS} FROM items WHERE id IN (SELECT value FROM json_each(?)) AND account_id = ?`)
      .all(JSON.stringify(ids), accountId);
  }

  insert(item: NewItem): ItemRow {
    return this.sqlite
      .query<ItemRow, SQLQueryBindings[]>(
        `INSERT INTO items (id, account_id, parent_id, type, name, name_key, size, mime_type, storage_key, wrapped_key, key_id, starred, modified_at, accessed_at, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING ${ITEM_COLUMNS}`,
      )
      .get(
        item.id,
        item.accountId,
        item.parentId,
        item.type,
        item.name,
        nameKeyOf(item.name),
        item.size,
        item.mimeType,
        item.storageKey,
        item.wrappedKey,
        item.keyId,
        item.starred ? 1 : 0,
        item.modifiedAt,
        item.accessedAt,
        item.createdAt,
      )!;
  }

  /** The live sibling holding this name (case-insensitive), if any. */
  liveByName(accountId: string, parentId: string | null, name: string): ItemRow | null {
    return (
      this.sqlite
        .query<ItemRow, [string, string, string]>(
          `SELECT ${ITEM_COLUMNS} FROM items WHERE account_id = ? AND parent_key = ? AND name_key = ? AND deleted_at IS NULL`,
        )
        .get(accountId, parentId ?? '', nameKeyOf(name)) ?? null
    );
  }

  /**
   * `name` if it is free in the folder, else `base (n)ext` with the smallest free n (COMPAT). The
   * numbered siblings are read with one index range scan.
   */
  uniqueName(accountId: string, parentId: string | null, name: string): string {
    if (!this.liveByName(accountId, parentId, name)) return name;
    const { base, ext } = splitExtension(name);
    const prefix = nameKeyOf(`${base} (`);
    const used = new Set<number>();
    const extKey = nameKeyOf(ext);
    for (const row of this.sqlite
      .query<{ name_key: string }, [string, string, string, string]>(
        `SELECT name_key FROM items WHERE account_id = ? AND parent_key = ? AND deleted_at IS NULL AND name_key >= ? AND name_key < ?`,
      )
      .all(accountId, parentId ?? '', prefix, `${prefix.slice(0, -1)})`)) {
      const rest = row.name_key.slice(prefix.length);
      const m = /^(\d+)\)(.*)$/s.exec(rest);
      if (m && m[2] === extKey) used.add(Number(m[1]));
    }
    for (let n = 1; ; n++) {
      if (used.has(n)) continue;
      const candidate = numberedName(name, n);
      // A shortened base can collide with something else: check the exact candidate too.
      if (!this.liveByName(accountId, parentId, candidate)) return candidate;
    }
  }

  /** One page of a list, folders first, ordered by the sort column then id (a total order). */
  page(scope: ListScope, req: PageRequest): { rows: ListedRow[]; hasMore: boolean } {
    const col = SORT_COLUMN[req.sort];
    const dir = req.order === 'asc' ? 'ASC' : 'DESC';
    const op = req.order === 'asc' ? '>' : '<';
    const want = req.limit + 1;
    const rows: ListedRow[] = [];
    const phases: ItemType[] = req.after?.type === 'file' ? ['file'] : ['folder', 'file'];
    for (const type of phases) {
      const after = req.after && req.after.type === type ? req.after : null;
      const sql =
        `SELECT ${LISTED_COLUMNS} FROM items WHERE ${scope.where} AND type = ?` +
        (after ? ` AND (${col}, id) ${op} (?, ?)` : '') +
        ` ORDER BY ${col} ${dir}, id ${dir} LIMIT ?`;
      const params: SQLQueryBindings[] = [...scope.params, type];
      if (after) params.push(after.value, after.id);
      params.push(want - rows.length);
      rows.push(...this.sqlite.query<ListedRow, SQLQueryBindings[]>(sql).all(...params));
      if (rows.length >= want) break;
    }
    const hasMore = rows.length > req.limit;
    return { rows: hasMore ? rows.slice(0, req.limit) : rows, hasMore };
  }

  sortValue(row: ListedRow, sort: SortField): string | number {
    const v = row[SORT_COLUMN[sort] as keyof ListedRow];
    return (v ?? 0) as string | number;
  }

  /** Ids of the live subtree under (and including) `rootId`, parents before children; stops after `cap`. */
  liveSubtreeIds(rootId: string, cap = Number.MAX_SAFE_INTEGER): string[] {
    return this.sqlite
      .query<{ id: string }, [string, number]>(
        `WITH RECURSIVE t(id) AS (
           SELECT id FROM items WHERE id = ?1 AND deleted_at IS NULL
           UNION ALL
           SELECT i.id FROM items i JOIN t ON i.parent_id = t.id WHERE i.deleted_at IS NULL
         ) SELECT id FROM t LIMIT ?2`,
      )
      .all(rootId, cap)
      .map((r) => r.id);
  }

  /** Live children of a folder in id order, one keyset page at a time (ZIP walks, copies). */
  liveChildren(accountId: string, parentId: string, afterId: string, limit: number): ItemRow[] {
    return this.sqlite
      .query<ItemRow, [string, string, string, number]>(
        `SELECT ${ITEM_COLUMNS} FROM items WHERE account_id = ? AND parent_id = ? AND deleted_at IS NULL AND id > ? ORDER BY id LIMIT ?`,
      )
      .all(accountId, parentId, afterId, limit);
  }

  /** Recursive totals of a live folder: bytes, files and folders below it. */
  folderTotals(rootId: string): { totalSize: number; fileCount: number; folderCount: number } {
    const row = this.sqlite
      .query<{ total: number | null; files: number; folders: number }, [string]>(
        `WITH RECURSIVE t(id, type, size) AS (
           SELECT id, type, size FROM items WHERE parent_id = ?1 AND deleted_at IS NULL
           UNION ALL
           SELECT i.id, i.type, i.size FROM items i JOIN t ON i.parent_id = t.id WHERE t.type = 'folder' AND i.deleted_at IS NULL
         ) SELECT SUM(size) AS total, SUM(type = 'file') AS files, SUM(type = 'folder') AS folders FROM t`,
      )
      .get(rootId)!;
    return { totalSize: row.total ?? 0, fileCount: row.files ?? 0, folderCount: row.folders ?? 0 };
  }

  /** Whether `targetId` is one of `ids` or lies below one of them (walks up from the target). */
  isWithin(ids: ReadonlySet<string>, targetId: string | null): boolean {
    const parentOf = this.sqlite.query<{ parent_id: string | null }, [string]>('SELECT parent_id FROM items WHERE id = ?');
    let current = targetId;
    for (let depth = 0; current !== null && depth < 10_000; depth++) {
      if (ids.has(current)) return true;
      current = parentOf.get(current)?.parent_id ?? null;
    }
    return false;
  }
}
