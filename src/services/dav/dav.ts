import type { DavProperty, DavPropertiesRepo } from '../../db/repos/dav-properties.ts';
import type { FileChecksumsRepo } from '../../db/repos/file-checksums.ts';
import { type ChildEntry, type Item, type ItemsRepo, nameKeyOf } from '../../db/repos/items.ts';
import type { Transactions } from '../../db/repos/index.ts';
import type { MembersRepo } from '../../db/repos/members.ts';
import type { TeamFoldersRepo } from '../../db/repos/team-folders.ts';
import type { UsersRepo } from '../../db/repos/users.ts';
import type { HeldItem, Tree } from '../files/tree.ts';
import { AppError, badRequest, conflict, forbidden, Messages, notFound, preconditionFailed, propertiesFull } from '../../errors.ts';
import { KeyedMutex } from '../../lib/keyed-mutex.ts';
import { AuditActions, type AuditService } from '../admin/audit.ts';
import type { CopyService } from '../files/copy.ts';
import type { AssembledObject, ChunkedUploadService } from './chunked-uploads.ts';
import { type DavLock, DavLockService, locked, unprovenLock } from './dav-locks.ts';
import type { DownloadService } from '../files/downloads.ts';
import type { ItemService } from '../files/items.ts';
import { splitExtension } from '../files/names.ts';
import { asNamePart, exactNameProblem, nameProblem, normalizeName } from '../../contract/names.ts';
import { type Operation, permissionFor } from '../identity/permissions.ts';
import { can, type Principal, requirePermission } from '../identity/principal.ts';
import type { Permission } from '../../contract/permissions.ts';
import type { QuotaService, Usage } from '../files/quota.ts';
import type { TrashService } from '../files/trash.ts';
import type { UploadService } from '../files/uploads.ts';
import { noBytes } from '../../lib/buffers.ts';
import { escapeXml } from '../../lib/xml.ts';
import { formatSize } from '../../contract/size.ts';
import type { ThumbnailService } from '../thumbnails/thumbnails.ts';
import { PageCache } from '../files/page-cache.ts';
import { parseRange } from '../../lib/byte-range.ts';
import { contentPart, evaluateRead, fileEtag, modifiedSince, noneMatchNames, type ReadConditions, rangeUnder } from '../../lib/etags.ts';
import { runInTurns } from '../../lib/steps.ts';
import type { ByteRange } from '../../storage/driver.ts';

/** A resolved WebDAV path: the account's root, or a live item. */
export type DavTarget = { kind: 'root' } | { kind: 'item'; item: DavItem };

/** The folder a new resource at a path goes into (id null: the root); null when no folder is there (a 409). */
export type DavParent = { id: string | null } | null;

/** What one look at a path found there, and the folder above it, in one snapshot. */
export interface DavFound {
  target: DavTarget | null;
  parent: DavParent;
}

/** An item as the WebDAV routes hold it: no key material, and its ETag. */
export type DavItem = HeldItem & { etag: string };

/** A listed child as PROPFIND and the HTML listing show it: its ETag, as XML text, in place of its storage key. */
export type DavEntry = Omit<ChildEntry, 'storageKey' | 'hasProperties'> & { etagXml: string; hasProperties: boolean };

type EtagParts = Pick<Item, 'id' | 'type' | 'storageKey' | 'size' | 'modifiedAt' | 'treeVersion'>;

/** What oc:permissions reads of a login besides its role (src/http/dav/propfind.ts), in a fixed order. */
const RIGHTS: readonly Permission[] = ['files.download', 'files.upload', 'files.edit', 'files.share', 'files.delete'];
const ALL_RIGHTS = (1 << RIGHTS.length) - 1;

/**
 * What a login's rights add to a folder's ETag in the view it acts in (`role`: the share's or team folder's,
 * else the owner's): nothing with every right (the owner, an editor, a sub-user with every permission), else
 * the role and the permissions, so a change of them moves every folder's ETag in that view, and only there:
 * a sync client reads oc:permissions again only below an ETag that moved.
 */
export function rightsTag(principal: Principal, role: 'owner' | 'viewer' | 'editor' = principal.share?.role ?? 'owner'): string {
  let mask = 0;
  for (const [i, p] of RIGHTS.entries()) if (can(principal, p)) mask |= 1 << i;
  return role !== 'viewer' && mask === ALL_RIGHTS ? '' : `-${role === 'viewer' ? 'v' : 'e'}${mask}`;
}

/** A file's ETag, or a folder's in a view whose rightsTag is `tag`. */
export const etagOf = (row: EtagParts, tag = '') => (row.type === 'file' ? fileEtag(row) : `"${row.id}-t${row.treeVersion}${tag}"`);

/** escapeXml(etagOf(row, tag)) written from its parts (escaping goes character by character): a PROPFIND writes every row's. */
export const etagXmlOf = (row: EtagParts, tag = '') =>
  row.type === 'file'
    ? `&quot;${escapeXml(row.id)}-${escapeXml(contentPart(row))}-${row.size}&quot;`
    : `&quot;${escapeXml(row.id)}-t${row.treeVersion}${tag}&quot;`;

/**
 * ETag of a file: changes with every new content (a new storage key, or a library file's new time); of a folder,
 * with any change below it and, in the view of a login whose rightsTag is `tag`, with a change of those rights.
 */
export function davItem(row: Item, tag = ''): DavItem {
  const etag = etagOf(row, tag);
  // Written out rather than a rest spread, which copied each row property by property (6% of a 10,000-item PROPFIND).
  return {
    seq: row.seq,
    id: row.id,
    accountId: row.accountId,
    parentId: row.parentId,
    type: row.type,
    name: row.name,
    nameKey: row.nameKey,
    size: row.size,
    mimeType: row.mimeType,
    contentSource: row.contentSource,
    contentAuthorId: row.contentAuthorId,
    starred: row.starred,
    modifiedAt: row.modifiedAt,
    accessedAt: row.accessedAt,
    createdAt: row.createdAt,
    deletedAt: row.deletedAt,
    deletedRootId: row.deletedRootId,
    treeVersion: row.treeVersion,
    treeSize: row.treeSize,
    etag,
  };
}

/** A path of the account's tree as WebDAV names it: decoded, normalized segments. */
export interface DavPath {
  segments: string[];
  /** Name keys joined by '/', '' for the root: what locks and comparisons use. */
  key: string;
  /** A segment names only an item of exactly its letter case (the Nextcloud doors: Nextcloud's paths are case-sensitive). */
  exactCase: boolean;
}

export function davPath(segments: string[], exactCase = false): DavPath {
  // The exact doors keep blanks at a segment's ends: no stored name has them, so such a path names nothing (not the trimmed name).
  const clean = segments.map(exactCase ? (s) => s.normalize('NFC') : normalizeName);
  return { segments: clean, key: clean.map((s) => `/${nameKeyOf(s)}`).join(''), exactCase };
}

function isAncestorPath(ancestor: DavPath, path: DavPath): boolean {
  return path.key.startsWith(`${ancestor.key}/`);
}

/** A PROPPATCH instruction: set (with the value as XML and its xml:lang) or remove one dead property. */
export interface PropPatch {
  ns: string;
  name: string;
  value: string | null;
  lang: string | null;
}

export interface DavDeps {
  transactions: Transactions;
  items: ItemsRepo;
  checksums: FileChecksumsRepo;
  properties: DavPropertiesRepo;
  listing: ItemService;
  uploads: UploadService;
  downloads: DownloadService;
  trash: TrashService;
  copy: CopyService;
  quota: QuotaService;
  locks: DavLockService;
  users: UsersRepo;
  audit: AuditService;
  tree: Tree;
  members: MembersRepo;
  /** Which files have (or can have made) a thumbnail: nc:has-preview. */
  previews: Pick<ThumbnailService, 'previewable'>;
  teamFolders: TeamFoldersRepo;
  /** Moves on any write that can change who reaches an item (DatabaseRepo.accessVersion). */
  accessVersion: () => string;
  chunked: ChunkedUploadService;
}

/** Nextcloud's and ownCloud's property namespace (oc:checksums). */
const OC_NS = 'http://owncloud.org/ns';

/** The folder under the WebDAV root that holds what other accounts share with this one. */
export const SHARED_WITH_ME = 'Shared with me';
// Shares listed under it; an account with more sees its newest ones.
const MOUNT_LIMIT = 1000;

/** One item shared with the account, as WebDAV names it under SHARED_WITH_ME. */
export interface DavShare {
  name: string;
  item: DavItem;
  role: 'viewer' | 'editor';
}

/** A path under SHARED_WITH_ME/<name> (or a team folder's /<name>): the member acting for the owner, and the shared item's path in the owner's tree. */
export interface DavMount {
  principal: Principal;
  name: string;
  /** Where the mount is in the caller's WebDAV paths: SHARED_WITH_ME and its name, or a team folder's name at the root. */
  prefix: string[];
  /** The shared item's path in the owner's tree: what the rest of the request's path is resolved under. */
  ownerSegments: string[];
  role: 'viewer' | 'editor';
}

/**
 * Where a path under a WebDAV door points: the caller's own tree, SHARED_WITH_ME itself (its shares as
 * children), or inside one share or team folder, whose path is mapped onto the owner's tree.
 */
export type DavPlace =
  | { kind: 'own'; principal: Principal; path: DavPath }
  | { kind: 'list'; principal: Principal; path: DavPath; shares: DavShare[] }
  | { kind: 'mount'; principal: Principal; path: DavPath; mount: DavMount; isRoot: boolean };

/** What a listing (PROPFIND, REPORT) asks beyond the rows, so one walk brings it all back. */
export interface DavListingNeeds {
  /** Depth 1: the children (of SHARED_WITH_ME, its shares; of the root, its team folders too). */
  children: boolean;
  /** Dead properties, nc:has-preview, oc:checksums, oc:permissions' S (what the own tree shares out). */
  dead: boolean;
  previews: boolean;
  checksums: boolean;
  sharedOut: boolean;
  /** DAV:sync-token, read by DavSync.walk. */
  syncTokens: boolean;
}

