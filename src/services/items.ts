import type { Database } from 'bun:sqlite';
import type { CoreContext } from '../context.ts';
import { badRequest, conflict, Messages, notFound } from '../errors.ts';
import { newId } from '../lib/ids.ts';
import {
  ItemRepo,
  ITEM_COLUMNS,
  type ItemRow,
  type ListedRow,
  type ListScope,
  type PagePosition,
  type SortField,
  type SortOrder,
} from '../db/repos/items.ts';
import { PageCache } from './page-cache.ts';
import { AccessTracker } from './access.ts';
import { FileEvents, FileEventType } from './file-events.ts';
import type { AuditService } from './audit.ts';
import { nameKeyOf } from './names.ts';
import type { Principal } from './principal.ts';
import { shareLinkCount, shareStatusOf, type ShareStatus, leaveSharesOutside } from './share-status.ts';

/** An item as the API returns it (SPEC "Item"). */
export interface ItemView {
  id: string;
  name: string;
  type: 'file' | 'folder';
  size: number | null;
  mimeType: string | null;
  parentId: string | null;
  starred: boolean;
  shared: boolean;
  modified: string;
  accessedAt: string;
  sharedAt: string | null;
  expiresAt: string | null;
  deletedAt?: string;
}

export interface ListQuery {
  sortBy: SortField;
  order: SortOrder;
  limit: number;
  cursor?: string;
}

export interface Page {
  items: ItemView[];
  /** Opaque; null after the last page. */
  nextCursor: string | null;
}

const iso = (ms: number) => new Date(ms).toISOString();

export function toItemView(row: ListedRow, share: ShareStatus | undefined): ItemView {
  const view: ItemView = {
    id: row.id,
    name: row.name,
    type: row.type,
    size: row.type === 'folder' ? null : row.size,
    mimeType: row.type === 'folder' ? null : row.mime_type,
    parentId: row.parent_id,
    starred: Boolean(row.starred),
    shared: share !== undefined,
    modified: iso(row.modified_at),
    accessedAt: iso(row.accessed_at),
    sharedAt: share ? iso(share.sharedAt) : null,
    expiresAt: share?.expiresAt != null ? iso(share.expiresAt) : null,
  };
  if (row.deleted_at !== null) view.deletedAt = iso(row.deleted_at);
  return view;
}

function encodeCursor(sort: SortField, order: SortOrder, pos: PagePosition): string {
  return Buffer.from(JSON.stringify([sort, order, pos.type, pos.value, pos.id])).toString('base64url');
}

function decodeCursor(text: string, sort: SortField, order: SortOrder): PagePosition {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    throw badRequest(Messages.invalidCursor);
  }
  if (!Array.isArray(parsed) || parsed.length !== 5) throw badRequest(Messages.invalidCursor);
  const [s, o, type, value, id] = parsed as unknown[];
  const valueOk = sort === 'name' ? typeof value === 'string' : typeof value === 'number' && Number.isFinite(value);
  if (s !== sort || o !== order || (type !== 'file' && type !== 'folder') || !valueOk || typeof id !== 'string') {
    throw badRequest(Messages.invalidCursor);
  }
  return { type, value: value as string | number, id };
}

const SEARCH_MAX_LENGTH = 200;
// Candidates read per match class before ranking; a class larger than this ranks its newest-inserted rows.
const SEARCH_CANDIDATES = 2000;

/** The file tree: listing, search, info, folders, rename, move, star. Items belong to the account. */
export class ItemService {
  readonly repo: ItemRepo;
  readonly access: AccessTracker;
  readonly events: FileEvents;
  private readonly sqlite: Database;
  private readonly pages: PageCache<{ page: Page; folder: ItemRow | null }>;

  constructor(
    private readonly ctx: CoreContext,
    audit: AuditService,
  ) {
    this.sqlite = ctx.db.$client;
    this.repo = new ItemRepo(this.sqlite);
    this.access = new AccessTracker(this.sqlite, ctx.clock);
    this.events = new FileEvents(ctx.hub, audit);
    this.pages = new PageCache(this.sqlite, (cached) => cached.page.items.length);
    ctx.hub.onClose(() => this.access.stop());
  }

  /** API views of rows, with their share status. */
  views(accountId: string, rows: ListedRow[]): ItemView[] {
    const shares = shareStatusOf(
      this.sqlite,
      accountId,
      rows.map((r) => r.id),
    );
    return rows.map((r) => toItemView(r, shares.get(r.id)));
  }

  view(accountId: string, row: ItemRow): ItemView {
    return this.views(accountId, [row])[0]!;
  }

  /** A live item of the account, else 404 (another account's item is indistinguishable from none). */
  requireLive(principal: Principal, id: string): ItemRow {
    const row = this.repo.getLive(principal.accountId, id);
    if (!row) throw notFound(Messages.itemNotFound);
    return row;
  }

