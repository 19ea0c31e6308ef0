import { Gathering } from '../../lib/gathering.ts';
import type { Database, SQLQueryBindings } from 'bun:sqlite';
import { items } from '../schema/items.ts';
import { selectList, toBoolean } from '../select.ts';
import { transactOf } from '../client.ts';
import { shownInAlbum } from './thumbnails.ts';
import type { StagedHostFile } from '../../lib/staged-host-file.ts';
import { MAX_FOLDER_DEPTH } from '../../contract/names.ts';
import { badRequest, Messages } from '../../errors.ts';

/** A row of the file tree (a docs/api.md › Conventions item before it is shown), as the schema describes it (`taken_at` is the Photos query's, kept by triggers). */
export type Item = Omit<typeof items.$inferSelect, 'parentKey' | 'takenAt'>;
type ItemType = Item['type'];
/** What list pages read: everything an API item shows, without the object's key material. */
export type ListedItem = Omit<
  Item,
  'storageKey' | 'wrappedKey' | 'keyId' | 'createdAt' | 'contentSource' | 'contentAuthorId' | 'treeVersion' | 'treeSize' | 'seq'
>;
type ContentOrigin = Pick<Item, 'contentSource' | 'contentAuthorId'>;
export type NewItem = Omit<Item, 'nameKey' | 'deletedAt' | 'deletedRootId' | 'treeVersion' | 'treeSize' | 'seq' | keyof ContentOrigin> &
  Partial<ContentOrigin>;
/** What purging a trash entry needs of each row. */
export type ExportFolder = Pick<Item, 'id' | 'parentId' | 'name' | 'modifiedAt' | 'deletedAt'>;
export type ExportFile = ExportFolder & Pick<Item, 'size' | 'storageKey' | 'wrappedKey'> & { seq: number };
export type PurgedItem = Pick<Item, 'id' | 'type' | 'size' | 'storageKey'>;

export type SortField = 'name' | 'size' | 'modified' | 'accessedAt' | 'deletedAt';
export type SortOrder = 'asc' | 'desc';

/** Position after the last row of a page: its type (folders come first), sort value and id. */
export interface PagePosition {
  type: ItemType;
  value: string | number;
  id: string;
}

/** Which rows a list shows; each matches one of the partial indexes, so a page is an index range scan. */
export type ListScope =
  | { kind: 'folder'; accountId: string; parentId: string | null }
  | { kind: 'starred'; accountId: string }
  | { kind: 'shared'; accountId: string }
  | { kind: 'sharedAny'; accountId: string }
  | { kind: 'trash'; accountId: string };

export interface PageRequest {
  sort: SortField;
  order: SortOrder;
  limit: number;
  after: PagePosition | null;
}

export interface TreeTotals {
  totalSize: number;
  fileCount: number;
  folderCount: number;
}

const ITEM_KEYS = [
  'seq',
  'id',
  'accountId',
  'parentId',
  'type',
  'name',
  'nameKey',
  'size',
  'mimeType',
  'storageKey',
  'wrappedKey',
  'keyId',
  'contentSource',
  'contentAuthorId',
  'starred',
  'modifiedAt',
  'accessedAt',
  'createdAt',
  'deletedAt',
  'deletedRootId',
  'treeVersion',
  'treeSize',
] as const satisfies ReadonlyArray<keyof Item>;
const CHILD_ENTRY_KEYS = [
  'seq',
  'id',
  'type',
  'name',
  'nameKey',
  'size',
  'mimeType',
  'storageKey',
  'modifiedAt',
  'createdAt',
  'treeVersion',
  'treeSize',
] as const satisfies ReadonlyArray<keyof Item>;
export type ChildEntry = Pick<Item, (typeof CHILD_ENTRY_KEYS)[number]> & { hasProperties: boolean };
const CHILD_ENTRY = selectList(items, CHILD_ENTRY_KEYS);
/** The columns of a ListedItem, for other repositories' statements that join items. */
export const LISTED_KEYS = ITEM_KEYS.filter(
  (k) =>
    !['storageKey', 'wrappedKey', 'keyId', 'createdAt', 'contentSource', 'contentAuthorId', 'treeVersion', 'treeSize', 'seq'].includes(k),
);
const ITEM = selectList(items, ITEM_KEYS);
const SEARCHED_ITEM = selectList(items, ITEM_KEYS, 'items.');
const PURGED = selectList(items, ['id', 'type', 'size', 'storageKey']);
const LISTED = selectList(items, LISTED_KEYS);

const SORT_COLUMN: Record<SortField, string> = {
  name: 'name_key',
  size: 'size',
  modified: 'modified_at',
  accessedAt: 'accessed_at',
  deletedAt: 'deleted_at',
};
const SORT_KEY: Record<SortField, keyof ListedItem> = {
  name: 'nameKey',
  size: 'size',
  modified: 'modifiedAt',
  accessedAt: 'accessedAt',
  deletedAt: 'deletedAt',
};

const SCOPE_WHERE: Record<ListScope['kind'], string> = {
  folder: 'account_id = ?1 AND parent_id IS ?2 AND deleted_at IS NULL',
  starred: 'account_id = ?1 AND starred = 1 AND deleted_at IS NULL',
  shared: 'account_id = ?1 AND deleted_at IS NULL AND id IN (SELECT item_id FROM share_items)',
  // Shared by link or with people (members).
  sharedAny:
    'account_id = ?1 AND deleted_at IS NULL AND (id IN (SELECT item_id FROM share_items) OR id IN (SELECT item_id FROM item_members WHERE owner_id = ?1) OR id IN (SELECT item_id FROM item_groups WHERE owner_id = ?1))',
  trash: 'account_id = ?1 AND deleted_at IS NOT NULL AND deleted_root_id = id',
};

/** Rows of Coffer's own store: a library's files stay in their host folder, with no object, no usage and nothing to export. */
const STORED = 'NOT EXISTS (SELECT 1 FROM library_entries le WHERE le.item_id = items.id)';

/** What a deleted row tells of where it was and what it weighed. */
type Gone = Pick<Item, 'accountId' | 'parentId' | 'deletedAt' | 'type' | 'size' | 'treeSize'>;
const GONE = 'RETURNING account_id AS accountId, parent_id AS parentId, deleted_at AS deletedAt, type, size, tree_size AS treeSize';

/** The bytes a row counts for in its folders' tree_size: a file's size, a folder's own tree_size. */
const weightOf = (row: Pick<Item, 'type' | 'size' | 'treeSize'>) => (row.type === 'file' ? row.size : row.treeSize);

/** Case-insensitive key of a name (the `name_key` column): collisions and name ordering ignore case. */
export function nameKeyOf(name: string): string {
  return name.toLowerCase();
}

/**
 * What search compares: the name key in NFC (a library's names keep the host's spelling, decomposed as macOS writes them) with every
 * sigma as σ, as lower-casing writes Σ as ς or σ by what follows it (`ΟΔΟΣ` → `οδος`, `ΟΔΟΣ.txt` → `οδοσ.txt`).
 */