/** Rows of a listing with what their answer needs, read together (a batch at a time while it streams). */
export interface DavRows<Row extends DavItem | DavEntry> {
  rows: Row[];
  /** By item id; only the rows that have some, and only when asked for. */
  dead: Map<string, DavProperty[]>;
  previews: ReadonlySet<string>;
  checksums: ReadonlyMap<string, string>;
}

/**
 * What a listing says of the tree a request acts in beyond its rows: the ETags of the root and of
 * SHARED_WITH_ME, the role that limits what oc:permissions offers, the usage, and the rows themselves.
 */
export interface DavTreeView {
  /** Of the account's root, when it is the target (null elsewhere). */
  rootEtag: string | null;
  /** null: nothing is shared with the account (there is no SHARED_WITH_ME). */
  sharedEtag: string | null;
  /** SHARED_WITH_ME's modified time: its newest share's (the clients refuse a folder without one). */
  sharedModifiedAt: number;
  /** SHARED_WITH_ME's oc:size: the bytes below its shares. */
  sharedSize: number;
  /** The place's role: 'owner' in the account's own tree. */
  role: 'owner' | 'viewer' | 'editor';
  /** The shared items and team folders listed or entered, by id, with their role: never deleted, renamed or moved by a member. */
  shareRoots: Map<string, 'viewer' | 'editor'>;
  /** In the account's own tree, the items it shares with people or by a link (when asked for). */
  sharedOut: ReadonlySet<string>;
  usage: Usage;
  /** The account's locks on the target, below it or covering it (DAV:lockdiscovery of every row listed). */
  locks: DavLock[];
  /** The size of the account's root (oc:size of the root). */
  rootSize: number;
  /** The target itself (when it is an item), and at depth 1 the shares or team folders listed beside the children. */
  self: DavRows<DavItem>;
  /** Under SHARED_WITH_ME, or the team folders at the root (depth 1). */
  mounts: { shares: DavShare[]; rows: DavRows<DavItem> };
  /** The target folder's children, a batch at a time (depth 1). */
  children: AsyncGenerator<DavRows<DavEntry>> | null;
  /** A collection's DAV:sync-token (null: the tree's root); null for SHARED_WITH_ME, which has none, and unless asked for (DavSync.walk). */
  syncToken: ((collectionId: string | null) => string) | null;
}

/** A request's walk: where it is, what is there and, for a listing, what the answer says. */
export type DavWalk = DavPlace & DavFound & { view: DavTreeView | null };

/**
 * What a walk is for: a write refused where a role forbids it (`copy`: a COPY's source, and `content`: a file's
 * new content, which a share's own root may take), a listing's needs.
 */
interface DavWalkOptions {
  write?: 'write' | 'copy' | 'content';
  /** The write may make a new item at the path (PUT, MKCOL, LOCK, a COPY's or MOVE's Destination). */
  creates?: boolean;
  listing?: DavListingNeeds;
}

/** One list of the If header (RFC 4918 §10.4): its tag as the path it names (null: none here, so the list fails), and its conditions. */
interface DavIfList {
  tagged: boolean;
  path: DavPath | null;
  conditions: Array<{ not: boolean; token?: string; etag?: string }>;
}

/**
 * A request's preconditions as the protocol read them: If-Match, If-None-Match and the If header's lists;
 * `malformed` is an If header that did not parse, refused (400) where the header is evaluated.
 */
export interface DavConditions {
  ifMatch: string | null;
  ifUnmodifiedSince: string | null;
  ifNoneMatch: string | null;
  lists: DavIfList[];
  malformed: AppError | null;
}

/** How the door writes the address of the resource a request names (a 423 names it): the protocol's, handed down with the request. */
export type DavHref = (place: DavPlace, target: DavTarget | null) => string;

/** A write's request as the protocol read it: its preconditions, how its door writes the resource's href, and what it refuses of the request once the walk found what is there (before the preconditions). */
export interface DavWrite {
  conditions: DavConditions;
  href: DavHref;
  refuse?: (target: DavTarget | null) => AppError | null;
}

/** A write entered: where the walk put it (never SHARED_WITH_ME itself), the lock tokens it proved and its href. */
interface Entered {
  walk: DavWalk & { kind: 'own' | 'mount' };
  tokens: Set<string>;
  href: string;
}

/** GET or HEAD of a path: SHARED_WITH_ME's list, a folder's children, a 304, or a file with its bytes (none for HEAD). */
export type DavRead =
  | { kind: 'list'; walk: DavWalk & { kind: 'list' } }
  | { kind: 'folder'; walk: DavWalk; pages: AsyncGenerator<DavEntry[]> | null }
  | { kind: 'not-modified'; walk: DavWalk; item: DavItem }
  | { kind: 'file'; walk: DavWalk; item: DavItem; range: ByteRange | null; body: ReadableStream<Uint8Array> | null };

/** The 412 of a COPY or MOVE with Overwrite: F onto an existing destination. */
const overwriteRefused = () => new AppError(412, 'The destination exists and Overwrite is F');

/** The answer to a write on SHARED_WITH_ME itself. */
export const sharedListReadOnly = () =>
  forbidden(
    `"${SHARED_WITH_ME}" lists what other accounts share with you and holds nothing of its own: put files inside one of its shared folders, or elsewhere in your files.`,
  );

/** A lock as the account owner's list shows it. */
export interface DavLockView {
  token: string;
  path: string;
  login: { id: string; name: string; email: string };
  scope: DavLock['scope'];
  depth: DavLock['depth'];
  expiresAt: string;
}

/** A PUT: its body and what the request says of it. */
interface PutInput {
  body: AsyncIterable<Uint8Array>;
  contentType: string;
  modifiedMs: number | null;
  /** The content's SHA1 the client sent (OC-Checksum), hex: checked against the bytes before anything is kept. */
  sha1?: string;
  signal?: AbortSignal;
  sizeHint?: number;
  /** The ETag the request's preconditions held the file to: a file changed while the body arrived is 412, not overwritten. */
  heldEtag?: string;
}

const CHANGED_WHILE_SENT = 'The file changed while this write was sent: its If-Match (or If) condition no longer holds';

/** Whether preconditions hold a write to one version of the resource (an ETag or a time), not only to its existence. */
function namesVersion(c: DavConditions): boolean {
  return (
    (c.ifMatch !== null && c.ifMatch.trim() !== '*') ||
    c.ifUnmodifiedSince !== null ||
    c.lists.some((list) => !list.tagged && list.conditions.some((cond) => cond.etag !== undefined && !cond.not))
  );
}

/** What a write proves of the locks on what it touches: the lock tokens the request carried, and the href a 423 names. */
type LockedBy = LockProof & { href: string };

/** What a write needs to pass the locks on what it touches: the lock tokens the request carried. */
export interface LockProof {
  tokens: ReadonlySet<string>;
}

const PAGE = 500;
/** Rows whose dead properties (and previews, SHA1s) are read together while a listing streams. */
const LISTING_BATCH = 50;
const NOTHING_SHARED: ReadonlySet<string> = new Set();
const NO_CHECKSUMS: ReadonlyMap<string, string> = new Map();
const SHARED_KEY = davPath([SHARED_WITH_ME]).key;
const SHARED_NAME_KEY = nameKeyOf(SHARED_WITH_ME);
/** How the WebDAV name of an own item named SHARED_WITH_ME at the root begins (its name key). */
const NUMBERED_SHARED = `${SHARED_NAME_KEY} (`;
const LISTED: DavFound = { target: { kind: 'root' }, parent: null };
const NOTHING_FOUND: DavFound = { target: null, parent: null };

/**
 * Refuses a write that makes or replaces an item named SHARED_WITH_ME at the root: it is where shares appear, so an
 * own item made there (a sync client uploading what it kept of a share that ended) would be under another name (davName).
 */
export function assertNotSharedListName(place: DavPlace): void {
  if (place.kind === 'own' && place.path.segments.length === 1 && place.path.key === SHARED_KEY)
    throw forbidden(
      `"${SHARED_WITH_ME}" at the top of your files is where what other accounts share with you appears: choose another name.`,
    );
}

function folderOf(target: DavTarget | null): DavParent {
  if (!target || (target.kind === 'item' && target.item.type !== 'folder')) return null;
  return { id: target.kind === 'root' ? null : target.item.id };
}

/** Whether two places are in one tree: the account's own, or the same share or team folder. */
function sameTree(a: DavPlace, b: DavPlace): boolean {
  return a.kind === b.kind && (a.kind !== 'mount' || (b.kind === 'mount' && b.mount.prefix.join('/') === a.mount.prefix.join('/')));
}

function mountPlace(mount: DavMount, rest: string[], exactCase: boolean): DavPlace {
  const path = davPath([...mount.ownerSegments, ...rest], exactCase);
  return { kind: 'mount', principal: mount.principal, path, mount, isRoot: rest.length === 0 };
}

/**
 * Caps on dead properties (a client sets a few small ones: Windows its four Win32 times and attributes,
 * ~300 bytes). Each item's first KiB costs about what its own row does; beyond it an account's
 * properties together take at most `accountBytes`, so they cannot stand in for storage the quota counts.
 */
export const PROPERTY_LIMITS = { perItem: 1_000, bytesPerItem: 64 * 1024, freeBytesPerItem: 1024, accountBytes: 16 * 1024 * 1024 } as const;

/**
 * The account's tree through WebDAV paths, on the same services as the HTTP API (uploads, trash,
 * copy, moves, permissions, events, audit and usage), plus what only WebDAV has: dead properties
 * and write locks. A path names one item: names never get `(n)` here.
 */
export class DavService {
  /** PUTs to one path, one at a time: the first creates the file, the next replace it (never a `(n)` copy beside it). */
  private readonly writes = new KeyedMutex();