  /** Live items for every id (deduplicated, in request order), else 404. */
  requireLiveMany(principal: Principal, ids: readonly string[]): ItemRow[] {
    const unique = [...new Set(ids)];
    const rows = this.repo.getMany(principal.accountId, unique).filter((r) => r.deleted_at === null);
    if (rows.length !== unique.length) throw notFound(Messages.itemNotFound);
    const byId = new Map(rows.map((r) => [r.id, r]));
    return unique.map((id) => byId.get(id)!);
  }

  /** The target folder of a create, upload, move or copy: null is the root; else a live folder, or 404. */
  requireFolder(principal: Principal, parentId: string | null | undefined): ItemRow | null {
    if (parentId === null || parentId === undefined || parentId === '') return null;
    const row = this.repo.getLive(principal.accountId, parentId);
    if (!row || row.type !== 'folder') throw notFound(Messages.folderNotFound);
    return row;
  }

  /** Any list: one keyset page of `scope`, folders first (also used by the shared list). */
  listScope(accountId: string, scope: ListScope, q: ListQuery): Page {
    const key = JSON.stringify([accountId, scope.where, scope.params, q.sortBy, q.order, q.limit, q.cursor ?? null]);
    return this.pages.get(key, () => ({ page: this.buildPage(accountId, scope, q), folder: null })).page;
  }

  /** GET /api/files: a folder's live children (root when parentId is absent); opening a folder marks it read. */
  list(principal: Principal, q: ListQuery & { parentId?: string | null }): Page {
    const sortBy = q.sortBy === 'deletedAt' ? 'modified' : q.sortBy;
    const { accountId } = principal;
    const key = JSON.stringify([accountId, 'folder', q.parentId || null, sortBy, q.order, q.limit, q.cursor ?? null]);
    // The folder check is cached with the page: both hold until the database changes.
    const { page, folder } = this.pages.get(key, () => {
      const folder = this.requireFolder(principal, q.parentId);
      const scope = { where: 'account_id = ? AND parent_id IS ? AND deleted_at IS NULL', params: [accountId, folder?.id ?? null] };
      return { page: this.buildPage(accountId, scope, { ...q, sortBy }), folder };
    });
    if (folder) this.access.touch([folder]);
    return page;
  }

  private buildPage(accountId: string, scope: ListScope, q: ListQuery): Page {
    const after = q.cursor ? decodeCursor(q.cursor, q.sortBy, q.order) : null;
    const { rows, hasMore } = this.repo.page(scope, { sort: q.sortBy, order: q.order, limit: q.limit, after });
    const last = rows[rows.length - 1];
    const nextCursor =
      hasMore && last
        ? encodeCursor(q.sortBy, q.order, { type: last.type, value: this.repo.sortValue(last, q.sortBy), id: last.id })
        : null;
    return { items: this.views(accountId, rows), nextCursor };
  }

  listStarred(principal: Principal, q: ListQuery): Page {
    const sortBy = q.sortBy === 'deletedAt' ? 'modified' : q.sortBy;
    return this.listScope(
      principal.accountId,
      { where: 'account_id = ? AND starred = 1 AND deleted_at IS NULL', params: [principal.accountId] },
      { ...q, sortBy },
    );
  }

  /** GET /api/files/shared: live items in a share (a link's root, or added with link-parent-share). */
  listShared(principal: Principal, q: ListQuery): Page {
    const sortBy = q.sortBy === 'deletedAt' ? 'modified' : q.sortBy;
    return this.listScope(
      principal.accountId,
      { where: 'account_id = ? AND deleted_at IS NULL AND id IN (SELECT item_id FROM share_items)', params: [principal.accountId] },
      { ...q, sortBy },
    );
  }

  /** The trash: the roots of what was trashed (a trashed folder's contents are restored with it). */
  listTrash(principal: Principal, q: ListQuery): Page {
    return this.listScope(
      principal.accountId,
      { where: 'account_id = ? AND deleted_at IS NOT NULL AND deleted_root_id = id', params: [principal.accountId] },
      q,
    );
  }

  stats(principal: Principal): { totalFiles: number; totalFolders: number; sharedCount: number; starredCount: number } {
    const counts = this.sqlite
      .query<{ files: number | null; folders: number | null }, [string]>(
        `SELECT SUM(type = 'file') AS files, SUM(type = 'folder') AS folders FROM items WHERE account_id = ? AND deleted_at IS NULL`,
      )
      .get(principal.accountId)!;
    const starred = this.sqlite
      .query<{ n: number }, [string]>('SELECT COUNT(*) AS n FROM items WHERE account_id = ? AND starred = 1 AND deleted_at IS NULL')
      .get(principal.accountId)!.n;
    return {
      totalFiles: counts.files ?? 0,
      totalFolders: counts.folders ?? 0,
      sharedCount: shareLinkCount(this.sqlite, principal.accountId),
      starredCount: starred,
    };
  }