export function searchKeyOf(text: string): string {
  return nameKeyOf(text).normalize('NFC').replaceAll('ς', 'σ');
}

function item<T extends { starred: boolean }>(row: T | null | undefined): T | null {
  if (!row) return null;
  row.starred = toBoolean(row.starred);
  return row;
}

function itemList<T extends { starred: boolean }>(rows: T[]): T[] {
  for (const row of rows) row.starred = toBoolean(row.starred);
  return rows;
}

/**
 * A change the tree is about to make: a row placed under `parentId` (`item` known at the write, not ahead of
 * it), the row `itemId` given a new name or parent (`place`), new content or trashed; `change` is an edit
 * of `itemId` checked ahead of the request's work, before its kind is known.
 */
export type ItemChange =
  | {
      kind: 'insert';
      parentId: string | null;
      type: 'file' | 'folder' | 'unknown';
      item?: { id: string; name: string };
      /** The file's content staged in a library's host folder (a file inserted into a library). */
      staged?: StagedHostFile;
    }
  | { kind: 'place'; itemId: string; parentId?: string | null; name?: string }
  | { kind: 'content'; itemId: string; staged?: StagedHostFile }
  | { kind: 'restore'; itemId: string; parentId: string | null; name: string }
  | { kind: 'trash' | 'purge' | 'change'; itemId: string };

/** Bytes inserted under each folder (by id) and into each account (by id), not yet marked in their tree versions. */
interface PendingTouches {
  folders: Map<string, number>;
  roots: Map<string, number>;
}

/** What a guard wants done inside the write's transaction, after its rows are written (a host folder made, say). */
type AfterChange = (() => void) | undefined;

/** The SQL of the file tree (`items`). Hot paths are prepared raw statements; rows are keyed as in the schema. */
export class ItemsRepo {
  // Refuses changes some items may not have (a library's, written only as its host folder allows); throws to refuse.
  private guard: (change: ItemChange) => AfterChange = () => undefined;
  // The tree marks gathered by batchingTreeChanges while it runs; null outside one.
  private readonly pendingTouches = new Gathering<PendingTouches>(
    () => ({ folders: new Map(), roots: new Map() }),
    (pending) => {
      for (const [parentId, bytes] of pending.folders) this.touchFolders(parentId, bytes);
      for (const [accountId, bytes] of pending.roots) this.touchRoot(accountId, bytes);
    },
  );

  constructor(private readonly sqlite: Database) {}

  /**
   * Folders from the root down to `folderId`, itself included (0 for the root): one indexed walk up.
   * Stops past MAX_FOLDER_DEPTH, so it never reads more than that many rows.
   */
  depthOf(folderId: string | null): number {
    if (folderId === null) return 0;
    return (
      this.sqlite
        .query<{ d: number | null }, [string, number]>(
          `WITH RECURSIVE up(id, d) AS (SELECT ?1, 1 UNION ALL SELECT i.parent_id, up.d + 1 FROM items i JOIN up ON i.id = up.id
             WHERE i.parent_id IS NOT NULL AND up.d <= ?2)
           SELECT max(d) AS d FROM up`,
        )
        .get(folderId, MAX_FOLDER_DEPTH)?.d ?? 0
    );
  }

  /**
   * Levels of live folders in `id`'s subtree, itself included (0 for a file), counted only up to `room + 1`:
   * a subtree that fits costs one indexed walk of its folders, a deep one stops as soon as it passes.
   */
  heightOf(id: string, room: number): number {
    return (
      this.sqlite
        .query<{ h: number | null }, [string, number]>(
          `WITH RECURSIVE down(id, account_id, h) AS (
             SELECT id, account_id, 1 FROM items WHERE id = ?1 AND type = 'folder'
             UNION ALL
             SELECT i.id, i.account_id, down.h + 1 FROM items i JOIN down ON i.account_id = down.account_id AND i.parent_id = down.id
              WHERE i.type = 'folder' AND i.deleted_at IS NULL AND down.h <= ?2)
           SELECT max(h) AS h FROM down`,
        )
        .get(id, room)?.h ?? 0
    );
  }

  /** Whether folder `id` (with the live folders under it) may sit under `parentId` within MAX_FOLDER_DEPTH; `from`: the folder it moves out of. */
  nests(parentId: string | null, id: string, from?: string | null): boolean {
    const depth = this.depthOf(parentId);
    // Moved no deeper than it was, nothing under it goes deeper either: only a move down walks the subtree.
    if (from !== undefined && depth <= this.depthOf(from)) return true;
    const room = MAX_FOLDER_DEPTH - depth;
    return room > 0 && this.heightOf(id, room) <= room;
  }

  /** Refuses `height` levels of new folders under `parentId` when they would pass MAX_FOLDER_DEPTH. */
  assertNests(parentId: string | null, height: number): void {
    if (this.depthOf(parentId) + height > MAX_FOLDER_DEPTH) throw badRequest(Messages.folderTooDeep);
  }

  /** Sets the check every insert, rename, move, content change and trashing passes first, through every door. */
  guardChanges(guard: (change: ItemChange) => AfterChange): void {
    this.guard = guard;
  }

  /** Runs that check ahead of a write (before an upload's bytes are received, say), so a refusal comes first. */
  checkChange(change: ItemChange): void {
    this.guard(change);
  }

  /**
   * Marks a change below `parentId` (null: at the root): the tree version of that folder, of each of its
   * ancestors and of the account's root goes up, so their ETags move, and their tree sizes by `bytes`.
   * Every write of the tree calls it in the write's own transaction, for the parent the changed item is
   * under (before and after a move); inserts inside `batchingTreeChanges` mark each folder once at its end.
   */
  private touchAncestors(accountId: string, parentId: string | null, bytes = 0): void {
    this.touchFolders(parentId, bytes);
    this.touchRoot(accountId, bytes);
  }

  /**
   * Marks a change of what live items show of themselves without a change below any folder (oc:permissions' S:
   * shared with people or by a link, or no longer): the ETags of the folders above each and of the account's root
   * move, so that a sync client lists them again and learns it. Trashed items show nowhere: nothing moves for them.
   */
  touchAbove(items: ReadonlyArray<Pick<Item, 'accountId' | 'parentId' | 'deletedAt'>>): void {
    const marks = new Map<string, { accountId: string; parentId: string | null }>();
    for (const i of items) if (i.deletedAt === null) marks.set(`${i.accountId}\n${i.parentId}`, i);
    if (marks.size) this.changing(() => marks.forEach((m) => this.touchAncestors(m.accountId, m.parentId)));
  }