  /** Whether an account reaches any team folder, read once per access version rather than per request. */
  private readonly reachesTeams: PageCache<boolean>;

  constructor(private readonly d: DavDeps) {
    this.reachesTeams = new PageCache(d.accessVersion, () => 1);
  }

  get locks(): DavLockService {
    return this.d.locks;
  }

  /** Reading a file's content is the API's download (ranges, audit, last-read marks). */
  get downloads(): DownloadService {
    return this.d.downloads;
  }

  /** Refuses an operation the principal's permissions do not allow (403, as the API), audited as the route guard does. */
  allow(principal: Principal, operation: Operation): void {
    try {
      requirePermission(principal, permissionFor(operation));
    } catch (err) {
      this.d.audit.record({
        action: AuditActions.accessDenied,
        status: 'denied',
        principal,
        targetType: 'webdav',
        targetId: operation,
        details: { reason: (err as Error).message },
      });
      throw err;
    }
  }

  /**
   * What other accounts share with this one, named for WebDAV: the item's name, or `<name> (<owner's
   * name>)` where two shares have one name. A team folder is here only while an own item at the root
   * hides it there (`teamFolders`): a sync client must find it at one path, or it syncs it twice. Empty
   * while sharing with people is off.
   */
  private shares(principal: Principal): DavShare[] {
    if (principal.share || !this.d.tree.peopleSharingEnabled()) return [];
    const rows = this.d.members
      .sharedWith(principal.accountId, null, MOUNT_LIMIT)
      .filter((r) => !r.teamFolder || this.d.items.liveByName(principal.accountId, null, r.name) !== null);
    const counts = new Map<string, number>();
    for (const r of rows) counts.set(r.nameKey, (counts.get(r.nameKey) ?? 0) + 1);
    // The owner's name is a path segment's part here: a slash in it would split the segment, so the clients could not reach it.
    const named = rows.map((r) =>
      (counts.get(r.nameKey) ?? 0) > 1 ? suffixed(r.name, r.type, `(${asNamePart(r.ownerName) || asNamePart(r.ownerEmail)})`) : r.name,
    );
    // Rows come newest first: the oldest share of a name keeps it, so a new share never renames one a client has synced.
    const names = distinctNames(named.toReversed(), () => false, [], rows.map((r) => r.type).toReversed()).toReversed();
    return rows.map((r, i) => ({
      name: names[i]!,
      item: davItem(this.d.items.getLive(r.accountId, r.id)!, rightsTag(principal, r.role)),
      role: r.role,
    }));
  }

  /** The account's own items it shares with people or by a link. */
  private sharedOut(principal: Principal): Set<string> {
    return this.d.members.sharedOutIds(principal.accountId);
  }

  /** The share named `name` under SHARED_WITH_ME, checked like any other door (Tree.actor); null when there is none. */
  private mount(principal: Principal, shares: readonly DavShare[], name: string): DavMount | null {
    const key = nameKeyOf(normalizeName(name));
    const share = shares.find((s) => nameKeyOf(s.name) === key);
    return share ? this.mounted(principal, share, [SHARED_WITH_ME, share.name]) : null;
  }

  /** The team folders the account reaches, named for the WebDAV root: those an own item of the same name hides are left out. */
  private teamFolders(principal: Principal): DavShare[] {
    if (principal.share || !this.d.tree.peopleSharingEnabled()) return [];
    const shown: Array<{ row: Item; role: 'viewer' | 'editor' }> = [];
    for (const team of this.d.teamFolders.reachedBy(principal.accountId)) {
      const row = this.d.items.getLive(team.id, team.folderId);
      if (!row || this.d.items.liveByName(principal.accountId, null, row.name)) continue;
      const role = this.d.tree.actor(principal, { ids: [row.id] }, 'view').share?.role ?? 'viewer';
      shown.push({ row, role });
    }
    // Two team folders of one name: the older keeps it, the other is numbered past the account's own names at the root.
    // One named SHARED_WITH_ME is numbered too, shared or not, as that path lists what is shared with the account.
    const names = distinctNames(
      shown.map((s) => s.row.name),
      (name) => this.d.items.liveByName(principal.accountId, null, name) !== null,
      [SHARED_NAME_KEY],
    );
    return shown.map(({ row, role }, i) => ({ name: names[i]!, item: davItem(row, rightsTag(principal, role)), role }));
  }

  /** The team folder named `name` at the WebDAV root (when no own item has that name); null when there is none. */
  private teamMount(principal: Principal, name: string): DavMount | null {
    if (principal.share) return null;
    if (!this.reachesTeam(principal)) return null;
    if (this.d.items.liveByName(principal.accountId, null, normalizeName(name))) return null;
    const key = nameKeyOf(normalizeName(name));
    const team = this.teamFolders(principal).find((s) => nameKeyOf(s.name) === key);
    return team ? this.mounted(principal, team, [team.name]) : null;
  }

  /** Whether the account reaches any team folder: cached, as most accounts reach none, so nothing more is looked up. */
  private reachesTeam(principal: Principal): boolean {
    return this.reachesTeams.get(principal.accountId, () => this.d.teamFolders.reachedBy(principal.accountId).length > 0);
  }

  private mounted(principal: Principal, share: DavShare, prefix: string[]): DavMount {
    const actor = this.d.tree.actor(principal, { ids: [share.item.id] }, 'view');
    const ownerSegments: string[] = [];
    for (let at: HeldItem | null = share.item; at; at = at.parentId ? this.d.items.getLive(at.accountId, at.parentId) : null)
      ownerSegments.unshift(at.name);
    return { principal: actor, name: share.name, prefix, ownerSegments, role: actor.share!.role };
  }

  /**
   * One request's way into the tree, in one visit: where `path` (below a door) points, what is there, and
   * with `listing` what a PROPFIND or REPORT answer says of it. `write` refuses what a share's role forbids:
   * a viewer's writes, and the shared item itself except as a COPY's source.
   */
  walk(caller: Principal, path: DavPath, opts: DavWalkOptions = {}): DavWalk {
    return this.walkIn(this.place(caller, path, opts.creates), opts);
  }

  private walkIn(place: DavPlace, opts: DavWalkOptions): DavWalk {
    if (place.kind === 'mount' && opts.write) {
      if (place.mount.role === 'viewer') throw forbidden(Messages.viewerOnly);
      if (place.isRoot && opts.write === 'write') throw forbidden(Messages.sharedRootOwnerOnly);
    }
    const { target, parent } = place.kind === 'list' ? LISTED : this.find(place.principal, place.path);
    return { ...place, target, parent, view: opts.listing && target ? this.view(place, target, opts.listing) : null };
  }

  /**
   * GET or HEAD in one visit: the walk, then for a file the download permission (403) before the preconditions
   * (412, 304: evaluateRead, as the API's download: no condition answers before access), then the range (416; none
   * under an If-Range naming older content) and the bytes, read as the API's download is.
   */
  async read(caller: Principal, path: DavPath, req: { head: boolean; conditions: ReadConditions }): Promise<DavRead> {
    const walk = this.walk(caller, path);
    const { principal, target } = walk;
    if (walk.kind === 'list') return { walk, kind: 'list' };
    if (!target) throw notFound(Messages.itemNotFound);
    if (target.kind === 'root' || target.item.type === 'folder')
      return { walk, kind: 'folder', pages: req.head ? null : this.children(principal, target.kind === 'root' ? null : target.item.id) };
    const item = target.item;
    this.allow(principal, 'downloads.file');
    const outcome = evaluateRead(req.conditions, item);
    if (outcome === 'not-modified') return { walk, kind: 'not-modified', item };
    if (outcome !== 'send') throw preconditionFailed(outcome);
    if (req.head) return { walk, kind: 'file', item, range: null, body: null };
    // A range of content the client no longer holds would be spliced onto its old bytes: the whole file instead.
    const range = parseRange(rangeUnder(req.conditions, item.etag), item.size);
    if (range === 'unsatisfiable')
      throw new AppError(416, Messages.rangeNotSatisfiable, undefined, { 'Content-Range': `bytes */${item.size}` });
    return { walk, kind: 'file', item, range, body: await this.d.downloads.openFile(item, range ?? undefined, principal) };
  }

  /**
   * PUT in one visit: the walk (a viewer's 403), then `refused` (what the protocol refuses of the request
   * once the path is known), the preconditions (412), `malformed` (a bad checksum), then the locks (423) and the write.
   */
  async putAt(
    caller: Principal,
    path: DavPath,
    input: PutInput & { conditions: DavConditions; href: DavHref; refused: AppError | null; malformed: AppError | null },
  ): Promise<{ created: boolean; item: DavItem }> {
    const walk = this.walk(caller, path, { write: 'content', creates: true });
    if (walk.kind === 'list') throw sharedListReadOnly();
    if (input.refused) throw input.refused;
    if (!walk.target) assertNotSharedListName(walk);
    const tokens = this.preconditions(caller, walk, input.conditions);
    if (input.malformed) throw input.malformed;
    const { conditions, href, refused: __, malformed: ___, ...given } = input;
    const heldEtag = this.heldEtag(walk.target, conditions);
    return this.put(walk.principal, walk.path, { ...given, heldEtag, lock: { tokens, href: href(walk, walk.target) } }, walk);
  }

  /** The ETag of the file at the target that the preconditions hold a write to (an ETag or a date), if they do. */
  heldEtag(target: DavTarget | null, c: DavConditions): string | undefined {
    return target?.kind === 'item' && namesVersion(c) ? target.item.etag : undefined;
  }

  /** A write's check, at its commit, that the file is still the one `heldEtag` names (412 once it changed or went). */
  private unchanged(heldEtag: string | undefined): ((current: Item | null) => void) | undefined {
    if (heldEtag === undefined) return undefined;
    return (current) => {
      if (current === null || etagOf(current) !== heldEtag) throw new AppError(412, CHANGED_WHILE_SENT);
    };
  }

