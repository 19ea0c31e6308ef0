import type { Clock } from '../../clock.ts';
import type { ItemInfo, PhotoDetails } from '../../contract/files.ts';
import { type Item, type ItemsRepo, type ListScope, nameKeyOf, searchKeyOf } from '../../db/repos/items.ts';
import type { Transactions } from '../../db/repos/index.ts';
import type { MembersRepo } from '../../db/repos/members.ts';
import type { TeamFoldersRepo } from '../../db/repos/team-folders.ts';
import type { LibrariesRepo } from '../../db/repos/libraries.ts';
import type { SharesRepo } from '../../db/repos/shares.ts';
import type { ThumbnailsRepo } from '../../db/repos/thumbnails.ts';
import { badRequest, conflict, forbidden, Messages, notFound } from '../../errors.ts';
import { newId } from '../../lib/ids.ts';
import { type ChangeBy, ChangeKinds, type ChangeLog } from '../changes/change-log.ts';
import type { AccessTracker } from './access.ts';
import { type FileEventName, FileEventType, type FileEvents } from './file-events.ts';
import type { Item as ItemView } from '../../contract/files.ts';
import { iso, type ItemViews } from './item-views.ts';
import { typedName } from './names.ts';
import type { PageCache } from './page-cache.ts';
import type { Principal } from '../identity/principal.ts';
import type { PageQuery, Tree } from './tree.ts';

export interface Page {
  items: ItemView[];
  /** Opaque; null after the last page. */
  nextCursor: string | null;
}

const SEARCH_MAX_LENGTH = 200;
// Candidates read per match class before ranking; a class larger than this ranks its newest-inserted rows.
const SEARCH_CANDIDATES = 2000;
// Shares searched with includeShared; an account with more searches its newest ones.
const SHARED_SEARCH_ROOTS = 100;

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

const RECOVERED_FOLDER = 'Recovered items';
const RECOVER_BATCH = 500;

/** Where `recoverUnreachable` put one account's items out of reach. */
export interface RecoveredItems {
  accountId: string;
  folderId: string;
  folderName: string;
  items: Array<{ id: string; name: string; type: 'file' | 'folder' }>;
}

/** Live lists have no deletion time to sort by: they sort by modification instead. */
const liveSort = (q: PageQuery): PageQuery => (q.sortBy === 'deletedAt' ? { ...q, sortBy: 'modified' } : q);

export interface ItemDeps {
  clock: Clock;
  transactions: Transactions;
  items: ItemsRepo;
  shareLinks: SharesRepo;
  members: MembersRepo;
  teamFolders: TeamFoldersRepo;
  libraries: LibrariesRepo;
  tree: Tree;
  views: ItemViews;
  access: AccessTracker;
  events: FileEvents;
  changes: ChangeLog;
  pages: PageCache<{ page: Page; folder: Item | null }>;
  thumbnails: ThumbnailsRepo;
}

/** Moves items across a library's edge: the copy service, given at composition (it uses this service itself). */
export interface LibraryCrossing {
  crossesLibraries(ids: readonly string[], parentId: string | null): boolean;
  moveAcross(principal: Principal, ids: readonly string[], parentId: string | null): Promise<Item[]>;
}

/** The file tree as users see it: listing, search, info, folders, rename, move, star. Items belong to the account. */
export class ItemService {
  private across: LibraryCrossing | null = null;
  private readonly movedListeners: Array<(by: ChangeBy, ids: string[]) => readonly Item[]> = [];

  constructor(private readonly d: ItemDeps) {}

  /**
   * `listener` runs inside the transaction that moves items to another folder (sharing ends what no longer applies
   * there); it answers the items that left a share link, announced unshared once the move commits.
   */
  onMoved(listener: (by: ChangeBy, ids: string[]) => readonly Item[]): void {
    this.movedListeners.push(listener);
  }

  /** Runs the onMoved listeners, in the transaction that put `ids` in another folder (a move, or a restore elsewhere). */
  afterMove(by: ChangeBy, ids: string[]): Item[] {
    return this.movedListeners.flatMap((listener) => listener(by, ids));
  }