  /**
   * Case-insensitive substring search on names, live items only (COMPAT): exact matches first, then
   * prefix, then other substrings, each newest first. `%` and `_` are ordinary characters: the text
   * never reaches a LIKE pattern. Substrings come from the trigram index (three characters or more).
   */
  search(principal: Principal, input: { q: string; limit?: number }): ItemView[] {
    const text = input.q.normalize('NFC').trim();
    if (text.length === 0 || text.length > SEARCH_MAX_LENGTH) throw badRequest(Messages.invalidSearch);
    const limit = Math.min(100, Math.max(1, input.limit ?? 100));
    const key = nameKeyOf(text);
    const accountId = principal.accountId;
    const found = new Map<string, ItemRow>();
    const add = (rows: ItemRow[]) => rows.forEach((r) => found.set(r.id, r));

    add(
      this.sqlite
        .query<ItemRow, [string, string, number]>(
          `SELECT ${ITEM_COLUMNS} FROM items WHERE account_id = ? AND name_key = ? AND deleted_at IS NULL LIMIT ?`,
        )
        .all(accountId, key, SEARCH_CANDIDATES),
    );
    add(
      this.sqlite
        .query<ItemRow, [string, string, string, number]>(
          `SELECT ${ITEM_COLUMNS} FROM items WHERE account_id = ? AND name_key > ? AND name_key < ? AND deleted_at IS NULL LIMIT ?`,
        )
        .all(accountId, key, `${key}\u{10FFFF}`, SEARCH_CANDIDATES),
    );
    if ([...key].length >= 3) {
      add(
        this.sqlite
          .query<ItemRow, [string, string, number]>(
            `SELECT ${ITEM_COLUMNS.split(', ')
              .map((c) => `items.${c}`)
              .join(', ')}
             FROM items_search JOIN items ON items.rowid = items_search.rowid
             WHERE items_search MATCH ? AND items.account_id = ? AND items.deleted_at IS NULL
             ORDER BY items_search.rowid DESC LIMIT ?`,
          )
          .all(`"${key.replaceAll('"', '""')}"`, accountId, SEARCH_CANDIDATES),
      );
    } else {
      add(
        this.sqlite
          .query<ItemRow, [string, string, number]>(
            `SELECT ${ITEM_COLUMNS} FROM items WHERE account_id = ? AND deleted_at IS NULL AND instr(name_key, ?) > 0 ORDER BY modified_at DESC LIMIT ?`,
          )
          .all(accountId, key, SEARCH_CANDIDATES),
      );
    }
    const rank = (r: ItemRow) => (r.name_key === key ? 0 : r.name_key.startsWith(key) ? 1 : 2);
    const ranked = [...found.values()]
      .filter((r) => r.name_key.includes(key))
      .sort((a, b) => rank(a) - rank(b) || b.modified_at - a.modified_at || (a.id < b.id ? -1 : 1))
      .slice(0, limit);
    return this.views(accountId, ranked);
  }

  /** Files by last read, newest first; folders and trash excluded. Pending access marks are written first. */
  recent(principal: Principal, input: { limit?: number }): ItemView[] {
    this.access.flush();
    const limit = Math.min(50, Math.max(1, input.limit ?? 10));
    const rows = this.sqlite
      .query<ItemRow, [string, number]>(
        `SELECT ${ITEM_COLUMNS} FROM items WHERE account_id = ? AND type = 'file' AND deleted_at IS NULL ORDER BY accessed_at DESC, id DESC LIMIT ?`,
      )
      .all(principal.accountId, limit);
    return this.views(principal.accountId, rows);
  }

  /** GET /api/files/:id/info; reading details does not mark the item as read. */
  info(principal: Principal, id: string): Record<string, unknown> {
    const row = this.repo.get(principal.accountId, id);
    if (!row) throw notFound(Messages.itemNotFound);
    const base = {
      id: row.id,
      name: row.name,
      type: row.type,
      size: row.type === 'folder' ? null : row.size,
      modified: iso(row.modified_at),
      accessedAt: iso(row.accessed_at),
    };
    if (row.type === 'folder') {
      return {
        ...base,
        parentId: row.parent_id,
        folderInfo: row.deleted_at === null ? this.repo.folderTotals(row.id) : this.trashedFolderTotals(row.id),
      };
    }
    const v = this.view(principal.accountId, row);
    return { ...base, mimeType: row.mime_type, shared: v.shared, sharedAt: v.sharedAt, expiresAt: v.expiresAt, parentId: row.parent_id };
  }