  /**
   * Evaluates If-Match (412), If-None-Match (412) and the If header (400 malformed, 412 false) on the walk's resource;
   * a tagged list names its resource as `caller` sees the tree (inside a share: the owner's item). Returns the lock tokens the If header submitted.
   */
  preconditions(caller: Principal, walk: Pick<DavWalk, 'principal' | 'path' | 'target'>, c: DavConditions): Set<string> {
    const { target } = walk;
    const item = target?.kind === 'item' ? target.item : null;
    const named = (header: string) => item !== null && header.split(',').some((t) => t.trim() === item.etag);
    if (c.ifMatch && !(c.ifMatch.trim() === '*' ? target : named(c.ifMatch))) throw preconditionFailed('If-Match');
    if (!c.ifMatch && c.ifUnmodifiedSince && item && modifiedSince(c.ifUnmodifiedSince, item.modifiedAt))
      throw preconditionFailed('If-Unmodified-Since');
    if (c.ifNoneMatch && (c.ifNoneMatch.trim() === '*' ? target : item !== null && noneMatchNames(c.ifNoneMatch, item.etag)))
      throw new AppError(412, 'If-None-Match failed: the resource exists');
    if (c.malformed) throw c.malformed;
    const tokens = new Set<string>();
    if (c.lists.length === 0) return tokens;
    for (const list of c.lists) for (const cond of list.conditions) if (cond.token && !cond.not) tokens.add(cond.token);
    const own: Tagged = { accountId: walk.principal.accountId, key: walk.path.key, row: item };
    const holds = (list: DavIfList) => {
      if (list.tagged && !list.path) return false;
      const at = list.tagged ? this.tagged(caller, list.path!) : own;
      return list.conditions.every((cond) => {
        const ok =
          cond.token !== undefined
            ? this.d.locks.covering(at.accountId, at.key).some((l) => l.token === cond.token)
            : at.row !== null && at.row.etag === cond.etag;
        return ok !== cond.not;
      });
    };
    if (!c.lists.some(holds)) throw new AppError(412, 'The If header conditions are not met');
    return tokens;
  }

  /** What an If header's tag names, placed as `caller` names paths (a share's path is the owner's item); nothing where it cannot be placed. */
  private tagged(caller: Principal, path: DavPath): Tagged {
    const place = this.tryPlace(caller, path);
    if ('refused' in place || place.kind === 'list') return { accountId: caller.accountId, key: path.key, row: null };
    const target = this.find(place.principal, place.path).target;
    return { accountId: place.principal.accountId, key: place.path.key, row: target?.kind === 'item' ? target.item : null };
  }

  /** The walk of a write (a share's role: 403), SHARED_WITH_ME refused, what the door refuses, then the preconditions (412). */
  private enter(caller: Principal, path: DavPath, req: DavWrite, write?: 'write' | 'copy', creates = false): Entered {
    const walk = this.walk(caller, path, { write, creates });
    if (walk.kind === 'list') throw sharedListReadOnly();
    const refused = req.refuse?.(walk.target);
    if (refused) throw refused;
    if (!walk.target) assertNotSharedListName(walk);
    const tokens = this.preconditions(caller, walk, req.conditions);
    return { walk, tokens, href: req.href(walk, walk.target) };
  }

  /** MKCOL in one visit: the walk, the preconditions and the locks, then the folder. */
  mkcolAt(caller: Principal, path: DavPath, req: DavWrite): DavItem {
    const { walk, tokens, href } = this.enter(caller, path, req, 'write', true);
    this.assertUnlocked(walk.principal, walk.path, { tokens }, href);
    this.assertMembersUnlocked(walk.principal, walk.path, { tokens }, href);
    return this.mkcol(walk.principal, walk.path);
  }

  /** DELETE in one visit: the walk, 404 where nothing is, the root refused, the preconditions and the locks below, then to the trash. */
  async removeAt(caller: Principal, path: DavPath, req: DavWrite): Promise<void> {
    const { walk, tokens, href } = this.enter(
      caller,
      path,
      {
        ...req,
        refuse: (target) => {
          if (!target) return notFound(Messages.itemNotFound);
          if (target.kind === 'root') return forbidden('The root folder cannot be deleted');
          return req.refuse?.(target) ?? null;
        },
      },
      'write',
    );
    this.assertUnlocked(walk.principal, walk.path, { tokens }, href, true);
    this.assertMembersUnlocked(walk.principal, walk.path, { tokens }, href);
    await this.remove(walk.principal, walk.path, (walk.target as { kind: 'item'; item: DavItem }).item);
  }

  /** UNLOCK in one visit (false: no such lock there). */
  unlockAt(caller: Principal, path: DavPath, token: string | null, refused: AppError): boolean {
    const walk = this.walk(caller, path);
    if (walk.kind === 'list') throw sharedListReadOnly();
    if (!token) throw refused;
    return this.unlock(walk.principal, walk.path, token);
  }

  /**
   * PROPPATCH in one visit: the walk, 404 where nothing is, the preconditions and the locks, then the
   * patches, unless the target is the root or a patch sets a live property (`isLive`): the answer then
   * refuses them all, and `refused` names those live ones. An oc:checksums set to the SHA1 the file has
   * already changes nothing and is not refused: rclone sends it beside a new modified time.
   */
  patchAt(
    caller: Principal,
    path: DavPath,
    req: DavWrite,
    patches: readonly PropPatch[],
    isLive: (patch: PropPatch) => boolean,
    modifiedMs: number | null = null,
  ): { walk: DavWalk; refused: PropPatch[] } {
    const { walk, tokens, href } = this.enter(
      caller,
      path,
      {
        ...req,
        refuse: (target) => req.refuse?.(target) ?? (target ? null : notFound(Messages.itemNotFound)),
      },
      'write',
    );
    this.assertUnlocked(walk.principal, walk.path, { tokens }, href);
    if (patches.length === 0) throw badRequest('PROPPATCH names no property to set or remove');
    const target = walk.target as DavTarget;
    if (target.kind !== 'item') return { walk, refused: [] };
    const restated = patches.filter((p) => this.restatesChecksum(target.item, p));
    const refused = patches.filter((p) => isLive(p) && !restated.includes(p));
    if (refused.length === 0)
      this.patchProperties(
        walk.principal,
        target.item,
        patches.filter((p) => !restated.includes(p)),
        modifiedMs,
      );
    return { walk, refused };
  }

  /** Whether `patch` sets oc:checksums to exactly the SHA1 the file has (as PROPFIND answers it). */
  private restatesChecksum(item: HeldItem, patch: PropPatch): boolean {
    if (patch.ns !== OC_NS || patch.name !== 'checksums' || patch.value === null || item.type !== 'file') return false;
    const sha1 = this.d.checksums.ofItems([item.id]).get(item.id);
    const given = patch.value
      .replace(/<[^>]*>/g, ' ')
      .trim()
      .split(/\s+/);
    return sha1 !== undefined && given.length === 1 && given[0]!.toLowerCase() === `sha1:${sha1}`;
  }

  /** LOCK in one visit: the walk and the preconditions, then a new lock, or with `refresh` the one the If header names (null: it names none). */
  async lockAt(
    caller: Principal,
    path: DavPath,
    req: DavWrite,
    input: { refresh: number | null } | Omit<Parameters<DavService['lock']>[2], 'href'>,
  ): Promise<{ lock: DavLock | null; created: boolean }> {
    const { walk, tokens, href } = this.enter(caller, path, req, 'write', true);
    if ('refresh' in input) return { lock: this.refreshLock(walk.principal, walk.path, tokens, input.refresh), created: false };
    this.assertMembersUnlocked(walk.principal, walk.path, { tokens }, href, () => !walk.target);
    return this.lock(walk.principal, walk.path, { ...input, href });
  }

  /**
   * COPY or MOVE in one visit: the source's walk, the Destination's (`dest`, or the 4xx the protocol gave
   * it), both in one tree (else 403), what the door refuses, 404 and the root refused, the preconditions,
   * the locks on both, then the transfer.
   */
  async transferAt(
    caller: Principal,
    op: 'copy' | 'move',
    path: DavPath,
    req: DavWrite & { dest: DavPath | AppError; hrefAt: (place: DavPlace, path: DavPath, folder: boolean) => string },
    opts: { overwrite: boolean; shallow: boolean; sameUrl: boolean },
  ): Promise<{ created: boolean }> {
    // Each path placed once; what placing one refused is thrown where its walk comes.
    const from = this.tryPlace(caller, path);
    const to = req.dest instanceof AppError ? null : this.tryPlace(caller, req.dest, true);
    // A COPY between two trees (out of a share or team folder into your files, or into another you edit) is a
    // copy across accounts, as the API's: the source is only read, the destination written as its tree allows.
    const across = op === 'copy' && crossesTrees(from, to);
    const walk = this.walkIn(placed(from), { write: across ? undefined : op === 'copy' ? 'copy' : 'write' });
    if (walk.kind === 'list') throw sharedListReadOnly();
    if (req.dest instanceof AppError) throw req.dest;
    const destPlace = across ? this.walkIn(placed(to!), { write: 'write' }) : placed(to!);
    if (!across && (!sameTree(walk, destPlace) || (destPlace.kind === 'mount' && destPlace.isRoot)))
      throw forbidden(Messages.shareBoundary);
    assertNotSharedListName(destPlace);
    const refused = req.refuse?.(walk.target);
    if (refused) throw refused;
    const target = walk.target;
    if (!target) throw notFound(Messages.itemNotFound);
    if (target.kind === 'root') throw forbidden(`The root folder cannot be ${op === 'move' ? 'moved' : 'copied'}`);
    const tokens = this.preconditions(caller, walk, req.conditions);
    // An existing destination with Overwrite: F, or the root, fails whatever the locks, so 412 or 403 before any 423 (as Apache mod_dav).
    // Looked up only where an answer depends on it: the transfer looks it up again.
    const destLocked = this.d.locks.affecting(destPlace.principal.accountId, destPlace.path.key).length > 0;
    const there =
      !opts.overwrite || destLocked || destPlace.path.segments.length === 0 ? this.find(destPlace.principal, destPlace.path).target : null;
    if (there?.kind === 'root') throw forbidden('The root folder cannot be replaced');
    if (!opts.overwrite && there && there.item.id !== target.item.id) throw overwriteRefused();
    if (op === 'move') {
      this.assertUnlocked(walk.principal, walk.path, { tokens }, req.href(walk, target), true);
      this.assertMembersUnlocked(walk.principal, walk.path, { tokens }, req.href(walk, target));
    }
    // A 423 names the resource that is there: a file replaced by a folder has no slash.
    const destHref = req.hrefAt(destPlace, destPlace.path, there ? there.item.type === 'folder' : target.item.type === 'folder');
    this.assertUnlocked(destPlace.principal, destPlace.path, { tokens }, destHref, true);
    this.assertMembersUnlocked(
      destPlace.principal,
      destPlace.path,
      { tokens },
      destHref,
      () => !this.find(destPlace.principal, destPlace.path).target,
    );
    // Checked again where a copy's bytes are committed onto the destination file: another client may have saved or locked it meanwhile.
    const heldEtag = this.heldAt(caller, destPlace, req.conditions);
    const atCommit = (current: Item) => {
      if (heldEtag !== undefined && etagOf(current) !== heldEtag) throw new AppError(412, CHANGED_WHILE_SENT);
      this.assertUnlocked(destPlace.principal, destPlace.path, { tokens }, destHref, true);
    };
    // And where a copy to a new destination lands: its folder (or one above) may have been locked meanwhile.
    const landing = () => {
      this.assertUnlocked(destPlace.principal, destPlace.path, { tokens }, destHref, true);
      this.assertMembersUnlocked(destPlace.principal, destPlace.path, { tokens }, destHref);
    };
    return this.transfer(
      destPlace.principal,
      op,
      { path: walk.path, item: target.item },
      destPlace.path,
      { ...opts, atCommit, landing },
      walk.principal,
    );
  }

