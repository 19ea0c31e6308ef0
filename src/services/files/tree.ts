import {
  type Item,
  type ItemsRepo,
  type ListedItem,
  type ListScope,
  nameKeyOf,
  type PagePosition,
  type SortField,
  type SortOrder,
} from '../../db/repos/items.ts';
import type { Membership, MembersRepo } from '../../db/repos/members.ts';
import type { TeamFoldersRepo } from '../../db/repos/team-folders.ts';
import { badRequest, forbidden, Messages, notFound } from '../../errors.ts';
import { decodeCursor, encodeCursor } from '../../lib/cursor.ts';
import type { Principal } from '../identity/principal.ts';
import { numberedName, splitExtension } from './names.ts';
import { PageCache } from './page-cache.ts';

/** An item as routes hold it: the stored row without its key material (services read that by id). */
export type HeldItem = Omit<Item, 'wrappedKey' | 'storageKey' | 'keyId'>;

export interface PageQuery {
  sortBy: SortField;
  order: SortOrder;
  limit: number;
  cursor?: string;
}

/** Who owns the items asked for: a request's principal, or a job's login acting for its account. */
export interface Owner {
  accountId: string;
  /** Set for a member acting inside a shared item: only that item and what lies below it exist. */
  share?: { rootId: string };
}

/**
 * What an operation does to the items it names: members need the editor role to change them. `content` gives
 * files new content and leaves their name and place, so an editor may do it to a shared file itself.
 */
export type Need = 'view' | 'edit' | 'content';

/** The items a request names: the ones it acts on, and (when the key is present) where it places them. */
export interface ItemRef {
  ids?: readonly string[];
  parentId?: string | null;
  /** What is placed under `parentId` is a new folder (not a file's bytes). */
  folder?: boolean;
}

const MAX_DEPTH = 10_000;

/**
 * The file tree of an account: which items exist and where (another account's item is 404, as if it
 * did not exist), folders-first keyset pages and their cursors, "is this inside that" checks, subtree
 * sizes and free names. Every service that walks or places items uses this one module.
 */
export class Tree {
  // Which account holds an item and the share that gives it to another account, until access can have changed.
  private readonly reach: PageCache<{ accountId: string | null; membership: Membership | null }>;
  /** The owners sharing with an account as editor, read once per access version rather than per upload. */
  private readonly editorOwners: PageCache<string[]>;

  constructor(
    readonly items: ItemsRepo,
    private readonly members: MembersRepo,
    private readonly peopleSharingOn: () => boolean,
    accessVersion: () => string,
    private readonly teamFolders: Pick<TeamFoldersRepo, 'folderOf'>,
  ) {
    // An id not in the tree is not kept: creating an item does not move the access version.
    this.reach = new PageCache(
      accessVersion,
      () => 1,
      (value) => value.accountId !== null,
    );
    this.editorOwners = new PageCache(accessVersion, (owners) => owners.length);
  }

  private reachOf(accountId: string, id: string): { accountId: string | null; membership: Membership | null } {
    return this.reach.get(`${accountId}\n${id}`, () => {
      const owner = this.members.accountOf(id);
      const membership = owner !== null && owner !== accountId ? this.members.membershipOf(accountId, id) : null;
      return { accountId: owner, membership };
    });
  }

  /**
   * Who acts on the items a request names; the one place membership is decided. Items of the caller's
   * account: the caller. Items inside something another account shares with the caller's account: the
   * caller acting for that account, limited to the shared item (`share`), when its role allows `need`.
   * Anything else is 404 as if it did not exist; naming items on both sides of a share is 403.
   */
  actor<P extends Principal>(principal: P, ref: ItemRef, need: Need): P {
    if (need !== 'view') this.checkWrite(ref);
    return this.scoped(principal, ref, need);
  }