  private touchFolders(parentId: string | null, bytes: number): void {
    if (parentId !== null)
      this.sqlite
        .query(
          `WITH RECURSIVE up(id) AS (SELECT ?1 UNION SELECT i.parent_id FROM items i JOIN up ON i.id = up.id WHERE i.parent_id IS NOT NULL)
           UPDATE items SET tree_version = tree_version + 1, tree_size = tree_size + ?2 WHERE id IN (SELECT id FROM up)`,
        )
        .run(parentId, bytes);
  }

  private touchRoot(accountId: string, bytes: number): void {
    this.sqlite
      .query(
        'INSERT INTO tree_versions (account_id, version, size) VALUES (?1, 1, ?2) ON CONFLICT (account_id) DO UPDATE SET version = version + 1, size = size + ?2',
      )
      .run(accountId, bytes);
  }

  /**
   * Runs `write` (inside the caller's transaction) with its inserts' tree marks gathered: each folder they
   * went into, its ancestors and each account's root are marked once when it ends, by the bytes of all of
   * them, instead of once per insert. Marked when `write` throws too, so the tree always counts what was
   * inserted, whether the caller then commits or rolls back.
   */
  batchingTreeChanges<T>(write: () => T): T {
    return this.pendingTouches.run(write);
  }

  /** A write and the tree versions it moves, all or nothing (a savepoint inside the caller's transaction). */
  private changing<T>(write: () => T): T {
    return transactOf(this.sqlite)(write);
  }

  /** The bytes of the account's live files (the root's tree size). */
  rootSize(accountId: string): number {
    return this.sqlite.query<{ n: number }, [string]>('SELECT size AS n FROM tree_versions WHERE account_id = ?').get(accountId)?.n ?? 0;
  }

  /** The account root's tree version (0 before its first change). */
  rootVersion(accountId: string): number {
    return this.sqlite.query<{ v: number }, [string]>('SELECT version AS v FROM tree_versions WHERE account_id = ?').get(accountId)?.v ?? 0;
  }

  get(accountId: string, id: string): Item | null {
    return item(this.sqlite.query<Item, [string, string]>(`SELECT ${ITEM} FROM items WHERE id = ? AND account_id = ?`).get(id, accountId));
  }

  getLive(accountId: string, id: string): Item | null {
    return item(
      this.sqlite
        .query<Item, [string, string]>(`SELECT ${ITEM} FROM items WHERE id = ? AND account_id = ? AND deleted_at IS NULL`)
        .get(id, accountId),
    );
  }

  /** Any account's live item: the public share pages know the account only through the link. */
  getLiveAnyAccount(id: string): Item | null {
    return item(this.sqlite.query<Item, [string]>(`SELECT ${ITEM} FROM items WHERE id = ? AND deleted_at IS NULL`).get(id));
  }

  /** Rows for the given ids that belong to the account (any state), in no particular order. */
  getMany(accountId: string, ids: readonly string[]): Item[] {
    return itemList(
      this.sqlite
        .query<Item, [string, string]>(`SELECT ${ITEM} FROM items WHERE id IN (SELECT value FROM json_each(?)) AND account_id = ?`)
        .all(JSON.stringify(ids), accountId),
    );
  }

  insert(row: NewItem, staged?: StagedHostFile): Item {
    if (row.type === 'folder') this.assertNests(row.parentId, 1);
    const after = this.guard({ kind: 'insert', parentId: row.parentId, type: row.type, item: { id: row.id, name: row.name }, staged });
    const pending = this.pendingTouches.current;
    // Gathered, the marks follow at the batch's end: the insert alone is one statement, no savepoint needed.
    if (pending && !after) {
      const inserted = this.insertRow(row);
      const bytes = row.type === 'file' ? row.size : 0;
      if (row.parentId !== null) pending.folders.set(row.parentId, (pending.folders.get(row.parentId) ?? 0) + bytes);
      pending.roots.set(row.accountId, (pending.roots.get(row.accountId) ?? 0) + bytes);
      return inserted;
    }
    return this.changing(() => {
      this.touchAncestors(row.accountId, row.parentId, row.type === 'file' ? row.size : 0);
      const inserted = this.insertRow(row);
      after?.();
      return inserted;
    });
  }

  /** A new empty folder, created, modified and accessed `at`. */
  insertFolder(folder: Pick<NewItem, 'id' | 'accountId' | 'parentId' | 'name'>, at: number): Item {
    return this.insert({
      ...folder,
      type: 'folder',
      size: 0,
      mimeType: null,
      storageKey: null,
      wrappedKey: null,
      keyId: null,
      starred: false,
      modifiedAt: at,
      accessedAt: at,
      createdAt: at,
    });
  }

  private insertRow(row: NewItem): Item {
    return item(
      this.sqlite
        .query<Item, SQLQueryBindings[]>(
          `INSERT INTO items (id, account_id, parent_id, type, name, name_key, size, mime_type, storage_key, wrapped_key, key_id, starred,
             modified_at, accessed_at, created_at, content_source, content_author_id)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING ${ITEM}`,
        )
        .get(
          row.id,
          row.accountId,
          row.parentId,
          row.type,
          row.name,
          nameKeyOf(row.name),
          row.size,
          row.mimeType,
          row.storageKey,
          row.wrappedKey,
          row.keyId,
          row.starred ? 1 : 0,
          row.modifiedAt,
          row.accessedAt,
          row.createdAt,
          row.contentSource ?? null,
          row.contentAuthorId ?? null,
        ),
    )!;
  }

  /** The live sibling holding this name (case-insensitive), if any. */
  liveByName(accountId: string, parentId: string | null, name: string): Item | null {
    return item(
      this.sqlite
        .query<Item, [string, string, string]>(
          `SELECT ${ITEM} FROM items WHERE account_id = ? AND parent_key = ? AND name_key = ? AND deleted_at IS NULL`,
        )
        .get(accountId, parentId ?? '', nameKeyOf(name)),
    );
  }

  /** Name keys of live siblings in [from, to): one index range scan (numbered names of a taken name). */
  liveNameKeysBetween(accountId: string, parentId: string | null, from: string, to: string): string[] {
    return this.sqlite
      .query<{ nameKey: string }, [string, string, string, string]>(
        `SELECT name_key AS nameKey FROM items
          WHERE account_id = ? AND parent_key = ? AND deleted_at IS NULL AND name_key >= ? AND name_key < ?`,
      )
      .all(accountId, parentId ?? '', from, to)
      .map((r) => r.nameKey);
  }