  /** The ETag of the file at `place` that a tagged list of the If header holds a write to (it names that path with an ETag), if any. */
  private heldAt(caller: Principal, place: DavPlace, c: DavConditions): string | undefined {
    for (const list of c.lists) {
      if (!list.tagged || !list.path || !list.conditions.some((cond) => cond.etag !== undefined && !cond.not)) continue;
      const at = this.tagged(caller, list.path);
      if (at.accountId === place.principal.accountId && at.key === place.path.key && at.row?.type === 'file') return at.row.etag;
    }
    return undefined;
  }

  /** The place of `path`, or what placing it threw. */
  private tryPlace(caller: Principal, path: DavPath, creates = false): DavPlace | Refused {
    try {
      return this.place(caller, path, creates);
    } catch (err) {
      return { refused: err };
    }
  }

  private place(caller: Principal, path: DavPath, creates = false): DavPlace {
    if (path.segments.length === 0) return { kind: 'own', principal: caller, path };
    // The Nextcloud doors name SHARED_WITH_ME, a share and a team folder in their exact case, as any item.
    const named = (segment: string, name: string) => !path.exactCase || segment === name;
    if (davPath(path.segments.slice(0, 1)).key !== SHARED_KEY || !named(path.segments[0]!, SHARED_WITH_ME)) {
      // A team folder the account reaches is at the root too, unless an own item has its name.
      const team = this.teamMount(caller, path.segments[0]!);
      return team && named(path.segments[0]!, team.name)
        ? mountPlace(team, path.segments.slice(1), path.exactCase)
        : { kind: 'own', principal: caller, path };
    }
    const shares = this.shares(caller);
    const mount = path.segments.length > 1 ? this.mount(caller, shares, path.segments[1]!) : null;
    // Directly inside it, shared or not, nothing new is made: it is not where the client's item would be.
    if (creates && !caller.share && path.segments.length === 2 && !(mount && named(path.segments[1]!, mount.name)))
      throw sharedListReadOnly();
    if (shares.length === 0) return { kind: 'own', principal: caller, path };
    if (path.segments.length === 1) return { kind: 'list', principal: caller, path, shares };
    if (mount && !named(path.segments[1]!, mount.name)) throw notFound(Messages.itemNotFound);
    if (!mount) throw notFound(Messages.itemNotFound);
    return mountPlace(mount, path.segments.slice(2), path.exactCase);
  }

  private view(place: DavPlace, target: DavTarget, needs: DavListingNeeds): DavTreeView {
    const { principal } = place;
    const shares = place.kind === 'list' ? place.shares : place.kind === 'own' ? this.shares(principal) : [];
    // At the root only: listed there, and in its ETag (which nothing below the root answers).
    const atRoot = place.kind === 'own' && target.kind === 'root';
    const teams = atRoot && this.reachesTeam(principal) ? this.teamFolders(principal) : [];
    const mounted = !needs.children ? [] : place.kind === 'list' ? shares : teams;
    const folder = target.kind === 'root' || target.item.type === 'folder';
    const shareRoots: Map<string, 'viewer' | 'editor'> =
      place.kind === 'mount'
        ? new Map([[principal.share!.rootId, place.mount.role]])
        : new Map((place.kind === 'list' ? shares : mounted).map((s) => [s.item.id, s.role]));
    return {
      rootEtag: atRoot ? this.rootEtag(principal, [...shares, ...teams]) : null,
      sharedEtag: place.kind !== 'mount' && shares.length ? this.sharedEtag(shares) : null,
      sharedModifiedAt: Math.max(0, ...shares.map((s) => s.item.modifiedAt)),
      sharedSize: shares.reduce((n, s) => n + (s.item.type === 'folder' ? s.item.treeSize : s.item.size), 0),
      role: place.kind === 'mount' ? place.mount.role : place.kind === 'list' ? 'viewer' : 'owner',
      shareRoots,
      sharedOut: place.kind === 'own' && needs.sharedOut ? this.sharedOut(principal) : NOTHING_SHARED,
      usage: this.usage(principal),
      locks: this.d.locks.affecting(principal.accountId, place.path.key),
      rootSize: this.d.items.rootSize(principal.accountId),
      self: this.rowsOf(target.kind === 'item' ? [target.item] : [], needs),
      mounts: {
        shares: mounted,
        rows: this.rowsOf(
          mounted.map((s) => s.item),
          needs,
        ),
      },
      children:
        needs.children && folder && place.kind !== 'list'
          ? this.childRows(principal, target.kind === 'root' ? null : target.item.id, needs)
          : null,
      syncToken: null,
    };
  }

  /** Children with what their answer needs, LISTING_BATCH rows at a time. */
  private async *childRows(principal: Principal, folderId: string | null, needs: DavListingNeeds): AsyncGenerator<DavRows<DavEntry>> {
    for await (const page of this.children(principal, folderId))
      for (let at = 0; at < page.length; at += LISTING_BATCH) yield this.rowsOf(page.slice(at, at + LISTING_BATCH), needs);
  }

  /** Rows with what their answer needs: one query for each of dead properties, previews and SHA1s, only when asked for. */
  rowsOf<Row extends DavItem | DavEntry>(rows: Row[], needs: Pick<DavListingNeeds, 'dead' | 'previews' | 'checksums'>): DavRows<Row> {
    const dead = new Map<string, DavProperty[]>();
    if (needs.dead) {
      const ids = rows.filter((r) => !('hasProperties' in r) || r.hasProperties).map((r) => r.id);
      for (const p of ids.length ? this.d.properties.ofItems(ids) : []) {
        const list = dead.get(p.itemId);
        if (list) list.push(p);
        else dead.set(p.itemId, [p]);
      }
    }
    const files = needs.previews || needs.checksums ? rows.filter((r) => r.type === 'file').map((r) => r.id) : [];
    return {
      rows,
      dead,
      previews: needs.previews && files.length ? this.d.previews.previewable(files) : NOTHING_SHARED,
      checksums: needs.checksums && files.length ? this.d.checksums.ofItems(files) : NO_CHECKSUMS,
    };
  }

  /**
   * The WebDAV name of an item of the account's own tree: an own item at the root named SHARED_WITH_ME (the
   * path that lists what is shared with the account) is numbered past the names at the root and the team
   * folders', as Nextcloud numbers a share where its name is taken; shared or not, so its path never moves.
   */
  davName(principal: Principal, parentId: string | null, name: string): string {
    return parentId === null && !principal.share && nameKeyOf(name) === SHARED_NAME_KEY ? this.namesake(principal, name).name : name;
  }

  private namesake(principal: Principal, name: string): { name: string; nameKey: string } {
    const teams = this.reachesTeam(principal) ? this.teamFolders(principal).map((t) => nameKeyOf(t.name)) : [];
    for (let n = 1; ; n++) {
      const numbered = `${name} (${n})`;
      const key = nameKeyOf(numbered);
      if (!this.d.items.liveByName(principal.accountId, null, numbered) && !teams.includes(key)) return { name: numbered, nameKey: key };
    }
  }

  /** The own item a WebDAV name at the root names: SHARED_WITH_ME none (what is shared with the account is there), its namesake's numbered name that item. */
  private ownAtRoot(principal: Principal, segment: string): Item | null {
    const key = nameKeyOf(segment);
    if (key === SHARED_NAME_KEY) return null;
    const row = this.d.items.liveByName(principal.accountId, null, segment);
    if (row || !key.startsWith(NUMBERED_SHARED)) return row;
    const namesake = this.d.items.liveByName(principal.accountId, null, SHARED_WITH_ME);
    if (!namesake) return null;
    const named = this.namesake(principal, namesake.name);
    return named.nameKey === key ? { ...namesake, ...named } : null;
  }

  resolve(principal: Principal, path: DavPath): DavTarget | null {
    return this.find(principal, path).target;
  }