  /**
   * `actor` again for a principal it returned, at a write's commit: a member's share is read anew, as it may have
   * ended or turned viewer while the request's body arrived (404 or 403 then). The commit's own guard checks the write.
   */
  actorNow<P extends Principal>(principal: P, ref: ItemRef, need: Need): P {
    if (!principal.share) return this.scoped(principal, ref, need);
    const { share, ...own } = principal;
    return this.scoped({ ...own, accountId: share.memberAccountId } as P, ref, need);
  }

  private scoped<P extends Principal>(principal: P, ref: ItemRef, need: Need): P {
    if (principal.share) return principal;
    const ids = [...(ref.ids ?? [])];
    if (ref.parentId) ids.push(ref.parentId);
    // A placement at the root is in the caller's own tree.
    let own = 'parentId' in ref && !ref.parentId;
    let scope: Membership | null = null;
    for (const id of ids) {
      const { accountId, membership } = this.reachOf(principal.accountId, id);
      if (accountId === null) continue;
      if (accountId === principal.accountId) {
        own = true;
        continue;
      }
      if (!membership) throw notFound(id === ref.parentId ? Messages.folderNotFound : Messages.itemNotFound);
      if (scope && scope.itemId !== membership.itemId) throw forbidden(Messages.shareBoundary);
      scope = membership;
    }
    if (!scope) return principal;
    if (!this.peopleSharingEnabled()) throw forbidden(Messages.peopleSharingOff);
    if (own) throw forbidden(Messages.shareBoundary);
    if (need !== 'view' && scope.role !== 'editor') throw forbidden(Messages.viewerOnly);
    if (need === 'edit' && ref.ids?.includes(scope.itemId)) throw forbidden(Messages.sharedRootOwnerOnly);
    return {
      ...principal,
      accountId: scope.ownerId,
      share: { rootId: scope.itemId, role: scope.role, memberAccountId: principal.accountId },
    };
  }

  /** Refuses up front a write the tree's guard would refuse at its commit (into a read-only library, say). */
  private checkWrite(ref: ItemRef): void {
    const ids = ref.ids ?? [];
    if (ids.length > 0 && ref.parentId !== undefined) {
      for (const id of ids) this.items.checkChange({ kind: 'place', itemId: id, parentId: ref.parentId });
      return;
    }
    if (ref.parentId) this.items.checkChange({ kind: 'insert', parentId: ref.parentId, type: ref.folder ? 'folder' : 'unknown' });
    for (const id of ids) this.items.checkChange({ kind: 'change', itemId: id });
  }

  /** Every account whose tree a login of `principal`'s account may add files to: its own, then those sharing with it as editor. */
  writableAccounts(principal: Principal): string[] {
    if (principal.share || !this.peopleSharingEnabled()) return [principal.accountId];
    return [principal.accountId, ...this.editorOwners.get(principal.accountId, () => this.members.editorOwnersOf(principal.accountId))];
  }

  /** The admin switch of sharing with people (Admin → Instance). */
  peopleSharingEnabled(): boolean {
    return this.peopleSharingOn();
  }

  /** Whether a login of `accountId` may still read `itemId` of another account through a share (document server fetches). */
  reachesShared(accountId: string, itemId: string): boolean {
    return this.peopleSharingEnabled() && this.members.membershipOf(accountId, itemId) !== null;
  }

  /** Whether `itemId` is itself an item another account shares with `accountId` (in person or through a group), not only inside one. */
  sharesRoot(accountId: string, itemId: string): boolean {
    return this.peopleSharingEnabled() && this.members.membershipOf(accountId, itemId)?.itemId === itemId;
  }

  /** The item another account shares with `accountId` that `itemId` is or lies in; null when none. */
  sharedRootOf(accountId: string, itemId: string): string | null {
    return this.peopleSharingEnabled() ? (this.members.membershipOf(accountId, itemId)?.itemId ?? null) : null;
  }

  /** The folder an item (live or not) is in; null at the top or when there is no such item. */
  parentOf(id: string): string | null {
    return this.items.parentOf(id) ?? null;
  }