  /** Any list: one keyset page of `scope`, folders first, with the items' share status. */
  listScope(scope: ListScope, q: PageQuery): Page {
    const key = JSON.stringify([scope, q.sortBy, q.order, q.limit, q.cursor ?? null]);
    return this.d.pages.get(key, () => ({ page: this.buildPage(scope, q), folder: null })).page;
  }

  /** GET /api/files: a folder's live children (root when parentId is absent); opening a folder marks it read. */
  list(caller: Principal, query: PageQuery & { parentId?: string | null }): Page {
    const q = liveSort(query);
    const principal = this.d.tree.actor(caller, { ids: query.parentId ? [query.parentId] : [] }, 'view');
    const { accountId } = principal;
    const key = JSON.stringify([accountId, 'folder', query.parentId || null, q.sortBy, q.order, q.limit, q.cursor ?? null]);
    // The folder check is cached with the page: both hold until the database changes.
    const { page, folder } = this.d.pages.get(key, () => {
      const folder = this.d.tree.requireFolder(principal, query.parentId);
      const own = this.buildPage({ kind: 'folder', accountId, parentId: folder?.id ?? null }, q);
      const atTop = !folder && !q.cursor && !principal.share;
      return { page: atTop ? { ...own, items: [...this.teamFoldersOf(accountId), ...own.items] } : own, folder };
    });
    if (folder) this.d.access.touch([folder]);
    return page;
  }

  /** The team folders and group libraries an account reaches through its groups: first in its top level, marked. */
  private teamFoldersOf(accountId: string): ItemView[] {
    if (!this.d.tree.peopleSharingEnabled()) return [];
    const out: ItemView[] = [];
    for (const team of this.d.teamFolders.reachedBy(accountId)) {
      const row = this.d.items.getLive(team.id, team.folderId);
      if (row) out.push({ ...this.d.views.one(team.id, row), teamFolder: true });
    }
    // Libraries given to a group the account is in: at the top too, marked as libraries by their view.
    for (const library of this.d.libraries.reachedBy(accountId)) {
      const row = this.d.items.getLive(library.ownerId, library.folderId);
      if (row) out.push(this.d.views.one(library.ownerId, row));
    }
    return out;
  }

  private buildPage(scope: ListScope, q: PageQuery): Page {
    const { rows, nextCursor } = this.d.tree.page(scope, q);
    return { items: this.d.views.many(scope.accountId, rows), nextCursor };
  }

  listStarred(principal: Principal, q: PageQuery): Page {
    return this.listScope({ kind: 'starred', accountId: principal.accountId }, liveSort(q));
  }

  /** GET /api/files/shared: live items in a share (a link's root, or added with link-parent-share). */
  listShared(principal: Principal, q: PageQuery & { include?: 'people' }): Page {
    return this.listScope({ kind: q.include === 'people' ? 'sharedAny' : 'shared', accountId: principal.accountId }, liveSort(q));
  }

  stats(principal: Principal): { totalFiles: number; totalFolders: number; sharedCount: number; starredCount: number } {
    const counts = this.d.items.liveCounts(principal.accountId);
    return {
      totalFiles: counts.files,
      totalFolders: counts.folders,
      sharedCount: this.d.shareLinks.linkCount(principal.accountId),
      starredCount: counts.starred,
    };
  }