  /** What is at `path` and the folder above it. */
  private find(principal: Principal, path: DavPath): DavFound {
    // A name per segment: several under one WAL read lock (two fcntl calls each alone), one snapshot of the path.
    return path.segments.length > 1 ? this.d.transactions.read(() => this.lookUp(principal, path)) : this.lookUp(principal, path);
  }

  private lookUp(principal: Principal, path: DavPath): DavFound {
    let parentId: string | null = null;
    let row: Item | null = null;
    for (const [i, segment] of path.segments.entries()) {
      const last = i === path.segments.length - 1;
      row =
        i === 0 && !principal.share ? this.ownAtRoot(principal, segment) : this.d.items.liveByName(principal.accountId, parentId, segment);
      // Another letter case there is a name nothing has: the clients check that a rename's old path is gone.
      if (row && path.exactCase && row.name !== segment) row = null;
      if (!row) return { target: null, parent: last ? { id: parentId } : null };
      if (row.type !== 'folder' && !last) return NOTHING_FOUND;
      if (!last) parentId = row.id;
    }
    return {
      target: row ? { kind: 'item', item: davItem(row, rightsTag(principal)) } : { kind: 'root' },
      parent: row ? { id: parentId } : null,
    };
  }

  /**
   * The folder a new resource at `path` goes into (null: the root); 409 when it is missing (RFC 4918 §9.7.1).
   * `found`: the folder a look at `path` found in the caller's turn, else it is looked up.
   */
  parentFolder(principal: Principal, path: DavPath, found?: DavParent): string | null {
    if (path.segments.length === 0) throw forbidden('The root folder cannot be replaced');
    const above = path.segments.slice(0, -1);
    const folder = found !== undefined ? found : folderOf(this.resolve(principal, davPath(above, path.exactCase)));
    if (folder) return folder.id;
    // A folder of that name in another case (an app's InstantUpload beside an instantUpload): say so, or the upload fails unexplained at each try.
    const other =
      path.exactCase && above.length > 0 && above.every((s) => s === s.trim())
        ? folderOf(this.resolve(principal, davPath(above, false)))
        : null;
    if (other)
      throw conflict(
        `The folder "${above.join('/')}" does not exist in this letter case, but one whose name differs only in case does, and letter case counts in these addresses: choose that folder in the app as it is written, or rename it to "${above.at(-1)}"`,
      );
    throw conflict('The parent folder does not exist');
  }

  /** The last segment as a new item's name, or 400 with the API's reason. */
  newName(path: DavPath): string {
    const name = path.segments.at(-1)!;
    const problem = path.exactCase ? exactNameProblem(name) : nameProblem(name);
    if (problem) throw badRequest(`${problem}: ${JSON.stringify(name)}`);
    return name;
  }

  /** Live children of a folder (null: the root) in name order after the name key `after`, a page at a time. */
  async *children(principal: Principal, folderId: string | null, after = ''): AsyncGenerator<DavEntry[]> {
    const tag = rightsTag(principal);
    const atRoot = folderId === null && !principal.share;
    // A listing continued after the own namesake of SHARED_WITH_ME goes on from where its stored name sorts.
    if (
      atRoot &&
      after.startsWith(NUMBERED_SHARED) &&
      !this.d.items.liveByName(principal.accountId, null, after) &&
      this.ownAtRoot(principal, after)
    )
      after = SHARED_NAME_KEY;
    for (;;) {
      const rows = this.d.items.liveChildEntriesByName(principal.accountId, folderId, after, PAGE);
      if (rows.length)
        yield rows.map((r) => ({
          seq: r.seq,
          id: r.id,
          type: r.type,
          ...(atRoot && r.nameKey === SHARED_NAME_KEY ? this.namesake(principal, r.name) : { name: r.name, nameKey: r.nameKey }),
          size: r.size,
          mimeType: r.mimeType,
          modifiedAt: r.modifiedAt,
          createdAt: r.createdAt,
          treeVersion: r.treeVersion,
          treeSize: r.treeSize,
          etagXml: etagXmlOf(r, tag),
          hasProperties: r.hasProperties,
        }));
      if (rows.length < PAGE) return;
      after = rows.at(-1)!.nameKey;
    }
  }

  /**
   * The ETag of the account's root (of the tree `principal` acts in): it moves with any change in the
   * tree and, for SHARED_WITH_ME's and the team folders' sake, with any change in what is shared with the account.
   */
  private rootEtag(principal: Principal, shares: readonly DavShare[]): string {
    return `"root-${this.d.items.rootVersion(principal.accountId)}${shares.length ? `-${sharesTag(shares)}` : ''}${rightsTag(principal)}"`;
  }

  /** The ETag of SHARED_WITH_ME: moves when a share comes or goes or anything inside one changes. */
  private sharedEtag(shares: readonly DavShare[]): string {
    return `"shared-${sharesTag(shares)}"`;
  }

  usage(principal: Principal): Usage {
    return this.d.quota.usage(principal.accountId);
  }

  /**
   * Refuses (423) a write to `path` while a lock the request did not prove applies: a lock on it or
   * covering it, and with `subtree`, any lock below it (DELETE or MOVE of a folder).
   */
  assertUnlocked(principal: Principal, path: DavPath, proof: LockProof, href: string, subtree = false): void {
    const locks = subtree ? this.d.locks.affecting(principal.accountId, path.key) : this.d.locks.covering(principal.accountId, path.key);
    const unproven = unprovenLock(locks, path.key, proves(principal, proof));
    if (unproven) throw locked(hrefBelow(href, path, unproven));
  }

  /**
   * 423 when the folder holding `path` has a depth-0 lock the request does not prove and the write adds or removes
   * `path` (`changes`, asked only then): such a lock guards the folder's members (RFC 4918 §7.5).
   */
  private assertMembersUnlocked(principal: Principal, path: DavPath, proof: LockProof, href: string, changes = () => true): void {
    if (path.segments.length === 0) return;
    const folderKey = path.key.slice(0, path.key.lastIndexOf('/'));
    const guards = this.d.locks.covering(principal.accountId, folderKey).filter((l) => l.key === folderKey && l.depth === '0');
    if (unprovenLock(guards, folderKey, proves(principal, proof)) && changes()) throw locked(href);
  }

  /**
   * PUT: new content for a file at `path` (replacing an existing one's content, id kept), streamed through
   * the upload pipeline. `walked`, when given, is what the request's walk found at `path` and above it, in this same turn.
   */
  async put(
    principal: Principal,
    path: DavPath,
    input: PutInput & { lock: LockedBy },
    walked?: DavFound,
  ): Promise<{ created: boolean; item: DavItem }> {
    this.assertUnlocked(principal, path, input.lock, input.lock.href);
    this.assertMembersUnlocked(principal, path, input.lock, input.lock.href, () => !(walked ?? this.find(principal, path)).target);
    return this.putUnlocked(principal, path, input, walked);
  }

  /** `walked` (what is at `path` and above it, found in the caller's turn) stands while no other write to `path` ran first; one that waited looks again. */
  private async putUnlocked(
    principal: Principal,
    path: DavPath,
    input: PutInput,
    walked?: DavFound,
  ): Promise<{ created: boolean; item: DavItem }> {
    return this.writes.run(`${principal.accountId}\n${path.key}`, (waited) =>
      this.putNow(principal, path, input, waited || walked === undefined ? this.find(principal, path) : walked),
    );
  }

  private async putNow(
    principal: Principal,
    path: DavPath,
    given: PutInput,
    found: DavFound,
  ): Promise<{ created: boolean; item: DavItem }> {
    const written = await this.write(principal, path, given.sha1 ? { ...given, body: sha1Checked(given.body, given.sha1) } : given, found);
    if (given.sha1) {
      const row = this.d.items.getLive(principal.accountId, written.item.id);
      if (row?.storageKey) this.d.checksums.set(row.id, row.storageKey, given.sha1.toLowerCase());
    }
    return written;
  }

  /** Writes `input` at `path`, where `found` is what is there now and the folder above it. */
  private async write(
    principal: Principal,
    path: DavPath,
    input: PutInput,
    { target, parent }: DavFound,
  ): Promise<{ created: boolean; item: DavItem }> {
    const fields: Array<{ kind: 'field'; name: string; value: string }> = [];
    const modified = input.modifiedMs ?? undefined;
    if (target?.kind === 'item') {
      if (target.item.type === 'folder') throw new AppError(405, 'A folder is here; PUT writes files only');
      this.allow(principal, 'uploads.replace');
      const parts = partsOf(fields, target.item.name, input);
      const view = await this.d.uploads.replace(
        principal,
        target.item.id,
        { parts, signal: input.signal, sizeHint: input.sizeHint, expect: this.unchanged(input.heldEtag), modified },
        'webdav',
      );
      return { created: false, item: davItem(this.d.items.getLive(principal.accountId, view.id)!) };
    }
    if (target?.kind === 'root') throw new AppError(405, 'The root folder cannot be written');
    // The file the preconditions named went while another write to its path ran first.
    if (input.heldEtag) throw new AppError(412, CHANGED_WHILE_SENT);
    this.allow(principal, 'uploads.upload');
    // Found in this turn, before the write lock: the upload's commit finds the folder again under it (deleted, trashed: 404).
    const parentId = this.parentFolder(principal, path, parent);
    const name = this.newName(path);
    if (parentId) fields.push({ kind: 'field', name: 'parentId', value: parentId });
    const parts = partsOf(fields, name, input);
    const { row } = await this.d.uploads.uploadRow(
      principal,
      { parts, signal: input.signal, sizeHint: input.sizeHint, foundFolder: parentId ?? undefined, exactName: true, modified },
      'webdav',
    );
    return { created: true, item: davItem(row) };
  }