  /** One page of a list, folders first, ordered by the sort column then id (a total order). */
  page(scope: ListScope, req: PageRequest): { rows: ListedItem[]; hasMore: boolean } {
    const col = SORT_COLUMN[req.sort];
    const dir = req.order === 'asc' ? 'ASC' : 'DESC';
    const op = req.order === 'asc' ? '>' : '<';
    const want = req.limit + 1;
    const rows: ListedItem[] = [];
    const scopeParams: SQLQueryBindings[] = scope.kind === 'folder' ? [scope.accountId, scope.parentId] : [scope.accountId];
    const next = scopeParams.length + 1;
    const phases: ItemType[] = req.after?.type === 'file' ? ['file'] : ['folder', 'file'];
    for (const type of phases) {
      const after = req.after && req.after.type === type ? req.after : null;
      const sql =
        `SELECT ${LISTED} FROM items WHERE ${SCOPE_WHERE[scope.kind]} AND type = ?${next}` +
        (after ? ` AND (${col}, id) ${op} (?${next + 1}, ?${next + 2})` : '') +
        ` ORDER BY ${col} ${dir}, id ${dir} LIMIT ?${after ? next + 3 : next + 1}`;
      const params: SQLQueryBindings[] = [...scopeParams, type];
      if (after) params.push(after.value, after.id);
      params.push(want - rows.length);
      rows.push(...itemList(this.sqlite.query<ListedItem, SQLQueryBindings[]>(sql).all(...params)));
      if (rows.length >= want) break;
    }
    const hasMore = rows.length > req.limit;
    return { rows: hasMore ? rows.slice(0, req.limit) : rows, hasMore };
  }