  /** Whether a login of `accountId` may still change `itemId` of another account as an editor of a share (document server saves). */
  editsShared(accountId: string, itemId: string): boolean {
    return this.peopleSharingEnabled() && this.members.membershipOf(accountId, itemId)?.role === 'editor';
  }

  /** Whether a member's item lies inside the shared item (always true for the account's own items). */
  private inScope(owner: Owner, id: string): boolean {
    return !owner.share || this.isInside(new Set([owner.share.rootId]), id);
  }

  /** A live item of the account, else 404. */
  requireLive(owner: Owner, id: string): Item {
    const row = this.items.getLive(owner.accountId, id);
    if (!row || !this.inScope(owner, id)) throw notFound(Messages.itemNotFound);
    return row;
  }

  /** Live items for every id (deduplicated, in request order), else 404. */
  requireLiveMany(owner: Owner, ids: readonly string[]): Item[] {
    const rows = this.requireMany(owner, ids);
    if (rows.some((r) => r.deletedAt !== null)) throw notFound(Messages.itemNotFound);
    return rows;
  }

  /** Items of the account for every id, live or in the trash (deduplicated, in request order), else 404. */
  requireMany(owner: Owner, ids: readonly string[]): Item[] {
    const unique = [...new Set(ids)];
    const rows = this.items.getMany(owner.accountId, unique);
    if (rows.length !== unique.length || !unique.every((id) => this.inScope(owner, id))) throw notFound(Messages.itemNotFound);
    const byId = new Map(rows.map((r) => [r.id, r]));
    return unique.map((id) => byId.get(id)!);
  }

  /** Trash roots of the account for every id, else 404. */
  requireTrashRoots(owner: Owner, ids: readonly string[]): Item[] {
    const unique = [...new Set(ids)];
    const rows = this.items.getMany(owner.accountId, unique).filter((r) => r.deletedAt !== null && r.deletedRootId === r.id);
    if (rows.length !== unique.length) throw notFound(Messages.itemNotFound);
    const byId = new Map(rows.map((r) => [r.id, r]));
    return unique.map((id) => byId.get(id)!);
  }

  /** The target folder of a create, upload, move or copy: null is the root; else a live folder, or 404. */
  requireFolder(owner: Owner, parentId: string | null | undefined): Item | null {
    if (parentId === null || parentId === undefined || parentId === '') {
      if (owner.share) throw forbidden(Messages.shareBoundary);
      return null;
    }
    const row = this.items.getLive(owner.accountId, parentId);
    if (!row || row.type !== 'folder' || !this.inScope(owner, parentId)) throw notFound(Messages.folderNotFound);
    return row;
  }

  /** One folders-first keyset page of `scope`; the cursor continues the previous page with the same sort. */
  page(scope: ListScope, q: PageQuery): { rows: ListedItem[]; nextCursor: string | null } {
    const after = q.cursor ? readCursor(q.cursor, q.sortBy, q.order) : null;
    const { rows, hasMore } = this.items.page(scope, { sort: q.sortBy, order: q.order, limit: q.limit, after });
    const last = rows.at(-1);
    const nextCursor = hasMore && last ? encodeCursor([q.sortBy, q.order, last.type, this.items.sortValue(last, q.sortBy), last.id]) : null;
    return { rows, nextCursor };
  }

  /** Whether `id` is one of `ancestors` or lies below one of them (walks up from `id`, live or not). */
  isInside(ancestors: ReadonlySet<string>, id: string | null): boolean {
    let current = id;
    for (let depth = 0; current !== null && current !== undefined && depth < MAX_DEPTH; depth++) {
      if (ancestors.has(current)) return true;
      current = this.items.parentOf(current) ?? null;
    }
    return false;
  }