  /**
   * Case-insensitive substring search on names, live items only (docs/compatibility.md › Files): exact matches first, then
   * prefix, then other substrings, each newest first. `%` and `_` are ordinary characters: the text
   * never reaches a LIKE pattern. Substrings come from the trigram index (three characters or more).
   */
  search(principal: Principal, input: { q: string; limit?: number; includeShared?: boolean }): ItemView[] {
    const text = input.q.normalize('NFC').trim();
    if (text.length === 0 || text.length > SEARCH_MAX_LENGTH) throw badRequest(Messages.invalidSearch);
    // No name holds one, and FTS5 reads a NUL in its query as the end of a string: a syntax error.
    if (text.includes('\0')) throw badRequest(Messages.searchHasNul);
    const limit = Math.min(100, Math.max(1, input.limit ?? 100));
    const key = nameKeyOf(text);
    const found = new Map<string, Item>();
    // A library's names keep the host's spelling: an accent decomposed (as macOS writes it) is looked for in that form too.
    for (const form of new Set([key, key.normalize('NFD')])) {
      for (const r of this.d.items.searchCandidates(principal.accountId, form, SEARCH_CANDIDATES)) found.set(r.id, r);
      if (input.includeShared) for (const r of this.sharedCandidates(principal, form)) found.set(r.id, r);
    }
    const wanted = searchKeyOf(text);
    // Each candidate's key made once: the sort would otherwise normalise it at every comparison.
    const ranks = new Map<Item, number>();
    for (const r of found.values()) {
      const k = searchKeyOf(r.nameKey);
      if (k.includes(wanted)) ranks.set(r, k === wanted ? 0 : k.startsWith(wanted) ? 1 : 2);
    }
    const ranked = [...ranks.keys()]
      .sort((a, b) => ranks.get(a)! - ranks.get(b)! || b.modifiedAt - a.modifiedAt || (a.id < b.id ? -1 : 1))
      .slice(0, limit);
    return ranked.map((r) => this.d.views.one(r.accountId, r));
  }

  /** Search candidates inside the items shared with the caller's account (the first SHARED_SEARCH_ROOTS shares). */
  private sharedCandidates(principal: Principal, key: string): Item[] {
    const out: Item[] = [];
    for (const [ownerId, roots] of this.sharedRoots(principal)) {
      for (const r of this.d.items.searchCandidates(ownerId, key, SEARCH_CANDIDATES)) if (this.d.tree.isInside(roots, r.id)) out.push(r);
    }
    return out;
  }

  /** The items shared with the caller's account that search looks in (the newest SHARED_SEARCH_ROOTS), by owner account; none while the admin switch is off. */
  sharedRoots(principal: Principal): Map<string, Set<string>> {
    const rootsByOwner = new Map<string, Set<string>>();
    if (!this.d.tree.peopleSharingEnabled()) return rootsByOwner;
    for (const share of this.d.members.sharedWith(principal.accountId, null, SHARED_SEARCH_ROOTS)) {
      rootsByOwner.set(share.accountId, (rootsByOwner.get(share.accountId) ?? new Set()).add(share.id));
    }
    return rootsByOwner;
  }

  /** Files by last read, newest first; folders and trash excluded. Pending access marks are written first. */
  recent(principal: Principal, input: { limit?: number }): ItemView[] {
    this.d.access.flush();
    const limit = Math.min(50, Math.max(1, input.limit ?? 10));
    return this.d.views.many(principal.accountId, this.d.items.recentFiles(principal.accountId, limit));
  }

  /** What the file's thumbnail record keeps of its picture, once made. */
  private photoDetails(row: Item): { photo?: PhotoDetails } {
    const made = row.storageKey ? this.d.thumbnails.get(row.storageKey) : null;
    if (made?.status !== 'ready') return {};
    return {
      photo: {
        takenAt: made.takenAt === null ? null : iso(made.takenAt),
        width: made.width,
        height: made.height,
        camera: made.camera,
        lens: made.lens,
        location: made.latitude !== null && made.longitude !== null ? { latitude: made.latitude, longitude: made.longitude } : null,
        ...(made.duration !== null && { duration: made.duration }),
      },
    };
  }