  sortValue(row: ListedItem, sort: SortField): string | number {
    return (row[SORT_KEY[sort]] ?? 0) as string | number;
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
  liveChildren(accountId: string, parentId: string, afterId: string, limit: number): Item[] {
    return itemList(
      this.sqlite
        .query<Item, [string, string, string, number]>(
          `SELECT ${ITEM} FROM items WHERE account_id = ? AND parent_id = ? AND deleted_at IS NULL AND id > ? ORDER BY id LIMIT ?`,
        )
        .all(accountId, parentId, afterId, limit),
    );
  }

  /** An album's live files of any account, in id order after `afterId` (an album link's "Download all"). */
  liveFilesOfAlbum(albumId: string, afterId: string, limit: number): Item[] {
    return itemList(
      this.sqlite
        .query<Item, [string, string, number]>(
          `SELECT ${ITEM} FROM items WHERE id IN (SELECT item_id FROM album_items WHERE album_id = ? AND item_id > ?)
             AND type = 'file' AND ${shownInAlbum('items')} ORDER BY id LIMIT ?`,
        )
        .all(albumId, afterId, limit),
    );
  }

  /**
   * Live children of a folder (null: the root) in name-key order after `afterKey`, one range of the unique
   * name index, with only what a WebDAV listing shows (a 10,000-item PROPFIND spent 12 ms making the ten
   * columns it never read) and whether each has dead properties (asking per 50 rows took 4 ms more).
   */
  liveChildEntriesByName(accountId: string, parentId: string | null, afterKey: string, limit: number): ChildEntry[] {
    const rows = this.sqlite
      .query<ChildEntry, [string, string, string, number]>(
        `SELECT ${CHILD_ENTRY}, EXISTS (SELECT 1 FROM dav_properties p WHERE p.item_id = items.id) AS hasProperties
         FROM items WHERE account_id = ? AND parent_key = ? AND deleted_at IS NULL AND name_key > ? ORDER BY name_key LIMIT ?`,
      )
      .all(accountId, parentId ?? '', afterKey, limit);
    for (const row of rows) row.hasProperties = toBoolean(row.hasProperties);
    return rows;
  }

  /** Totals of the live tree below a folder: bytes, files and folders (the folder itself not counted). */
  liveTreeTotals(folderId: string): TreeTotals {
    const row = this.sqlite
      .query<{ total: number | null; files: number | null; folders: number | null }, [string]>(
        `WITH RECURSIVE t(id, type, size) AS (
           SELECT id, type, size FROM items WHERE parent_id = ?1 AND deleted_at IS NULL
           UNION ALL
           SELECT i.id, i.type, i.size FROM items i JOIN t ON i.parent_id = t.id WHERE t.type = 'folder' AND i.deleted_at IS NULL
         ) SELECT SUM(size) AS total, SUM(type = 'file') AS files, SUM(type = 'folder') AS folders FROM t`,
      )
      .get(folderId)!;
    return { totalSize: row.total ?? 0, fileCount: row.files ?? 0, folderCount: row.folders ?? 0 };
  }

  /** Totals of what was trashed with a trash root (the root itself not counted). */
  trashSetTotals(rootId: string): TreeTotals {
    const row = this.sqlite
      .query<{ total: number | null; files: number | null; folders: number | null }, [string]>(
        `SELECT SUM(size) AS total, SUM(type = 'file') AS files, SUM(type = 'folder') AS folders FROM items
          WHERE deleted_root_id = ?1 AND id != ?1`,
      )
      .get(rootId)!;
    return { totalSize: row.total ?? 0, fileCount: row.files ?? 0, folderCount: row.folders ?? 0 };
  }

  /** The parent of any item (live or not); undefined when the item does not exist. */
  parentOf(id: string): string | null | undefined {
    const row = this.sqlite.query<{ parentId: string | null }, [string]>('SELECT parent_id AS parentId FROM items WHERE id = ?').get(id);
    return row ? row.parentId : undefined;
  }

  /** The parents of any items (live or not) that exist, by id. */
  parentsOf(ids: readonly string[]): Map<string, string | null> {
    const rows = this.sqlite
      .query<{ id: string; parentId: string | null }, [string]>(
        'SELECT id, parent_id AS parentId FROM items WHERE id IN (SELECT value FROM json_each(?))',
      )
      .all(JSON.stringify(ids));
    return new Map(rows.map((r) => [r.id, r.parentId]));
  }

  /** Name, parent and trash mark of any item, for paths in reports and on a library's host. */
  nameAndParent(id: string): Pick<Item, 'name' | 'parentId' | 'deletedAt'> | null {
    return this.sqlite
      .query<Pick<Item, 'name' | 'parentId' | 'deletedAt'>, [string]>(
        'SELECT name, parent_id AS parentId, deleted_at AS deletedAt FROM items WHERE id = ?',
      )
      .get(id);
  }

  /** Account-wide name matches of live items: exact, then prefix, then substring (trigram index from 3 characters). */
  searchCandidates(accountId: string, key: string, limit: number): Item[] {
    const exact = this.sqlite
      .query<Item, [string, string, number]>(
        `SELECT ${ITEM} FROM items WHERE account_id = ? AND name_key = ? AND deleted_at IS NULL LIMIT ?`,
      )
      .all(accountId, key, limit);
    const prefix = this.sqlite
      .query<Item, [string, string, string, number]>(
        `SELECT ${ITEM} FROM items WHERE account_id = ? AND name_key > ? AND name_key < ? AND deleted_at IS NULL LIMIT ?`,
      )
      .all(accountId, key, `${key}\u{10FFFF}`, limit);
    const substring =
      [...key].length >= 3
        ? this.sqlite
            .query<Item, [string, string, number]>(
              `SELECT ${SEARCHED_ITEM}
               FROM items_search JOIN items ON items.rowid = items_search.rowid
               WHERE items_search MATCH ? AND items.account_id = ? AND items.deleted_at IS NULL
               ORDER BY items_search.rowid DESC LIMIT ?`,
            )
            .all(`"${key.replaceAll('"', '""')}"`, accountId, limit)
        : // The newest matches' row ids from the name index alone: sorting whole rows by modified_at held a 150,000-item account's search 1.3 s.
          this.sqlite
            .query<Item, [string, string, number]>(
              `SELECT ${ITEM} FROM items WHERE rowid IN (
                 SELECT rowid FROM items INDEXED BY items_live_name_key_idx
                  WHERE account_id = ? AND deleted_at IS NULL AND instr(name_key, ?) > 0 ORDER BY rowid DESC LIMIT ?)`,
            )
            .all(accountId, key, limit);
    return itemList([...exact, ...prefix, ...substring]);
  }

  /** Live files by last read, newest first. */
  recentFiles(accountId: string, limit: number): Item[] {
    return itemList(
      this.sqlite
        .query<Item, [string, number]>(
          `SELECT ${ITEM} FROM items
            WHERE account_id = ? AND type = 'file' AND deleted_at IS NULL ORDER BY accessed_at DESC, id DESC LIMIT ?`,
        )
        .all(accountId, limit),
    );
  }

  /** Counted from the indexes that hold only what is counted: left to itself the planner reads every row by name (4–400× slower). */
  liveCounts(accountId: string): { files: number; folders: number; starred: number } {
    const counts = this.sqlite
      .query<{ files: number | null; folders: number | null }, [string]>(
        `SELECT SUM(type = 'file') AS files, SUM(type = 'folder') AS folders FROM items INDEXED BY items_account_type_idx
         WHERE account_id = ? AND deleted_at IS NULL`,
      )
      .get(accountId)!;
    const starred = this.sqlite
      .query<{ n: number }, [string]>(
        'SELECT COUNT(*) AS n FROM items INDEXED BY items_starred_idx WHERE account_id = ? AND starred = 1 AND deleted_at IS NULL',
      )
      .get(accountId)!.n;
    return { files: counts.files ?? 0, folders: counts.folders ?? 0, starred };
  }

  /** A client's new modified time for an item: the folders above it get new ETags, so sync clients list them again. */
  setModified(id: string, at: number): void {
    this.changing(() => {
      const row = this.sqlite
        .query<Pick<Item, 'accountId' | 'parentId' | 'deletedAt'>, [number, string]>(
          'UPDATE items SET modified_at = ? WHERE id = ? RETURNING account_id AS accountId, parent_id AS parentId, deleted_at AS deletedAt',
        )
        .get(at, id);
      if (row && row.deletedAt === null) this.touchAncestors(row.accountId, row.parentId);
    });
  }

  rename(id: string, name: string): Item {
    const after = this.guard({ kind: 'place', itemId: id, name });
    return this.changing(() => {
      const row = item(
        this.sqlite
          .query<Item, [string, string, string]>(`UPDATE items SET name = ?, name_key = ? WHERE id = ? RETURNING ${ITEM}`)
          .get(name, nameKeyOf(name), id),
      )!;
      if (row.deletedAt === null) this.touchAncestors(row.accountId, row.parentId);
      after?.();
      return row;
    });
  }

  move(id: string, parentId: string | null, name: string): Item {
    const after = this.guard({ kind: 'place', itemId: id, parentId, name });
    return this.changing(() => {
      const before = this.parentOf(id);
      const row = item(
        this.sqlite
          .query<Item, [string | null, string, string, string]>(
            `UPDATE items SET parent_id = ?, name = ?, name_key = ? WHERE id = ? RETURNING ${ITEM}`,
          )
          .get(parentId, name, nameKeyOf(name), id),
      )!;
      // Thrown inside the savepoint, so the move is undone.
      if (row.type === 'folder' && before !== undefined && before !== parentId && !this.nests(parentId, id, before))
        throw badRequest(Messages.folderTooDeep);
      const bytes = row.deletedAt === null && before !== parentId ? weightOf(row) : 0;
      if (before !== undefined && before !== parentId) this.touchAncestors(row.accountId, before, -bytes);
      this.touchAncestors(row.accountId, parentId, bytes);
      after?.();
      return row;
    });
  }

  setStarred(id: string, starred: boolean): void {
    this.sqlite.query('UPDATE items SET starred = ? WHERE id = ?').run(starred ? 1 : 0, id);
  }

  /** New content of a file: object, size, type, times, and how and by whom it was written (`staged`: a library file's). */
  replaceContent(
    id: string,
    content: Pick<
      Item,
      'size' | 'mimeType' | 'storageKey' | 'wrappedKey' | 'keyId' | 'modifiedAt' | 'accessedAt' | 'contentSource' | 'contentAuthorId'
    >,
    staged?: StagedHostFile,
  ): Item {
    const after = this.guard({ kind: 'content', itemId: id, staged });
    return this.changing(() => {
      const before = this.sqlite.query<{ size: number }, [string]>('SELECT size FROM items WHERE id = ?').get(id)?.size ?? 0;
      const row = this.writeContent(id, content);
      if (row.deletedAt === null) this.touchAncestors(row.accountId, row.parentId, row.size - before);
      else if (row.deletedRootId !== row.id) this.touchTrashedFolders(row.parentId!, row.deletedRootId!, row.size - before);
      after?.();
      return row;
    });
  }

  /**
   * Marks new content of a file trashed inside a folder (a document saved, an upload finished meanwhile): the
   * folders trashed with it, up to the trash root, get its bytes and a new tree version, so a restore brings back
   * the right sizes and ETags that moved; the live folders above the root no longer count it.
   */
  private touchTrashedFolders(parentId: string, rootId: string, bytes: number): void {
    this.sqlite
      .query(
        `WITH RECURSIVE up(id) AS (SELECT ?1 UNION SELECT i.parent_id FROM items i JOIN up ON i.id = up.id WHERE i.id != ?2)
         UPDATE items SET tree_version = tree_version + 1, tree_size = tree_size + ?3 WHERE id IN (SELECT id FROM up) AND deleted_root_id = ?2`,
      )
      .run(parentId, rootId, bytes);
  }

  /**
   * A library file's ETag is its time and size (it has no storage key): a new content of it in the same millisecond
   * as the one before gets the next millisecond, so the ETag moves and sync clients fetch it.
   */
  private writeContent(id: string, content: Parameters<ItemsRepo['replaceContent']>[1]): Item {
    return item(
      this.sqlite
        .query<Item, SQLQueryBindings[]>(
          `UPDATE items SET size = ?1, mime_type = ?2, storage_key = ?3, wrapped_key = ?4, key_id = ?5,
             modified_at = CASE WHEN ?3 IS NULL AND storage_key IS NULL AND modified_at = ?6 THEN ?6 + 1 ELSE ?6 END, accessed_at = ?7,
             content_source = ?8, content_author_id = ?9
           WHERE id = ?10 RETURNING ${ITEM}`,
        )
        .get(
          content.size,
          content.mimeType,
          content.storageKey,
          content.wrappedKey,
          content.keyId,
          content.modifiedAt,
          content.accessedAt,
          content.contentSource,
          content.contentAuthorId,
          id,
        ),
    )!;
  }

  /** Writes read marks; a mark never moves accessedAt backwards. */
  markAccessed(marks: ReadonlyArray<readonly [id: string, at: number]>): void {
    const update = this.sqlite.query('UPDATE items SET accessed_at = ?1 WHERE id = ?2 AND accessed_at < ?1');
    this.sqlite.transaction(() => {
      for (const [id, at] of marks) update.run(at, id);
    })();
  }

  // ---- trash ----

  /** Marks a live item trashed as part of `rootId`'s trash entry; 0 when it was not live. */
  markTrashed(id: string, rootId: string, at: number): number {
    const mark = () =>
      this.sqlite
        .query<Gone, [number, string, string]>(
          `UPDATE items SET deleted_at = ?, deleted_root_id = ? WHERE id = ? AND deleted_at IS NULL ${GONE}`,
        )
        .get(at, rootId, id);
    // The members of a trashed folder go with it: only the trash root's parent sees a change (the root keeps its tree size for a restore).
    if (id !== rootId) return mark() ? 1 : 0;
    const after = this.guard({ kind: 'trash', itemId: id });
    return this.changing(() => {
      const row = mark();
      if (row) this.touchAncestors(row.accountId, row.parentId, -weightOf(row));
      if (row) after?.();
      return row ? 1 : 0;
    });
  }

  /**
   * At start-up: a trash or restore made in a request commits its batches one by one, and a crash between two left
   * members trashed under a root still live (hidden from the folder and from the trash), or items restored under a
   * folder still in the trash (unseen; a purge of that entry takes them along, takeBackRestored). Both are put back as before the request,
   * but for the roots a waiting job of `jobKinds` names: that job finishes them when it runs again.
   */
  settleInterruptedTrash(jobKinds: readonly string[]): number {
    const held = `SELECT r.value FROM jobs, json_each(jobs.payload, '$.ids') r
                   WHERE jobs.kind IN (SELECT value FROM json_each(?1)) AND jobs.status IN ('created', 'active')`;
    const kinds = JSON.stringify(jobKinds);
    let changed = this.sqlite
      .query(
        `UPDATE items SET deleted_at = NULL, deleted_root_id = NULL
          WHERE deleted_root_id IS NOT NULL AND deleted_root_id != id AND deleted_root_id NOT IN (${held})
            AND EXISTS (SELECT 1 FROM items r WHERE r.id = items.deleted_root_id AND r.deleted_at IS NULL)`,
      )
      .run(kinds).changes;
    // One level a round: a folder put back into the trash entry brings its own restored members next.
    for (;;) {
      const n = this.sqlite
        .query(
          `UPDATE items SET (deleted_at, deleted_root_id) = (SELECT p.deleted_at, p.deleted_root_id FROM items p WHERE p.id = items.parent_id)
            WHERE id IN (SELECT c.id FROM items p JOIN items c ON c.account_id = p.account_id AND c.parent_id = p.id AND c.deleted_at IS NULL
                          WHERE p.deleted_root_id IS NOT NULL AND p.deleted_at IS NOT NULL AND p.type = 'folder' AND p.deleted_root_id NOT IN (${held}))`,
        )
        .run(kinds).changes;
      if (n === 0) return changed;
      changed += n;
    }
  }

  /**
   * Items a restore in progress put back under a folder of `rootId`'s trash entry (members first, the root last) go back
   * into it, a level a round, so a permanent delete of the entry takes them along rather than leaving them under a
   * parent that is gone; returns how many.
   */
  takeBackRestored(rootId: string): number {
    let changed = 0;
    for (;;) {
      const n = this.sqlite
        .query(
          `UPDATE items SET (deleted_at, deleted_root_id) = (SELECT p.deleted_at, p.deleted_root_id FROM items p WHERE p.id = items.parent_id)
            WHERE deleted_at IS NULL
              AND parent_id IN (SELECT id FROM items WHERE deleted_root_id = ?1 AND deleted_at IS NOT NULL AND type = 'folder')`,
        )
        .run(rootId).changes;
      if (n === 0) return changed;
      changed += n;
    }
  }

  /** Items trashed with a trash root (the root excluded), at most `cap`. */
  trashSetIds(rootId: string, cap: number): string[] {
    return this.sqlite
      .query<{ id: string }, [string, number]>('SELECT id FROM items WHERE deleted_root_id = ?1 AND id != ?1 LIMIT ?2')
      .all(rootId, cap)
      .map((r) => r.id);
  }

  restoreMember(id: string, rootId: string): number {
    return this.sqlite
      .query('UPDATE items SET deleted_at = NULL, deleted_root_id = NULL WHERE id = ? AND deleted_root_id = ?')
      .run(id, rootId).changes;
  }

  /**
   * Puts a trash root back under `parentId` with `name`. At the root it always goes back: a tree nested deeper than
   * the limit before the limit existed fits nowhere else, and refusing it left it in the trash to be purged.
   */
  restoreRoot(id: string, parentId: string | null, name: string): Item {
    const after = this.guard({ kind: 'restore', itemId: id, parentId, name });
    return this.changing(() => {
      const row = item(
        this.sqlite
          .query<Item, [string | null, string, string, string]>(
            `UPDATE items SET deleted_at = NULL, deleted_root_id = NULL, parent_id = ?, name = ?, name_key = ?
              WHERE id = ? RETURNING ${ITEM}`,
          )
          .get(parentId, name, nameKeyOf(name), id),
      )!;
      if (row.type === 'folder' && parentId !== null && !this.nests(parentId, id)) throw badRequest(Messages.folderTooDeep);
      this.touchAncestors(row.accountId, parentId, weightOf(row));
      after?.();
      return row;
    });
  }

  /** Trash roots of an account in fileid (seq) order after `afterSeq`: the Nextcloud clients' trash listing. */
  trashRootsBySeq(accountId: string, afterSeq: number, limit: number): Item[] {
    return itemList(
      this.sqlite
        .query<Item, [string, number, number]>(
          `SELECT ${ITEM} FROM items WHERE account_id = ? AND deleted_at IS NOT NULL AND deleted_root_id = id AND seq > ? ORDER BY seq LIMIT ?`,
        )
        .all(accountId, afterSeq, limit),
    );
  }

  /** The trash root of an account with this fileid (seq), if any. */
  trashRootBySeq(accountId: string, seq: number): Item | null {
    return item(
      this.sqlite
        .query<Item, [number, string]>(
          `SELECT ${ITEM} FROM items WHERE seq = ? AND account_id = ? AND deleted_at IS NOT NULL AND deleted_root_id = id`,
        )
        .get(seq, accountId),
    );
  }

  /** The fileids (seqs) of these items, live or in the trash; a purged one is missing. */
  seqsOf(ids: readonly string[]): Map<string, number> {
    if (ids.length === 0) return new Map();
    const rows = this.sqlite
      .query<{ id: string; seq: number }, [string]>('SELECT id, seq FROM items WHERE id IN (SELECT value FROM json_each(?))')
      .all(JSON.stringify(ids));
    return new Map(rows.map((r) => [r.id, r.seq]));
  }

  /** The live item with this fileid (seq), in any account: its owner's tree is checked by the caller. */
  liveBySeq(seq: number): Item | null {
    return item(this.sqlite.query<Item, [number]>(`SELECT ${ITEM} FROM items WHERE seq = ? AND deleted_at IS NULL`).get(seq));
  }

  // Anything trashed has its trash root trashed too; asking for a root reads items_trash_idx, not every row.
  hasTrash(accountId: string): boolean {
    return (
      this.sqlite
        .query<{ x: number }, [string]>(
          'SELECT 1 AS x FROM items WHERE account_id = ? AND deleted_at IS NOT NULL AND deleted_root_id = id LIMIT 1',
        )
        .get(accountId) !== null
    );
  }

  trashRoot(accountId: string, rootId: string): PurgedItem | null {
    return this.sqlite
      .query<PurgedItem, [string, string]>(
        `SELECT ${PURGED} FROM items
          WHERE id = ? AND account_id = ? AND deleted_root_id = id`,
      )
      .get(rootId, accountId);
  }

  trashSetPage(rootId: string, limit: number): PurgedItem[] {
    return this.sqlite
      .query<PurgedItem, [string, number]>(`SELECT ${PURGED} FROM items WHERE deleted_root_id = ?1 AND id != ?1 LIMIT ?2`)
      .all(rootId, limit);
  }

  /** Live items at an account's root, a page at a time (deleting the account). */
  liveRootIds(accountId: string, limit: number): string[] {
    return this.sqlite
      .query<{ id: string }, [string, number]>(
        'SELECT id FROM items WHERE account_id = ? AND parent_id IS NULL AND deleted_at IS NULL LIMIT ?',
      )
      .all(accountId, limit)
      .map((r) => r.id);
  }

  /** Trash roots of an account, a page at a time (emptying the trash). */
  trashRootIds(accountId: string, trashedUpTo: number, limit: number): string[] {
    return this.sqlite
      .query<{ id: string }, [string, number, number]>(
        'SELECT id FROM items WHERE account_id = ? AND deleted_at IS NOT NULL AND deleted_root_id = id AND deleted_at <= ? LIMIT ?',
      )
      .all(accountId, trashedUpTo, limit)
      .map((r) => r.id);
  }

  /** Trash roots of every account trashed before `cutoff`. */
  expiredTrashRoots(cutoff: number, limit: number): Array<Pick<Item, 'id' | 'accountId'>> {
    return this.sqlite
      .query<Pick<Item, 'id' | 'accountId'>, [number, number]>(
        'SELECT id, account_id AS accountId FROM items WHERE deleted_at IS NOT NULL AND deleted_root_id = id AND deleted_at < ? LIMIT ?',
      )
      .all(cutoff, limit);
  }

  delete(id: string): void {
    this.changing(() => this.touchIfLive(this.sqlite.query<Gone, [string]>(`DELETE FROM items WHERE id = ? ${GONE}`).get(id)));
  }

  /** Deletes a trashed row for good (emptying the trash): what the guard keeps for it (a library's host file) goes too. */
  purge(id: string): void {
    const after = this.guard({ kind: 'purge', itemId: id });
    this.changing(() => {
      this.touchIfLive(this.sqlite.query<Gone, [string]>(`DELETE FROM items WHERE id = ? ${GONE}`).get(id));
      after?.();
    });
  }

  /** A deleted row that was live (not a trash purge) changed its folder. */
  private touchIfLive(gone: Gone | null): void {
    if (gone && gone.deletedAt === null) this.touchAncestors(gone.accountId, gone.parentId, -weightOf(gone));
  }

  // ---- whole-instance walks (orphans, doctor, keys) ----

  /** Which of the keys a row (a file, one of its versions, a library file's content: its thumbnails) points at. */
  referencedKeys(keys: readonly string[]): Set<string> {
    return new Set(
      this.sqlite
        .query<{ storageKey: string }, [string]>(
          `SELECT storage_key AS storageKey FROM items WHERE storage_key IN (SELECT value FROM json_each(?1))
           UNION ALL SELECT storage_key FROM file_versions WHERE storage_key IN (SELECT value FROM json_each(?1))
           UNION ALL SELECT content_key FROM library_entries WHERE content_key IN (SELECT value FROM json_each(?1))`,
        )
        .all(JSON.stringify(keys))
        .map((r) => r.storageKey),
    );
  }

  isKeyReferenced(key: string): boolean {
    return (
      this.sqlite
        .query<{ id: string }, [string]>(
          `SELECT id FROM items WHERE storage_key = ?1 UNION ALL SELECT id FROM file_versions WHERE storage_key = ?1
           UNION ALL SELECT item_id FROM library_entries WHERE content_key = ?1`,
        )
        .get(key) !== null
    );
  }

  countFiles(opts: { withKey?: boolean } = {}): number {
    return this.sqlite
      .query<{ n: number }, []>(
        `SELECT COUNT(*) AS n FROM items WHERE type = 'file' AND ${STORED}${opts.withKey ? ' AND storage_key IS NOT NULL' : ''}`,
      )
      .get()!.n;
  }

  /** File rows in id order, a page at a time. */
  filePage(afterId: string, limit: number, opts: { withKey?: boolean } = {}): Item[] {
    return itemList(
      this.sqlite
        .query<Item, [string, number]>(
          `SELECT ${ITEM} FROM items
            WHERE id > ? AND type = 'file' AND ${STORED}${opts.withKey ? ' AND storage_key IS NOT NULL' : ''} ORDER BY id LIMIT ?`,
        )
        .all(afterId, limit),
    );
  }

  /** Stored objects (files' and versions') in key order after `afterKey`, each with its plaintext size: what a storage migration copies. */
  storedObjectPage(afterKey: string, limit: number): Array<{ storageKey: string; size: number }> {
    return this.sqlite
      .query<{ storageKey: string; size: number }, [string, number]>(
        `SELECT storage_key AS storageKey, size FROM (
           SELECT storage_key, size FROM items WHERE storage_key > ?1
           UNION ALL SELECT storage_key, size FROM file_versions WHERE storage_key > ?1)
         ORDER BY storage_key LIMIT ?2`,
      )
      .all(afterKey, limit);
  }

  /** How many objects rows (files and versions) point at (each key is unique), and their plaintext bytes. */
  storedObjectTotals(): { objects: number; bytes: number } {
    return this.sqlite
      .query<{ objects: number; bytes: number }, []>(
        `SELECT COUNT(*) AS objects, COALESCE(SUM(size), 0) AS bytes FROM (
           SELECT size FROM items WHERE storage_key IS NOT NULL UNION ALL SELECT size FROM file_versions)`,
      )
      .get()!;
  }

  /** Any row by id, whatever its account or state. */
  find(id: string): Item | null {
    return item(this.sqlite.query<Item, [string]>(`SELECT ${ITEM} FROM items WHERE id = ?`).get(id));
  }

  /** Deletes a row only while it still points at `storageKey`. */
  deleteIfKey(id: string, storageKey: string): boolean {
    return this.changing(() => {
      const gone = this.sqlite
        .query<Gone, [string, string]>(`DELETE FROM items WHERE id = ? AND storage_key = ? ${GONE}`)
        .get(id, storageKey);
      this.touchIfLive(gone);
      return gone !== null;
    });
  }

  /** Live items whose folder row is gone (no listing reaches them), the first `limit` of them and how many in all: `coffer doctor`. */
  unreachable(limit: number): { count: number; items: Array<{ id: string; name: string; accountId: string }> } {
    const where = `FROM items c WHERE c.deleted_at IS NULL AND c.parent_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM items p WHERE p.id = c.parent_id)`;
    const count = this.sqlite.query<{ n: number }, []>(`SELECT count(*) AS n ${where}`).get()?.n ?? 0;
    const items = count
      ? this.sqlite
          .query<{ id: string; name: string; accountId: string }, [number]>(
            `SELECT c.id, c.name, c.account_id AS accountId ${where} LIMIT ?`,
          )
          .all(limit)
      : [];
    return { count, items };
  }

  /** Of the live items whose folder row is gone, `limit` after `afterId` in id order: what `coffer doctor --fix` recovers. */
  unreachablePage(afterId: string, limit: number): Item[] {
    return itemList(
      this.sqlite
        .query<Item, [string, number]>(
          `SELECT ${ITEM} FROM items c WHERE c.id > ? AND c.deleted_at IS NULL AND c.parent_id IS NOT NULL
             AND NOT EXISTS (SELECT 1 FROM items p WHERE p.id = c.parent_id) ORDER BY c.id LIMIT ?`,
        )
        .all(afterId, limit),
    );
  }

  /**
   * The account root's size counted again from its top-level live items (what a move out of a folder that is gone
   * cannot know it held), and its version moved; inside the caller's transaction.
   */
  recountRoot(accountId: string): void {
    this.sqlite
      .query(
        `INSERT INTO tree_versions (account_id, version, size)
           VALUES (?1, 1, (SELECT coalesce(sum(CASE WHEN type = 'file' THEN size ELSE tree_size END), 0)
                             FROM items WHERE account_id = ?1 AND parent_id IS NULL AND deleted_at IS NULL))
         ON CONFLICT (account_id) DO UPDATE SET version = version + 1, size = excluded.size`,
      )
      .run(accountId);
  }

  /** How many rows (files and versions) each master key wraps. */
  countByKeyId(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const r of this.sqlite
      .query<{ keyId: string; n: number }, []>(
        `SELECT key_id AS keyId, COUNT(*) AS n FROM (
           SELECT key_id FROM items WHERE key_id IS NOT NULL UNION ALL SELECT key_id FROM file_versions) GROUP BY key_id`,
      )
      .all()) {
      out[r.keyId] = r.n;
    }
    return out;
  }