  /**
   * The final MOVE of a chunked upload sealed straight into its object: that object becomes the content
   * of the file at `path` (created, or replaced with its content before kept as a version), checked as
   * a PUT is; the upload ends inside the transaction that writes the file.
   */
  /**
   * A chunked upload's final MOVE (`owner` its uploader): the file its chunks make, written at `path` as a
   * PUT there is, from the upload's own sealed object when it has one, else from its chunks read in order.
   */
  async putAssembled(
    owner: Principal,
    transfer: string,
    principal: Principal,
    path: DavPath,
    input: { declared: number | null; modifiedMs: number | null; sha1?: string; signal?: AbortSignal; lock: LockedBy; heldEtag?: string },
  ): Promise<{ created: boolean; item: DavItem }> {
    this.assertUnlocked(principal, path, input.lock, input.lock.href);
    this.assertMembersUnlocked(principal, path, input.lock, input.lock.href, () => !this.find(principal, path).target);
    const { declared, lock: _, ...given } = input;
    const upload = await this.d.chunked.assemble(owner, transfer, { principal, declared, sha1: given.sha1 });
    try {
      // An upload written from its own object ends with the file; one read from its chunks ends after it.
      if (upload.kind === 'object') return await this.putObject(principal, path, upload.object, given);
      const written = await this.putUnlocked(principal, path, { ...given, body: upload.body, contentType: '', sizeHint: upload.size });
      await this.d.chunked.finish(upload.id);
      return written;
    } finally {
      upload.release();
    }
  }

  private async putObject(
    principal: Principal,
    path: DavPath,
    object: AssembledObject,
    input: { modifiedMs: number | null; sha1?: string; heldEtag?: string },
  ) {
    return this.writes.run(`${principal.accountId}\n${path.key}`, async (): Promise<{ created: boolean; item: DavItem }> => {
      const target = this.resolve(principal, path);
      if (target?.kind === 'root') throw new AppError(405, 'The root folder cannot be written');
      if (target?.item.type === 'folder') throw new AppError(405, 'A folder is here; PUT writes files only');
      const replaced = target?.item ?? null;
      this.allow(principal, replaced ? 'uploads.replace' : 'uploads.upload');
      const parentId = replaced ? replaced.parentId : this.parentFolder(principal, path);
      const view = await this.d.uploads.commitResumed(
        principal,
        {
          ...object,
          clientType: null,
          name: replaced ? replaced.name : this.newName(path),
          parentId,
          relativePath: null,
          modified: input.modifiedMs,
          replaceId: replaced?.id ?? null,
          exactName: true,
          expect: this.unchanged(input.heldEtag),
        },
        (row) => {
          // A member's share read again at the commit, as a PUT's is: it may have ended or turned viewer while the chunks were joined.
          this.d.tree.actorNow(principal, replaced ? { ids: [row.id] } : { parentId: row.parentId }, replaced ? 'content' : 'edit');
          object.within();
        },
      );
      if (input.sha1) this.d.checksums.set(view.id, object.storageKey, input.sha1.toLowerCase());
      return { created: !replaced, item: davItem(this.d.items.getLive(principal.accountId, view.id)!) };
    });
  }

  mkcol(principal: Principal, path: DavPath): DavItem {
    this.allow(principal, 'items.createFolder');
    if (this.resolve(principal, path)) throw new AppError(405, 'Something already exists at this path');
    // Taken in another letter case (a door with exact case): one name, never a `(n)` folder beside it.
    const other = path.exactCase ? this.resolve(principal, { ...path, exactCase: false }) : null;
    if (other?.kind === 'item') {
      const asked = path.segments.at(-1)!;
      throw conflict(
        `"${other.item.name}" already exists here, and names differing only in letter case are one name on this server: use "${other.item.name}" as it is written, or rename it to "${asked}"`,
      );
    }
    const parentId = this.parentFolder(principal, path);
    const created = this.d.listing.createFolder(principal, { name: this.newName(path), parentId });
    return davItem(this.d.items.getLive(principal.accountId, created.id)!, rightsTag(principal));
  }

  /** DELETE: to the trash (restorable there), never a permanent delete. */
  async remove(principal: Principal, path: DavPath, row: HeldItem): Promise<void> {
    this.allow(principal, 'trash.trash');
    // In turns: a folder of 50,000 items held every other request for seconds.
    await runInTurns(this.d.trash.trashSteps(principal.accountId, principal.loginId, [row.id]));
    this.d.locks.forget(principal.accountId, path.key);
  }

  /**
   * COPY and MOVE: `source` to `dest`. With `overwrite` (else 412) an existing destination file given a
   * file keeps its id and gets the source's content, its own becoming a version; any other existing
   * destination is trashed first, and restored when the copy or move then fails. The result says whether the
   * destination is new (201) or replaced (204). `from` reads the source when a COPY crosses trees (`principal`
   * then writes the destination's).
   */
  async transfer(
    principal: Principal,
    op: 'copy' | 'move',
    source: { path: DavPath; item: HeldItem },
    dest: DavPath,
    opts: { overwrite: boolean; shallow: boolean; sameUrl: boolean; atCommit?: (current: Item) => void; landing?: () => void },
    from: Principal = principal,
  ): Promise<{ created: boolean }> {
    this.allow(principal, op === 'copy' ? 'copy.start' : 'items.move');
    const oneTree = from.accountId === principal.accountId;
    // A change of letter case only is a rename; the same name again changes nothing: refused onto the request's own URL
    // (RFC 4918), done at once when spelled otherwise (the desktop client renames café.txt to its NFD spelling, as Nextcloud takes it).
    if (oneTree && dest.key === source.path.key && dest.segments.at(-1) === source.item.name) {
      if (op === 'move' && !opts.sameUrl) return { created: true };
      throw forbidden('The source and destination are the same');
    }
    if (oneTree && source.item.type === 'folder' && isAncestorPath(source.path, dest))
      throw forbidden(`A folder cannot be ${op === 'copy' ? 'copied' : 'moved'} into itself`);
    // The destination's path looked up once: its folder, and what is there.
    const found = this.find(principal, dest);
    const parentId = this.parentFolder(principal, dest, found.parent);
    const name = this.newName(dest);
    const existing = found.target;
    if (existing?.kind === 'root') throw forbidden('The root folder cannot be replaced');
    // A MOVE that only changes the letter case of the name finds the source itself at the destination.
    const replaced = existing && existing.item.id !== source.item.id ? existing.item : null;
    // A copy takes its source's properties along: refused before anything changes when they would not fit.
    const copiedBytes = op === 'copy' ? this.d.properties.usage(source.item.id).bytes - PROPERTY_LIMITS.freeBytesPerItem : 0;
    if (copiedBytes > 0) this.assertPropertyRoom(principal.accountId, copiedBytes);
    if (replaced && !opts.overwrite) throw overwriteRefused();
    // Trashing the destination would take the source with it: the request could only fail, after a trash and a restore.
    if (replaced && oneTree && isAncestorPath(dest, source.path))
      throw forbidden('The destination is a folder holding the source: it cannot be replaced by what is inside it');
    // A file onto a file: the destination stays (id, shares, stars), its content before becomes a version.
    if (replaced?.type === 'file' && source.item.type === 'file') {
      this.allow(principal, 'uploads.replace');
      if (op === 'move' && !this.d.copy.inLibraries([source.item.id, replaced.id])) {
        this.d.uploads.moveOnto(principal, source.item.id, replaced.id);
        this.d.locks.forget(principal.accountId, source.path.key);
        return { created: false };
      }
      // A library file's content is a host file, not an object to hand over: a copy, then (a MOVE) a delete.
      // A read-only library refuses before any byte is copied.
      this.d.items.checkChange({ kind: 'change', itemId: replaced.id });
      if (op === 'move') this.d.items.checkChange({ kind: 'change', itemId: source.item.id });
      const copied = this.stored(from, source.item.id);
      await this.d.copy.copyOnto(copied, (object) =>
        this.d.uploads.commitStored(principal, replaced.id, object, source.item.modifiedAt, opts.atCommit),
      );
      if (op === 'move') {
        this.d.copy.deleteMovedFile(principal, copied);
        this.d.locks.forget(principal.accountId, source.path.key);
      }
      return { created: false };
    }
    if (replaced) {
      this.allow(principal, 'trash.trash');
      this.d.trash.trashTrees(principal.accountId, principal.loginId, [replaced.id]);
    }
    try {
      if (op === 'move' && this.d.copy.crossesLibraries([source.item.id], parentId)) {
        await this.d.copy.moveAcross(principal, [source.item.id], parentId, name, opts.landing);
        this.d.locks.forget(principal.accountId, source.path.key);
      } else if (op === 'move') {
        this.d.listing.relocate(principal, { id: source.item.id, parentId, name });
        this.d.locks.forget(principal.accountId, source.path.key);
      } else {
        const copy = await this.d.copy.copyNow(
          principal,
          this.stored(from, source.item.id),
          parentId,
          name,
          opts.shallow,
          replaced?.id ?? null,
          opts.landing,
        );
        this.d.properties.copy(source.item.id, copy.id);
      }
    } catch (err) {
      // All or nothing: a destination trashed for a COPY or MOVE that then failed comes back.
      if (replaced) this.d.trash.restoreTrees(principal.accountId, principal.loginId, [replaced.id]);
      throw err;
    }
    if (replaced) this.d.locks.forget(principal.accountId, dest.key);
    return { created: !replaced };
  }

  /** The stored row of a held item (its key material with it), else 404: it went meanwhile. */
  private stored(principal: Principal, id: string): Item {
    const row = this.d.items.getLive(principal.accountId, id);
    if (!row) throw notFound(Messages.itemNotFound);
    return row;
  }