  /** The ids among `ids` that are one of `ancestors` or lie below one: isInside for many items, one query per level. */
  insideAny(ancestors: ReadonlySet<string>, ids: readonly string[]): Set<string> {
    const found = new Set<string>();
    // Each item reached on the way up, with the ids it was reached from.
    let frontier = new Map<string, string[]>(ids.map((id) => [id, [id]]));
    for (let depth = 0; frontier.size > 0 && depth < MAX_DEPTH; depth++) {
      const up: string[] = [];
      for (const [id, from] of frontier) {
        if (ancestors.has(id)) for (const f of from) found.add(f);
        else up.push(id);
      }
      const parents = up.length > 0 ? this.items.parentsOf(up) : new Map<string, string | null>();
      const next = new Map<string, string[]>();
      for (const id of up) {
        const parent = parents.get(id);
        if (parent) next.set(parent, [...(next.get(parent) ?? []), ...frontier.get(id)!]);
      }
      frontier = next;
    }
    return found;
  }

  /** Whether `target` is one of the given rows' folders or lies below one (a move or copy into itself). */
  isInsideAnyFolder(rows: readonly Item[], target: string | null): boolean {
    return target !== null && this.isInside(new Set(rows.filter((r) => r.type === 'folder').map((r) => r.id)), target);
  }

  /** Refuses to place the folders among `rows`, with the folders under them, in `target` past the depth limit. */
  assertNests(rows: readonly Item[], target: string | null): void {
    if (rows.some((r) => r.type === 'folder' && !this.items.nests(target, r.id))) throw badRequest(Messages.folderTooDeep);
  }

  /** Bytes of the live trees of the given items (a file counts itself). */
  liveBytes(rows: readonly Item[]): number {
    let total = 0;
    for (const r of rows) total += r.type === 'file' ? r.size : this.items.liveTreeTotals(r.id).totalSize;
    return total;
  }

  /**
   * Where an item of the account lands when the folder it was in is gone (a restore, a resumable upload's last byte):
   * the root (null), or for a team folder's account its team folder, as nobody reaches that account's root.
   */
  homeFolder(accountId: string): string | null {
    return this.teamFolders.folderOf(accountId);
  }

  /** Folders from the root down to `folder` (both included), for breadcrumbs. */
  trail(root: HeldItem, folder: HeldItem): HeldItem[] {
    const out = [folder];
    let current = folder;
    while (current.id !== root.id && current.parentId) {
      const parent = this.items.getLive(root.accountId, current.parentId);
      if (!parent) break;
      out.unshift(parent);
      current = parent;
    }
    return out;
  }

  /**
   * `name` if it is free in the folder, else `base (n)ext` with the smallest free n (docs/compatibility.md › Files). The
   * numbered siblings are read with one index range scan.
   */
  uniqueName(accountId: string, parentId: string | null, name: string): string {
    if (!this.items.liveByName(accountId, parentId, name)) return name;
    const { base, ext } = splitExtension(name);
    const prefix = nameKeyOf(`${base} (`);
    const extKey = nameKeyOf(ext);
    const used = new Set<number>();
    for (const key of this.items.liveNameKeysBetween(accountId, parentId, prefix, `${prefix.slice(0, -1)})`)) {
      const m = /^(\d+)\)(.*)$/s.exec(key.slice(prefix.length));
      if (m && m[2] === extKey) used.add(Number(m[1]));
    }
    for (let n = 1; ; n++) {
      if (used.has(n)) continue;
      const candidate = numberedName(name, n);
      // A shortened base can collide with something else: check the exact candidate too.
      if (!this.items.liveByName(accountId, parentId, candidate)) return candidate;
    }
  }
}

function readCursor(text: string, sort: SortField, order: SortOrder): PagePosition {
  const values = decodeCursor(text, ['string', 'string', 'string', sort === 'name' ? 'string' : 'number', 'string']);
  if (!values) throw badRequest(Messages.invalidCursor);
  const [s, o, type, value, id] = values;
  if (s !== sort || o !== order || (type !== 'file' && type !== 'folder')) throw badRequest(Messages.invalidCursor);
  return { type, value: value as string | number, id: id as string };
}