  /** GET /api/files/:id/info; reading details does not mark the item as read. */
  info(caller: Principal, id: string): ItemInfo {
    const principal = this.d.tree.actor(caller, { ids: [id] }, 'view');
    // A member sees live items inside the share only; the owner also sees its trash.
    const row = principal.share ? this.d.tree.requireLive(principal, id) : this.d.items.get(principal.accountId, id);
    if (!row) throw notFound(Messages.itemNotFound);
    const base = {
      id: row.id,
      name: row.name,
      type: row.type,
      size: row.type === 'folder' ? null : row.size,
      modified: iso(row.modifiedAt),
      accessedAt: iso(row.accessedAt),
    };
    // A member sees the shared item at its top: where it sits in the owner's tree is not theirs to see.
    const place = principal.share
      ? {
          parentId: row.id === principal.share.rootId ? null : row.parentId,
          sharedWithMe: {
            owner: this.d.members.ownerCard(principal.accountId),
            role: principal.share.role,
            rootId: principal.share.rootId,
          },
        }
      : { parentId: row.parentId };
    if (row.type === 'folder') {
      const totals = row.deletedAt === null ? this.d.items.liveTreeTotals(row.id) : this.d.items.trashSetTotals(row.id);
      return { ...base, ...place, folderInfo: totals };
    }
    const v = this.d.views.one(principal.accountId, row);
    const drop = this.d.shareLinks.dropOf(row.id);
    return {
      ...base,
      mimeType: row.mimeType,
      shared: v.shared,
      sharedAt: v.sharedAt,
      expiresAt: v.expiresAt,
      ...place,
      // Sent by a visitor through an upload link: the name they gave (if any) and when.
      ...(drop ? { droppedBy: { uploader: drop.uploader, at: iso(drop.createdAt) } } : {}),
      ...this.photoDetails(row),
    };
  }

  createFolder(
    caller: Principal,
    input: { name: string; parentId?: string | null },
  ): { id: string; name: string; type: 'folder'; size: null; modified: string } {
    const name = typedName(input.name);
    const principal = this.d.tree.actor(caller, { parentId: input.parentId, folder: true }, 'edit');
    const row = this.d.transactions.immediate(() => {
      const parent = this.d.tree.requireFolder(principal, input.parentId);
      const folder = this.insertFolder(principal.accountId, parent?.id ?? null, name);
      this.d.changes.record(principal, ChangeKinds.created, folder);
      return folder;
    });
    this.d.events.item(principal, FileEventType.folderCreated, row);
    return { id: row.id, name: row.name, type: 'folder', size: null, modified: iso(row.modifiedAt) };
  }

  /**
   * `coffer doctor --fix`: every live item whose folder row is gone (the top of each broken chain; what is under it
   * comes along) moves into a new folder "Recovered items" (numbered if the name is taken) at the top of its account's
   * tree (a team folder's own folder for a team), one per account, logged as a folder created and moves by the system,
   * so sync clients and the web app see them (a running server reads the log rows the CLI wrote). An item a move
   * refuses (a library's, whose host folder decides where it is) is left where it is, and answered as such.
   */
  recoverUnreachable(): { recovered: RecoveredItems[]; left: Array<{ id: string; reason: string }> } {
    const out = new Map<string, RecoveredItems>();
    const left: Array<{ id: string; reason: string }> = [];
    for (let after = ''; ; ) {
      const rows = this.d.items.unreachablePage(after, RECOVER_BATCH);
      if (rows.length === 0) break;
      after = rows.at(-1)!.id;
      this.d.transactions.immediate(() => {
        for (const row of rows) {
          const by: ChangeBy = { accountId: row.accountId, actor: { kind: 'system', id: null } };
          try {
            // A savepoint: a move refused takes the folder it would have made with it.
            const into = this.d.transactions.immediate(() => {
              const into = out.get(row.accountId) ?? this.recoveryFolder(by);
              const moved = this.d.items.move(row.id, into.folderId, this.d.tree.uniqueName(row.accountId, into.folderId, row.name));
              this.d.changes.record(by, ChangeKinds.moved, moved, { before: row });
              this.afterMove(by, [moved.id]);
              into.items.push({ id: moved.id, name: moved.name, type: moved.type });
              return into;
            });
            out.set(row.accountId, into);
          } catch (err) {
            left.push({ id: row.id, reason: err instanceof Error ? err.message : String(err) });
          }
        }
        // The moves took the items out of a folder the root may or may not have counted: its size is counted again.
        for (const accountId of new Set(rows.map((r) => r.accountId))) this.d.items.recountRoot(accountId);
      });
    }
    return { recovered: [...out.values()], left };
  }