  /**
   * PROPPATCH: all instructions in order, in one transaction (RFC 4918 §9.2: all or nothing); 507 past PROPERTY_LIMITS.
   * `modifiedMs` (a DAV:lastmodified set, as Nextcloud takes it) becomes the item's modified time too, outside libraries,
   * whose files' times are their host files'.
   */
  patchProperties(principal: Principal, row: HeldItem, patches: readonly PropPatch[], modifiedMs: number | null = null): void {
    this.allow(principal, 'items.rename');
    const { perItem, bytesPerItem } = PROPERTY_LIMITS;
    const itemCaps = `an item keeps at most ${perItem.toLocaleString('en-US')} WebDAV properties and ${formatSize(bytesPerItem)} of them`;
    if (patches.length > perItem)
      throw propertiesFull(`This PROPPATCH has ${patches.length.toLocaleString('en-US')} instructions; ${itemCaps}`);
    const announce = this.d.transactions.immediate(() => {
      const before = this.d.properties.usage(row.id);
      for (const p of patches) {
        if (p.value === null) this.d.properties.remove(row.id, p.ns, p.name);
        else this.d.properties.set({ itemId: row.id, ns: p.ns, name: p.name, value: p.value, lang: p.lang });
      }
      const after = this.d.properties.usage(row.id);
      // Throwing rolls the transaction back: nothing of the PROPPATCH is kept.
      if (after.count > perItem || after.bytes > bytesPerItem)
        throw propertiesFull(`${row.name} would have ${after.count} properties of ${formatSize(after.bytes)}; ${itemCaps}`);
      if (after.bytes > Math.max(before.bytes, PROPERTY_LIMITS.freeBytesPerItem)) this.assertPropertyRoom(principal.accountId, 0);
      return modifiedMs !== null && !this.d.copy.inLibraries([row.id]) ? this.d.listing.setModified(principal, row, modifiedMs) : null;
    });
    announce?.();
  }

  /** 507 when the account's properties beyond each item's free KiB, plus `more`, exceed PROPERTY_LIMITS.accountBytes. */
  private assertPropertyRoom(accountId: string, more: number): void {
    const { freeBytesPerItem, accountBytes } = PROPERTY_LIMITS;
    if (this.d.properties.accountBytesBeyond(accountId, freeBytesPerItem) + more <= accountBytes) return;
    throw propertiesFull(
      `The WebDAV properties of this account are full: beyond ${formatSize(freeBytesPerItem)} per item they may take ${formatSize(accountBytes)}; remove some first`,
    );
  }

  /**
   * LOCK: a new lock on `path`. An unmapped path gets an empty file first (RFC 4918 §7.3), which needs
   * the upload permission; locking an existing item needs the modify permission.
   */
  async lock(
    principal: Principal,
    path: DavPath,
    input: Omit<DavLock, 'token' | 'expiresAt' | 'accountId' | 'loginId' | 'credential' | 'key' | 'path' | 'share'>,
  ): Promise<{ lock: DavLock; created: boolean }> {
    const target = this.resolve(principal, path);
    this.allow(principal, target ? 'items.rename' : 'uploads.upload');
    const lock = this.d.locks.lock({
      ...input,
      accountId: principal.accountId,
      loginId: principal.loginId,
      credential: principal.sessionId,
      key: path.key,
      path: `/${path.segments.join('/')}`,
      share: principal.share ? { rootId: principal.share.rootId, memberAccountId: principal.share.memberAccountId } : null,
    });
    if (target) return { lock, created: false };
    try {
      await this.putUnlocked(principal, path, { body: noBytes(), contentType: '', modifiedMs: null });
    } catch (err) {
      this.d.locks.unlock(lock.token);
      throw err;
    }
    return { lock, created: true };
  }

  /**
   * LOCK without a body: refreshes the lock on `path` the request names in its If header (null: it names
   * none). Only the login that took a lock refreshes it; another's token is 403.
   */
  refreshLock(principal: Principal, path: DavPath, tokens: ReadonlySet<string>, timeoutSeconds: number | null): DavLock | null {
    const named = this.d.locks.covering(principal.accountId, path.key).filter((l) => tokens.has(l.token));
    const own = named.find((l) => l.loginId === principal.loginId);
    if (own) return this.d.locks.refresh(own, timeoutSeconds);
    if (named.length) throw forbidden('This lock belongs to another login; only the login that took it can refresh it');
    return null;
  }

  /** UNLOCK of the lock `token` on `path` (false: no such lock there): by the login that took it, or the account owner. */
  unlock(principal: Principal, path: DavPath, token: string): boolean {
    const held = this.d.locks.covering(principal.accountId, path.key).find((l) => l.token === token);
    if (!held) return false;
    // The owner's own login: a member acting inside a share is the owner of another account, not of this one.
    if (held.loginId !== principal.loginId && principal.loginId !== principal.accountId)
      throw forbidden('This lock belongs to another login; that login or the account owner can remove it');
    this.d.locks.unlock(token);
    return true;
  }

  /** The account's locks, each with the login that holds it, soonest to expire first (the owner's list). */
  lockViews(owner: Principal): { locks: DavLockView[] } {
    const logins = new Map<string, DavLockView['login']>();
    const loginOf = (id: string) => {
      let login = logins.get(id);
      if (!login) {
        const row = this.d.users.nameAndEmail(id);
        login = { id, name: row?.name ?? '', email: row?.email ?? '' };
        logins.set(id, login);
      }
      return login;
    };
    const locks = this.d.locks
      .ofAccount(owner.accountId)
      .sort((a, b) => a.expiresAt - b.expiresAt)
      .map((l) => ({
        token: l.token,
        path: l.path,
        login: loginOf(l.loginId),
        scope: l.scope,
        depth: l.depth,
        expiresAt: new Date(l.expiresAt).toISOString(),
      }));
    return { locks };
  }

  /** The owner removes one of the account's locks, whoever took it; another account's token is 404. */
  removeLock(owner: Principal, token: string): { message: string } {
    const lock = this.d.locks.get(token);
    if (!lock || lock.accountId !== owner.accountId) throw notFound('Lock not found');
    this.d.locks.unlock(token);
    return { message: 'Lock removed' };
  }
}

/** Whether the request proves a lock: its token submitted, by the login that took it. */
const proves = (principal: Principal, proof: LockProof) => (lock: DavLock) =>
  proof.tokens.has(lock.token) && lock.loginId === principal.loginId;

/** A resource an If header's list is evaluated on: its account and path key (for locks) and its row. */
interface Tagged {
  accountId: string;
  key: string;
  row: DavItem | null;
}

/** What placing a path threw (`DavService.tryPlace`), to be thrown where its walk comes. */
interface Refused {
  refused: unknown;
}

function placed(place: DavPlace | Refused): DavPlace {
  if ('refused' in place) throw place.refused;
  return place;
}

/** Whether two placed paths lie in two different trees, neither of them "Shared with me" itself nor a share's own root. */
function crossesTrees(from: DavPlace | Refused, to: DavPlace | Refused | null): boolean {
  // A path that could not be placed: the walks answer it as they would any other request.
  if (!to || 'refused' in from || 'refused' in to) return false;
  return from.kind !== 'list' && to.kind !== 'list' && !(to.kind === 'mount' && to.isRoot) && !sameTree(from, to);
}

/**
 * One WebDAV name per mount: a name met again (case aside) or `reserved` (name keys) becomes `name (n)` (a file's,
 * by `types`, `base (n).ext`), n the first free from 1, in the order given; `taken` says a name is used beside them.
 */
function distinctNames(
  names: readonly string[],
  taken: (name: string) => boolean,
  reserved: readonly string[] = [],
  types: readonly Item['type'][] = [],
): string[] {
  const used = new Set(reserved);
  return names.map((name, i) => {
    let out = name;
    for (let n = 1; used.has(nameKeyOf(out)) || (out !== name && taken(out)); n++) out = suffixed(name, types[i] ?? 'folder', `(${n})`);
    used.add(nameKeyOf(out));
    return out;
  });
}

/** A name with `suffix` added: a file's before its extension (`plan (Ada).txt`), so it still opens by its type. */
function suffixed(name: string, type: Item['type'], suffix: string): string {
  const { base, ext } = type === 'file' ? splitExtension(name) : { base: name, ext: '' };
  return `${base} ${suffix}${ext}`;
}

/** A digest of the shares' names, ETags and roles (a folder's ETag names the caller's rights in it, a file's does not). */
function sharesTag(shares: readonly DavShare[]): string {
  const hash = new Bun.CryptoHasher('sha1');
  for (const s of shares) hash.update(s.item.type === 'file' ? `${s.name}\n${s.item.etag}\n${s.role}\n` : `${s.name}\n${s.item.etag}\n`);
  return hash.digest('hex').slice(0, 16);
}

/** The body, failing (400) at its end when its SHA1 is not `expected`: the upload pipeline then keeps nothing. */
async function* sha1Checked(body: AsyncIterable<Uint8Array>, expected: string): AsyncGenerator<Uint8Array> {
  const hash = new Bun.CryptoHasher('sha1');
  for await (const chunk of body) {
    hash.update(chunk);
    yield chunk;
  }
  const actual = hash.digest('hex');
  if (actual !== expected.toLowerCase())
    throw badRequest(`The content's SHA1 is ${actual}, not the ${expected} of OC-Checksum: nothing was stored; send the file again`);
}

/** A PUT body as the upload pipeline's parts: the fields, then the one file. */
async function* partsOf(
  fields: Array<{ kind: 'field'; name: string; value: string }>,
  filename: string,
  input: { body: AsyncIterable<Uint8Array>; contentType: string },
) {
  yield* fields;
  yield { kind: 'file' as const, field: 'file', filename, mimeType: input.contentType, body: input.body };
}

/** The URL of the resource `lock` holds, under `href` (the request's, for `path`): 423 names the locked member, not the folder asked for. */
function hrefBelow(href: string, path: DavPath, lock: DavLock): string {
  const slashes = (key: string) => key.split('/').length - 1;
  const below = slashes(lock.key) - slashes(path.key);
  if (below <= 0) return href;
  // The lock's own href ends with the names below `path`, as its LOCK wrote them (a door or a share only changes what comes before).
  const tail = lock.href.replace(/\/$/, '').split('/').slice(-below).join('/');
  return `${href.replace(/\/$/, '')}/${tail}${lock.href.endsWith('/') ? '/' : ''}`;
}