  private trashedFolderTotals(rootId: string): { totalSize: number; fileCount: number; folderCount: number } {
    const r = this.sqlite
      .query<{ total: number | null; files: number | null; folders: number | null }, [string, string]>(
        `SELECT SUM(size) AS total, SUM(type = 'file') AS files, SUM(type = 'folder') AS folders FROM items WHERE deleted_root_id = ? AND id != ?`,
      )
      .get(rootId, rootId)!;
    return { totalSize: r.total ?? 0, fileCount: r.files ?? 0, folderCount: r.folders ?? 0 };
  }

  createFolder(
    principal: Principal,
    input: { name: string; parentId?: string | null },
  ): { id: string; name: string; type: 'folder'; size: null; modified: string } {
    const row = this.sqlite
      .transaction(() => {
        const parent = this.requireFolder(principal, input.parentId);
        return this.insertFolder(principal.accountId, parent?.id ?? null, input.name);
      })
      .immediate();
    this.events.item(principal, FileEventType.folderCreated, row);
    return { id: row.id, name: row.name, type: 'folder', size: null, modified: iso(row.modified_at) };
  }

  /** A new folder row under `parentId`, with a free display name; inside the caller's transaction. */
  insertFolder(accountId: string, parentId: string | null, name: string): ItemRow {
    const now = this.ctx.clock.now();
    return this.repo.insert({
      id: newId(),
      accountId,
      parentId,
      type: 'folder',
      name: this.repo.uniqueName(accountId, parentId, name),
      size: 0,
      mimeType: null,
      storageKey: null,
      wrappedKey: null,
      keyId: null,
      starred: false,
      modifiedAt: now,
      accessedAt: now,
      createdAt: now,
    });
  }

  /** Rename in place; another live sibling with the name (any case) is 409. */
  rename(
    principal: Principal,
    input: { id: string; name: string },
  ): { id: string; name: string; type: 'file' | 'folder'; modified: string } {
    const { row, oldName } = this.sqlite
      .transaction(() => {
        const item = this.requireLive(principal, input.id);
        const clash = this.repo.liveByName(principal.accountId, item.parent_id, input.name);
        if (clash && clash.id !== item.id) throw conflict(Messages.nameTaken);
        const updated = this.sqlite
          .query<ItemRow, [string, string, string]>(`UPDATE items SET name = ?, name_key = ? WHERE id = ? RETURNING ${ITEM_COLUMNS}`)
          .get(input.name, nameKeyOf(input.name), item.id)!;
        return { row: updated, oldName: item.name };
      })
      .immediate();
    if (oldName !== row.name) this.events.item(principal, FileEventType.renamed, row, { oldName });
    return { id: row.id, name: row.name, type: row.type, modified: iso(row.modified_at) };
  }

  /** Moves items into a folder (or the root); colliding names get `(n)`; a folder never moves below itself. */
  move(principal: Principal, input: { ids: string[]; parentId?: string | null }): { message: string } {
    const moved = this.sqlite
      .transaction(() => {
        const rows = this.requireLiveMany(principal, input.ids);
        const target = this.requireFolder(principal, input.parentId);
        const targetId = target?.id ?? null;
        if (targetId !== null && this.repo.isWithin(new Set(rows.filter((r) => r.type === 'folder').map((r) => r.id)), targetId)) {
          throw badRequest(Messages.moveIntoSelf);
        }
        const out: ItemRow[] = [];
        const update = this.sqlite.query<ItemRow, [string | null, string, string, string]>(
          `UPDATE items SET parent_id = ?, name = ?, name_key = ? WHERE id = ? RETURNING ${ITEM_COLUMNS}`,
        );
        for (const row of rows) {
          if (row.parent_id === targetId) continue;
          const name = this.repo.uniqueName(principal.accountId, targetId, row.name);
          out.push(update.get(targetId, name, nameKeyOf(name), row.id)!);
        }
        leaveSharesOutside(
          this.sqlite,
          out.map((r) => r.id),
        );
        return out;
      })
      .immediate();
    for (const row of moved) this.events.item(principal, FileEventType.moved, row);
    return { message: `Moved ${moved.length} item${moved.length === 1 ? '' : 's'}` };
  }

  star(principal: Principal, input: { ids: string[]; starred: boolean }): { message: string } {
    const rows = this.sqlite
      .transaction(() => {
        const items = this.requireLiveMany(principal, input.ids);
        const update = this.sqlite.query('UPDATE items SET starred = ? WHERE id = ?');
        for (const row of items) update.run(input.starred ? 1 : 0, row.id);
        return items;
      })
      .immediate();
    for (const row of rows) this.events.item(principal, FileEventType.starred, row, { starred: input.starred });
    return {
      message: input.starred
        ? `Starred ${rows.length} item${rows.length === 1 ? '' : 's'}`
        : `Unstarred ${rows.length} item${rows.length === 1 ? '' : 's'}`,
    };
  }
}