  /** A new "Recovered items" folder at the top of the account's tree (its own folder for a team), logged. */
  private recoveryFolder(by: ChangeBy): RecoveredItems {
    const home = this.d.teamFolders.folderOf(by.accountId);
    const parentId = home && this.d.items.getLive(by.accountId, home) ? home : null;
    const folder = this.insertFolder(by.accountId, parentId, RECOVERED_FOLDER);
    this.d.changes.record(by, ChangeKinds.created, folder);
    return { accountId: by.accountId, folderId: folder.id, folderName: folder.name, items: [] };
  }

  /** A new folder row under `parentId`, with a free display name; inside the caller's transaction. */
  insertFolder(accountId: string, parentId: string | null, name: string): Item {
    const folder = { id: newId(), accountId, parentId, name: this.d.tree.uniqueName(accountId, parentId, name) };
    return this.d.items.insertFolder(folder, this.d.clock.now());
  }

  /** Rename in place; another live sibling with the name (any case) is 409. */
  rename(caller: Principal, input: { id: string; name: string }): { id: string; name: string; type: 'file' | 'folder'; modified: string } {
    const name = typedName(input.name);
    const principal = this.d.tree.actor(caller, { ids: [input.id] }, 'edit');
    const { row, oldName } = this.d.transactions.immediate(() => {
      const item = this.d.tree.requireLive(principal, input.id);
      const clash = this.d.items.liveByName(principal.accountId, item.parentId, name);
      if (clash && clash.id !== item.id) throw conflict(Messages.nameTaken);
      const row = this.d.items.rename(item.id, name);
      if (row.name !== item.name) this.d.changes.record(principal, ChangeKinds.renamed, row, { before: item });
      return { row, oldName: item.name };
    });
    if (oldName !== row.name) this.d.events.item(principal, FileEventType.renamed, row, { oldName });
    return { id: row.id, name: row.name, type: row.type, modified: iso(row.modifiedAt) };
  }

  /**
   * A new modified time for `item` (WebDAV's PROPPATCH of DAV:lastmodified), inside the caller's transaction, logged as
   * item.touched so sync, webhooks and activity see it; the returned announcement is made after the commit.
   */
  setModified(principal: Principal, item: Pick<Item, 'id' | 'name' | 'type' | 'parentId' | 'size' | 'mimeType'>, at: number): () => void {
    this.d.items.setModified(item.id, at);
    const details = { modified: iso(at), size: item.size, mimeType: item.mimeType };
    this.d.changes.record(principal, ChangeKinds.touched, item, { details });
    return () => this.d.events.item(principal, FileEventType.updated, item, { size: item.size, mimeType: item.mimeType });
  }

  /** Sets what moves items across a library's edge (a copy then a delete). */
  moveAcrossWith(across: LibraryCrossing): void {
    this.across = across;
  }

  /**
   * Moves items into a folder (or the root); colliding names get `(n)`; a folder never moves below itself.
   * Items that cross a library's edge are copied into the target, then deleted (`moveAcross`).
   */
  async move(caller: Principal, input: { ids: string[]; parentId?: string | null }): Promise<{ message: string }> {
    const across = this.across;
    const targetId = input.parentId ?? null;
    if (across?.crossesLibraries(input.ids, targetId)) {
      const principal = this.d.tree.actor(caller, { ids: input.ids }, 'edit');
      if (this.d.tree.actor(caller, { parentId: input.parentId }, 'edit').accountId !== principal.accountId)
        throw forbidden(Messages.shareBoundary);
      const crossing = input.ids.filter((id) => across.crossesLibraries([id], targetId));
      const within = input.ids.filter((id) => !crossing.includes(id));
      const moved = await across.moveAcross(principal, crossing, targetId);
      const rest = within.length ? this.moveWithin(caller, { ids: within, parentId: input.parentId }) : 0;
      return { message: `Moved ${plural(moved.length + rest, 'item')}` };
    }
    return { message: `Moved ${plural(this.moveWithin(caller, input), 'item')}` };
  }