  countNotUnderKey(keyId: string): number {
    return this.sqlite
      .query<{ n: number }, [string]>(
        `SELECT (SELECT COUNT(*) FROM items WHERE wrapped_key IS NOT NULL AND (key_id IS NULL OR key_id != ?1))
              + (SELECT COUNT(*) FROM file_versions WHERE key_id != ?1) AS n`,
      )
      .get(keyId)!.n;
  }

  /** Rows (files and versions, whose ids never collide) whose data key is not wrapped by `keyId`, in id order. */
  notUnderKeyPage(keyId: string, afterId: string, limit: number): Array<{ id: string; wrappedKey: string }> {
    return this.sqlite
      .query<{ id: string; wrappedKey: string }, [string, string, number]>(
        `SELECT id, wrapped_key AS wrappedKey FROM items
          WHERE id > ?1 AND wrapped_key IS NOT NULL AND (key_id IS NULL OR key_id != ?2)
         UNION ALL SELECT id, wrapped_key FROM file_versions WHERE id > ?1 AND key_id != ?2
         ORDER BY id LIMIT ?3`,
      )
      .all(afterId, keyId, limit);
  }

  /** Compare-and-set of a re-wrapped data key (of a file or a version): a row rewritten meanwhile is left alone. */
  rewrap(id: string, from: string, to: string, keyId: string): number {
    const file = this.sqlite
      .query('UPDATE items SET wrapped_key = ?, key_id = ? WHERE id = ? AND wrapped_key = ?')
      .run(to, keyId, id, from);
    if (file.changes > 0) return file.changes;
    return this.sqlite
      .query('UPDATE file_versions SET wrapped_key = ?, key_id = ? WHERE id = ? AND wrapped_key = ?')
      .run(to, keyId, id, from).changes;
  }