  private moveWithin(caller: Principal, input: { ids: string[]; parentId?: string | null }): number {
    const principal = this.d.tree.actor(caller, { ids: input.ids, parentId: input.parentId }, 'edit');
    const { moved, unshared } = this.d.transactions.immediate(() => {
      const rows = this.d.tree.requireLiveMany(principal, input.ids);
      const targetId = this.d.tree.requireFolder(principal, input.parentId)?.id ?? null;
      if (this.d.tree.isInsideAnyFolder(rows, targetId)) throw badRequest(Messages.moveIntoSelf);
      const out: Array<{ moved: Item; from: string | null }> = [];
      for (const row of rows) {
        if (row.parentId === targetId) continue;
        const moved = this.d.items.move(row.id, targetId, this.d.tree.uniqueName(principal.accountId, targetId, row.name));
        this.d.changes.record(principal, ChangeKinds.moved, moved, { before: row });
        out.push({ moved, from: row.parentId });
      }
      const ids = out.map((r) => r.moved.id);
      return { moved: out, unshared: this.afterMove(principal, ids) };
    });
    for (const { moved: row, from } of moved) this.d.events.moved(principal, FileEventType.moved, row, from);
    for (const row of unshared) this.d.events.item(principal, FileEventType.shared, row, { shared: false });
    return moved.length;
  }

  /**
   * WebDAV MOVE: one item to an exact folder and name (no `(n)`: a taken name is 409, the caller
   * clears an overwritten destination first); a folder never moves below itself.
   */
  relocate(principal: Principal, input: { id: string; parentId: string | null; name: string }): Item {
    const name = typedName(input.name);
    const { row, before, unshared } = this.d.transactions.immediate(() => {
      const before = this.d.tree.requireLive(principal, input.id);
      const targetId = this.d.tree.requireFolder(principal, input.parentId)?.id ?? null;
      if (this.d.tree.isInsideAnyFolder([before], targetId)) throw badRequest(Messages.moveIntoSelf);
      const clash = this.d.items.liveByName(principal.accountId, targetId, name);
      if (clash && clash.id !== before.id) throw conflict(Messages.nameTaken);
      const row = this.d.items.move(before.id, targetId, name);
      const kind = targetId !== before.parentId ? ChangeKinds.moved : ChangeKinds.renamed;
      if (targetId !== before.parentId || name !== before.name) this.d.changes.record(principal, kind, row, { before });
      return { row, before, unshared: targetId !== before.parentId ? this.afterMove(principal, [row.id]) : [] };
    });
    if (before.parentId !== row.parentId) this.d.events.moved(principal, FileEventType.moved, row, before.parentId);
    if (before.name !== row.name) this.d.events.moved(principal, FileEventType.renamed, row, before.parentId, { oldName: before.name });
    for (const left of unshared) this.d.events.item(principal, FileEventType.shared, left, { shared: false });
    return row;
  }

  /** One event per finished background job of the file tree: `{userId, action, count, jobId}`. */
  jobDone(
    job: { accountId: string; memberAccountId?: string },
    type: FileEventName,
    data: { userId: string; action: string; count: number; jobId: string },
  ): void {
    this.d.events.jobDone(job, type, data);
  }

  star(principal: Principal, input: { ids: string[]; starred: boolean }): { message: string } {
    // A star is a flag on the item, so a member's star would mark the owner's item: refused, not hidden.
    if (this.d.tree.actor(principal, { ids: input.ids }, 'view').share) throw forbidden(Messages.memberCannotStar);
    const rows = this.d.transactions.immediate(() => {
      const items = this.d.tree.requireLiveMany(principal, input.ids);
      for (const row of items) this.d.items.setStarred(row.id, input.starred);
      return items;
    });
    for (const row of rows) this.d.events.item(principal, FileEventType.starred, row, { starred: input.starred });
    return { message: `${input.starred ? 'Starred' : 'Unstarred'} ${plural(rows.length, 'item')}` };
  }
}