  /** Every folder of an account, live and trashed: `coffer export` builds paths from them. */
  exportFolders(accountId: string): ExportFolder[] {
    return this.sqlite
      .query<ExportFolder, [string]>(
        `SELECT id, parent_id AS parentId, name, modified_at AS modifiedAt, deleted_at AS deletedAt
         FROM items WHERE account_id = ? AND type = 'folder'`,
      )
      .all(accountId);
  }

  /** An account's files after `afterSeq`, in storage order, a page at a time (`coffer export`). */
  exportFiles(accountId: string, afterSeq: number, limit: number, includeTrash: boolean): ExportFile[] {
    return this.sqlite
      .query<ExportFile, [string, number, number]>(
        `SELECT seq, id, parent_id AS parentId, name, size, modified_at AS modifiedAt, deleted_at AS deletedAt,
                storage_key AS storageKey, wrapped_key AS wrappedKey
         FROM items WHERE account_id = ? AND type = 'file' AND seq > ? AND ${STORED} ${includeTrash ? '' : 'AND deleted_at IS NULL'}
         ORDER BY seq LIMIT ?`,
      )
      .all(accountId, afterSeq, limit);
  }

  exportTotals(accountId: string, includeTrash: boolean): { files: number; bytes: number } {
    return this.sqlite
      .query<{ files: number; bytes: number }, [string]>(
        `SELECT COUNT(*) AS files, COALESCE(SUM(size), 0) AS bytes FROM items
         WHERE account_id = ? AND type = 'file' AND ${STORED} ${includeTrash ? '' : 'AND deleted_at IS NULL'}`,
      )
      .get(accountId)!;
  }
}
