import fs from 'node:fs';
import type { Clock } from '../../clock.ts';
import { MAX_FOLDER_DEPTH, nameProblem } from '../../contract/names.ts';
import type { Transactions } from '../../db/repos/index.ts';
import { type Item, type ItemsRepo, nameKeyOf } from '../../db/repos/items.ts';
import type { IndexedEntry, LibrariesRepo, LibraryRow } from '../../db/repos/libraries.ts';
import { newId } from '../../lib/ids.ts';
import { detectMimeType } from '../../lib/file-type.ts';
import type { Logger } from '../../log.ts';
import {
  hostNameProblem,
  hostPath,
  inFolderInside,
  isInside,
  openInside,
  PATH_MAX_BYTES,
  STAGING_PREFIX,
} from '../../storage/host-paths.ts';
import { type ChangeBy, ChangeKinds, type ChangeLog } from '../changes/change-log.ts';
import { scanSummarized, scanSummary } from '../changes/scan-summary.ts';
import { FileEventType } from '../../contract/events.ts';
import type { FileEvents } from '../files/file-events.ts';
import type { ShareService } from '../sharing/shares.ts';

/** The folder a writable library's deletes go to (restorable from Coffer's trash); never indexed. */
export const LIBRARY_TRASH = '.coffer-trash';
// Bytes read of a new or changed file to tell its type: enough for every format file-type knows.
const HEAD_BYTES = 4100;
// Rows written per transaction: large enough that commits do not dominate, small enough not to hold the lock long.
const BATCH = 500;
// A staged write lands within the request that made it; one this old was left by a crash.
const STALE_STAGING_MS = 6 * 3600_000;
// A long scan makes garbage faster than the collector returns it on its own (a first scan of 100,000 files
// peaked 150 MiB above the idle server, most of it garbage): collecting every 5,000 entries bounds that.
const COLLECT_EVERY_BATCHES = 10;

export interface ScanProgress {
  entries: number;
  added: number;
  updated: number;
  moved: number;
  removed: number;
  /** Host entries left out: names Coffer's name rule refuses (control characters, / \\ : * ? " < > |, over 100 characters), a second name differing only in case, or folders deeper than MAX_FOLDER_DEPTH. */
  skipped: number;
}

export interface ScanResult extends ScanProgress {
  available: boolean;
  error: string | null;
}

interface Seen {
  item: IndexedEntry;
  /** Host names from the library root. */
  names: string[];
}

interface HostEntry {
  name: string;
  type: 'file' | 'folder';
  /** False for what is listed but never opened: an unreadable file, a symlink leading out of the library or to a folder. */
  available: boolean;
  fileId: string;
  size: number;
  /** The modification time in whole milliseconds: the item's `modified`. */
  modifiedAt: number;
  /** The modification time in microseconds, as the index keeps it: see hostTimeOf. */
  hostTime: number;
}

/** The service user's ids, read once: a scan asks for every file. */
const self = { uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0, groups: new Set(process.getgroups?.() ?? []) };

/** Whether the service user may read a host entry, from its mode bits (no extra system call per file). */
function readable(st: fs.Stats): boolean {
  if (self.uid === 0) return true;
  if (st.uid === self.uid) return (st.mode & 0o400) !== 0;
  if (st.gid === self.gid || self.groups.has(st.gid)) return (st.mode & 0o040) !== 0;
  return (st.mode & 0o004) !== 0;
}

export const fileIdOf = (st: fs.Stats) => `${st.dev}:${st.ino}`;

/**
 * A host entry's modification time as the index keeps it, in microseconds: a new content of the same size written in
 * the same millisecond as the one indexed (a kernel since 6.13 stamps each write finer than that) still changes it.
 */
export const hostTimeOf = (st: fs.Stats) => Math.round(st.mtimeMs * 1000);

// Older versions indexed times in milliseconds: such a time is below this (the year 5138), a time in microseconds after 1973 above.
const MICROSECONDS_FROM = 1e14;

/** Whether an indexed time is the host entry's: its time in microseconds, or in milliseconds when an older version indexed it. */
function sameHostTime(indexed: number, host: HostEntry): boolean {
  return indexed === host.hostTime || (indexed < MICROSECONDS_FROM && indexed === host.modifiedAt);
}

/** A change made by another program on the host: the library's owner's tree, changed by the system. */
const libraryChange = (library: LibraryRow): ChangeBy => ({ accountId: library.accountId, actor: { kind: 'system', id: null } });

/** The type of a name from its extension alone (no read), or null when the extension says nothing. */
function typeByName(name: string): string | null {
  const type = Bun.file(name).type.split(';')[0]!;
  return type === 'application/octet-stream' ? null : type;
}

/** What a scan knows of the index: entries by folder and name, by host file id, and (a full scan's) all of them. */
interface LibraryIndex {
  root: IndexedEntry | undefined;
  children(folderId: string): ReadonlyMap<string, IndexedEntry>;
  sameFile(fileId: string): readonly IndexedEntry[];
  all(): readonly IndexedEntry[];
  /** Whether an entry lies below one of `folders`. */
  under(entry: IndexedEntry, folders: ReadonlySet<string>): boolean;
}

/** One change to report; a move or rename names where the item was (`from`), announced as other moves are. */
type ScanChange = { type: string; itemId: string; extra?: Record<string, unknown>; from?: { parentId: string | null; name: string } };

/** The changes a scan reports to live streams: each while there are few, only their count once scanSummarized. */
class ScanChanges {
  count = 0;
  readonly kept: ScanChange[] = [];

  push(change: ScanChange): void {
    if (!scanSummarized(false, ++this.count)) this.kept.push(change);
  }
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

const byName = (entries: readonly IndexedEntry[]) => new Map(entries.map((e) => [nameKeyOf(e.name), e]));
const NONE: ReadonlyMap<string, IndexedEntry> = new Map();

/** The whole index of a library, read at once (a full scan compares every entry). */
function fullIndex(indexed: readonly IndexedEntry[], folderId: string): LibraryIndex {
  const children = new Map<string, Map<string, IndexedEntry>>();
  const files = new Map<string, IndexedEntry[]>();
  const byId = new Map<string, IndexedEntry>();
  let root: IndexedEntry | undefined;
  for (const e of indexed) {
    byId.set(e.itemId, e);
    if (e.itemId === folderId) {
      root = e;
      continue;
    }
    let siblings = children.get(e.parentId ?? '');
    if (!siblings) children.set(e.parentId ?? '', (siblings = new Map()));
    siblings.set(nameKeyOf(e.name), e);
    const same = files.get(e.fileId);
    if (same) same.push(e);
    else files.set(e.fileId, [e]);
  }
  const rest = indexed.filter((e) => e !== root);
  return {
    root,
    children: (id) => children.get(id) ?? NONE,
    sameFile: (fileId) => files.get(fileId) ?? [],
    all: () => rest,
    under: (entry, folders) => {
      for (let p = entry.parentId; p; p = byId.get(p)?.parentId ?? null) if (folders.has(p)) return true;
      return false;
    },
  };
}

/**
 * Indexes a library: one item per host file and folder under the library's folder item, compared with what
 * was indexed before. A name seen again is the same item (its content changed when its size or time did);
 * a file id (device and inode) that left its old name is the same item moved; what is gone from the host is
 * removed. A root that is missing, or replaced by an empty mount point, leaves every item as it is, marked
 * unavailable: an unmounted disk never empties a library.
 */
export class LibraryScanner {
  constructor(
    private readonly d: {
      clock: Clock;
      log: Logger;
      transactions: Transactions;
      items: ItemsRepo;
      libraries: LibrariesRepo;
      events: FileEvents;
      changes: ChangeLog;
      /** Link membership after a move, the rule the API's moves follow (items joined to a link leave it when moved out of its folder). */
      shares: Pick<ShareService, 'leaveSharesOutside'>;
      /** Runs the scanner's writes as the host's own (a read-only library refuses every other write). */
      asHost: <T>(fn: () => T) => T;
    },
  ) {}

  /**
   * Scans the whole library, or with `folders` (host paths from the root, as a watch reports them) only those
   * folders' own entries (and what is new below them): what left them is removed, what came is added.
   */
  async scan(library: LibraryRow, onProgress?: (p: ScanProgress) => void, folders?: ReadonlyArray<readonly string[]>): Promise<ScanResult> {
    const progress: ScanProgress = { entries: 0, added: 0, updated: 0, moved: 0, removed: 0, skipped: 0 };
    const by = libraryChange(library);
    const details = { library: library.id };
    // A full scan reads the whole index at once; a partial one (a watch's) only the folders it lists and the files it meets.
    const index = folders === undefined ? fullIndex(this.d.libraries.indexed(library.id), library.folderId) : this.partialIndex(library.id);
    const rootEntry = index.root ?? this.d.libraries.indexedItem(library.id, library.folderId) ?? undefined;
    const root = this.rootState(library, rootEntry);
    if (root.error) {
      this.d.libraries.scanned(library.id, this.d.clock.now(), library.scanEntries, root.error, false);
      return { ...progress, available: false, error: root.error };
    }
    const seen = new Set<string>([library.folderId]);
    // Folders the scan could not list: what was indexed under them stays.
    const unlisted = new Set<string>();
    const changed = new ScanChanges();
    let batches = 0;
    // One buffer for every file's first bytes: the scan reads them one file at a time.
    const head = Buffer.allocUnsafe(HEAD_BYTES);
    const writes: Array<() => void> = [];
    // Past so many changes (and on a first scan) one summary event stands in for them all.
    const summarized = () => scanSummarized(!rootEntry, changed.count);
    const flush = () => {
      if (writes.length === 0) return;
      const batch = writes.splice(0);
      const run = () =>
        this.d.transactions.immediate(() => {
          for (const w of batch) w();
        });
      this.d.asHost(() => (summarized() ? this.d.changes.summarizing(run) : run()));
    };
    const rootSeen: Seen = {
      item: rootEntry ?? {
        itemId: library.folderId,
        parentId: null,
        type: 'folder',
        name: library.name,
        size: 0,
        fileId: root.fileId,
        hostModifiedAt: 0,
        unavailable: false,
      },
      names: [],
    };
    const partial = folders !== undefined && rootEntry !== undefined;
    // Folders the host nests deeper than Coffer allows are left out (with what is in them), logged once per scan.
    const baseDepth = this.d.items.depthOf(library.folderId);
    let tooDeepLogged = false;
    const queue: Seen[] = partial ? this.startingFolders(rootSeen, index, folders) : [rootSeen];
    // The folders whose entries were listed: only their children can have gone (the whole library on a full scan).
    const listedFolders = new Set<string>();
    writes.push(() =>
      this.d.libraries.putEntry({
        itemId: library.folderId,
        libraryId: library.id,
        fileId: root.fileId,
        hostModifiedAt: 0,
        unavailable: false,
      }),
    );
    while (queue.length > 0) {
      const folder = queue.shift()!;
      const listed = this.list(library.path, folder.names, !library.readOnly, progress);
      if (!listed) {
        unlisted.add(folder.item.itemId);
        if (!folder.item.unavailable) writes.push(() => this.setUnavailable(library.id, folder.item, true));
        continue;
      }
      listedFolders.add(folder.item.itemId);
      if (folder.item.unavailable && folder.item.itemId !== library.folderId)
        writes.push(() => this.setUnavailable(library.id, folder.item, false));
      const siblings = index.children(folder.item.itemId);
      const taken = new Set<string>();
      for (const host of listed) {
        const key = nameKeyOf(host.name);
        // Two host names that differ only in case, or in Unicode form (an accent composed in one, not in the other), are one
        // name to WebDAV's paths: the second is left out, so no path serves another file. Spaces around a name are trimmed there.
        const twinKey = nameKeyOf(host.name.normalize('NFC'));
        if (taken.has(twinKey) || nameProblem(host.name) || host.name !== host.name.trim()) {
          progress.skipped++;
          continue;
        }
        taken.add(twinKey);
        const type = host.type;
        let current = siblings.get(key);
        if (current && current.type !== type) current = undefined;
        if (!current) current = this.movedHere(library, index.sameFile(host.fileId), type, seen);
        // Made by Coffer since the index was read (a new file or folder of an upload): the item it made.
        if (!current) current = this.indexedSince(library, host, folder.item.itemId, key);
        const names = [...folder.names, host.name];
        const room = MAX_FOLDER_DEPTH - (baseDepth + folder.names.length);
        // A folder indexed where it is stays (one from before the limit too); a new one or one moved here must fit, with what is in it.
        const fits =
          type === 'file' ||
          (current === undefined
            ? room > 0
            : current.parentId === folder.item.itemId || this.d.items.heightOf(current.itemId, room) <= room);
        if (!fits) {
          progress.skipped++;
          if (!tooDeepLogged)
            this.d.log.warn('library folders nested too deep were left out', { library: library.id, path: names.join('/') });
          tooDeepLogged = true;
          continue;
        }
        progress.entries++;
        if (current) {
          seen.add(current.itemId);
          const item = current;
          const place = item.parentId !== folder.item.itemId || item.name !== host.name;
          if (place) {
            progress.moved++;
            const occupant = siblings.get(key);
            writes.push(() => {
              // Coffer's own rename or move may have landed after the index was read: then it is indexed where it is.
              const now = this.d.libraries.indexedItem(library.id, item.itemId);
              if (now && now.parentId === folder.item.itemId && now.name === host.name) return;
              if (occupant && occupant.itemId !== item.itemId && !seen.has(occupant.itemId)) this.removeItem(library, occupant);
              this.d.items.move(item.itemId, folder.item.itemId, host.name);
              const kind = item.parentId === folder.item.itemId ? ChangeKinds.renamed : ChangeKinds.moved;
              this.d.changes.record(
                by,
                kind,
                { id: item.itemId, type, name: host.name, parentId: folder.item.itemId },
                {
                  before: { name: item.name, parentId: item.parentId },
                  details,
                },
              );
              if (item.parentId === folder.item.itemId) return;
              for (const left of this.d.shares.leaveSharesOutside(by, [item.itemId]))
                changed.push({ type: FileEventType.shared, itemId: left.id, extra: { shared: false } });
            });
            changed.push({ type: FileEventType.moved, itemId: item.itemId, from: { parentId: item.parentId, name: item.name } });
          }
          const contentChanged =
            type === 'file' && (item.size !== host.size || !sameHostTime(item.hostModifiedAt, host) || item.fileId !== host.fileId);
          const availability = type === 'file' && item.unavailable === host.available;
          if (contentChanged || availability) {
            progress.updated++;
            const mimeType = contentChanged && host.available ? await this.detect(library.path, names, host.name, head) : undefined;
            writes.push(() => {
              // Coffer's own write may have landed after the index was read: then the entry as indexed now is the host's.
              const replaced = contentChanged && !this.indexedAs(library, item.itemId, host);
              if (replaced) {
                const row = this.d.items.get(library.accountId, item.itemId);
                this.d.items.replaceContent(item.itemId, {
                  size: host.size,
                  mimeType: mimeType === undefined ? (row?.mimeType ?? null) : mimeType,
                  storageKey: null,
                  wrappedKey: null,
                  keyId: null,
                  modifiedAt: host.modifiedAt,
                  accessedAt: row?.accessedAt ?? host.modifiedAt,
                  contentSource: null,
                  contentAuthorId: null,
                });
                this.d.changes.record(
                  by,
                  ChangeKinds.replaced,
                  { id: item.itemId, type, name: host.name, parentId: folder.item.itemId },
                  { details: { ...details, size: host.size, mimeType: mimeType === undefined ? (row?.mimeType ?? null) : mimeType } },
                );
              }
              this.d.libraries.putEntry(
                {
                  itemId: item.itemId,
                  libraryId: library.id,
                  fileId: host.fileId,
                  // Only the availability changed: the time stays as indexed (in milliseconds by an older version), the ETag too.
                  hostModifiedAt: contentChanged ? host.hostTime : item.hostModifiedAt,
                  unavailable: !host.available,
                },
                replaced,
              );
            });
            if (contentChanged) changed.push({ type: FileEventType.updated, itemId: item.itemId, extra: { size: host.size } });
          } else if (item.fileId !== host.fileId) {
            writes.push(() =>
              this.d.libraries.putEntry({
                itemId: item.itemId,
                libraryId: library.id,
                fileId: host.fileId,
                hostModifiedAt: host.hostTime,
                unavailable: item.unavailable,
              }),
            );
          }
          // A partial scan lists only the folders a change was seen in; a folder moved keeps what is under it.
          if (type === 'folder' && host.available && !partial) {
            queue.push({ item: { ...item, parentId: folder.item.itemId, name: host.name }, names });
          }
        } else {
          progress.added++;
          const itemId = newId();
          const mimeType =
            type === 'file' ? (host.available ? await this.detect(library.path, names, host.name, head) : typeByName(host.name)) : null;
          const parentId = folder.item.itemId;
          writes.push(() => {
            // Coffer's own new file or folder may have landed after the index was read: it is indexed already.
            if (this.d.libraries.indexedByFileId(library.id, host.fileId).some((e) => e.parentId === parentId && e.name === host.name))
              return;
            this.d.items.insert({
              id: itemId,
              accountId: library.accountId,
              parentId,
              type,
              name: host.name,
              size: type === 'file' ? host.size : 0,
              mimeType,
              storageKey: null,
              wrappedKey: null,
              keyId: null,
              starred: false,
              modifiedAt: host.modifiedAt,
              accessedAt: host.modifiedAt,
              createdAt: this.d.clock.now(),
            });
            const changed = { id: itemId, type, name: host.name, parentId };
            if (type === 'folder') this.d.changes.record(by, ChangeKinds.created, changed, { details });
            else this.d.changes.record(by, ChangeKinds.uploaded, changed, { details: { ...details, size: host.size, mimeType } });
            this.d.libraries.putEntry({
              itemId,
              libraryId: library.id,
              fileId: host.fileId,
              hostModifiedAt: host.hostTime,
              unavailable: !host.available,
            });
          });
          // A new item is in no index entry: `seen` (which entries are still there) need not hold it.
          changed.push({ type: type === 'folder' ? FileEventType.folderCreated : FileEventType.uploaded, itemId });
          if (type === 'folder' && host.available) {
            const entry: IndexedEntry = {
              itemId,
              parentId,
              type,
              name: host.name,
              size: 0,
              fileId: host.fileId,
              hostModifiedAt: host.hostTime,
              unavailable: false,
            };
            queue.push({ item: entry, names });
          }
        }
        if (writes.length >= BATCH) {
          flush();
          onProgress?.({ ...progress });
          // Type detection resolves without I/O: without a turn of the event loop here, a first scan of 100,000
          // files would hold every request (and the release of what each batch allocated natively) until its end.
          await nextTurn();
          if (++batches % COLLECT_EVERY_BATCHES === 0) Bun.gc(true);
        }
      }
    }
    const gone = partial
      ? [...listedFolders].flatMap((id) => [...index.children(id).values()].filter((e) => !seen.has(e.itemId)))
      : index.all().filter((e) => !seen.has(e.itemId) && !index.under(e, unlisted));
    const goneIds = new Set(gone.map((e) => e.itemId));
    for (const e of gone) {
      // A folder's removal takes its subtree: only the topmost gone items are removed one by one.
      if (e.parentId && goneIds.has(e.parentId)) continue;
      progress.removed++;
      changed.push({
        type: FileEventType.permanentlyDeleted,
        itemId: e.itemId,
        extra: { name: e.name, parentId: e.parentId, type: e.type },
      });
      writes.push(() => this.removeItem(library, e));
    }
    flush();
    const at = this.d.clock.now();
    if (partial) this.d.libraries.setAvailable(library.id, true);
    else this.d.libraries.scanned(library.id, at, progress.entries, null, true);
    onProgress?.({ ...progress });
    if (!summarized()) this.publish(library, changed.kept);
    else if (changed.count > 0) {
      // The changes recorded before the count went past the limit are settled too: the summary announces them.
      for (const c of changed.kept) this.d.changes.claimSeq(c.itemId);
      this.d.events.many(library.accountId, library.folderId, scanSummary(changed.count));
    }
    return { ...progress, available: true, error: null };
  }

  /** An index read as the scan goes: each folder's entries when it is listed, each file id when it is met. */
  private partialIndex(libraryId: string): LibraryIndex {
    const folders = new Map<string, Map<string, IndexedEntry>>();
    return {
      root: undefined,
      children: (folderId) => {
        let map = folders.get(folderId);
        if (!map) folders.set(folderId, (map = byName(this.d.libraries.indexedChildren(libraryId, folderId))));
        return map;
      },
      sameFile: (fileId) => this.d.libraries.indexedByFileId(libraryId, fileId),
      all: () => [...folders.values()].flatMap((m) => [...m.values()]),
      under: () => false,
    };
  }

  /**
   * The indexed folders at `folders` (names from the root); a path not indexed (yet) is scanned from its
   * nearest indexed ancestor, so a new folder is found with what is in it.
   */
  private startingFolders(root: Seen, index: LibraryIndex, folders: ReadonlyArray<readonly string[]>): Seen[] {
    const out = new Map<string, Seen>();
    for (const path of folders) {
      let at = root;
      for (const name of path) {
        const next = index.children(at.item.itemId).get(nameKeyOf(name));
        if (!next || next.type !== 'folder' || next.unavailable) break;
        at = { item: next, names: [...at.names, next.name] };
      }
      out.set(at.item.itemId, at);
    }
    return [...out.values()];
  }

  /**
   * Whether the root can be scanned: it must be a folder, and when its identity changed (a disk unmounted
   * leaves the empty mount point) it must not be empty.
   */
  private rootState(library: LibraryRow, rootEntry: IndexedEntry | undefined): { error: string | null; fileId: string } {
    let st: fs.Stats;
    try {
      st = fs.statSync(library.path);
    } catch (err) {
      return {
        error: `The library folder ${library.path} cannot be reached (${(err as NodeJS.ErrnoException).code ?? 'error'}).`,
        fileId: '',
      };
    }
    if (!st.isDirectory()) return { error: `${library.path} is no longer a folder.`, fileId: '' };
    const fileId = fileIdOf(st);
    if (rootEntry && rootEntry.fileId !== fileId && fs.readdirSync(library.path).length === 0) {
      return { error: `The library folder ${library.path} is empty and not the one indexed: is its disk mounted?`, fileId };
    }
    return { error: null, fileId };
  }

  /** An indexed entry of the same host file whose old name is gone from the host: the file was moved or renamed. */
  private movedHere(
    library: LibraryRow,
    candidates: readonly IndexedEntry[] | undefined,
    type: 'file' | 'folder',
    seen: Set<string>,
  ): IndexedEntry | undefined {
    if (!candidates) return undefined;
    for (const c of candidates) {
      if (seen.has(c.itemId) || c.type !== type) continue;
      const names = this.namesOf(library, c);
      if (names && !fs.existsSync(hostPath(library.path, names))) return c;
    }
    return undefined;
  }

  /** Removes a temporary file of a write that never landed: its ctime (set when staged, unlike its mtime) is old. */
  private sweepStaged(file: string, shown: string): void {
    try {
      if (this.d.clock.now() - fs.lstatSync(file).ctimeMs < STALE_STAGING_MS) return;
      fs.unlinkSync(file);
      this.d.log.info('removed a temporary file left by an interrupted library write', { file: shown });
    } catch {
      // Gone already, or not ours to remove: the next scan looks again.
    }
  }

  /** The host names of an indexed item from the library root, or null when its chain is broken. */
  private namesOf(library: LibraryRow, entry: IndexedEntry): string[] | null {
    const names = [entry.name];
    let parent = entry.parentId;
    for (let depth = 0; parent && parent !== library.folderId; depth++) {
      const row = this.d.items.nameAndParent(parent);
      if (!row || depth > 10_000) return null;
      names.unshift(row.name);
      parent = row.parentId;
    }
    return parent === library.folderId ? names : null;
  }

  /**
   * A folder's host entries (special files left out), or null when it cannot be listed. In a writable library,
   * Coffer's own temporary files that a crash left behind (untouched for STALE_STAGING_MS) are removed.
   */
  private list(root: string, names: readonly string[], sweep: boolean, progress: ScanProgress): HostEntry[] | null {
    try {
      // Listed through the folder held open once shown inside the library: a folder swapped for a symlink after that check lists nothing outside.
      return inFolderInside(root, names, (dir) => this.entries(root, names, dir, sweep, progress));
    } catch {
      return null;
    }
  }

  /** The entries of the folder `names`, open at `dir`; a name that is not UTF-8 is counted as left out. */
  private entries(root: string, names: readonly string[], dir: string, sweep: boolean, progress: ScanProgress): HostEntry[] {
    const dirents = fs.readdirSync(dir, { withFileTypes: true });
    const out: HostEntry[] = [];
    const pathBytes = Buffer.byteLength(hostPath(root, names)) + 1;
    for (const d of dirents) {
      if (d.name.startsWith(STAGING_PREFIX)) {
        if (sweep && d.isFile()) this.sweepStaged(`${dir}/${d.name}`, hostPath(root, [...names, d.name]));
        continue;
      }
      if (names.length === 0 && d.name === LIBRARY_TRASH) continue;
      if (hostNameProblem(d.name)) continue;
      // Listed through the open folder, but no door could open it by its path.
      if (pathBytes + Buffer.byteLength(d.name) > PATH_MAX_BYTES) {
        progress.skipped++;
        continue;
      }
      let st: fs.Stats;
      try {
        st = fs.lstatSync(`${dir}/${d.name}`);
      } catch (err) {
        // Its bytes are not UTF-8: the name read back (with U+FFFD in their place) names nothing on the host.
        if ((err as NodeJS.ErrnoException).code === 'ENOENT' && d.name.includes('\uFFFD')) progress.skipped++;
        continue;
      }
      const base = { name: d.name, fileId: fileIdOf(st), size: 0, modifiedAt: Math.floor(st.mtimeMs), hostTime: hostTimeOf(st) };
      // A folder's availability is known when it is listed: one it cannot list keeps what was indexed under it.
      if (st.isDirectory()) out.push({ ...base, type: 'folder', available: true });
      else if (st.isFile()) out.push({ ...base, type: 'file', available: readable(st), size: st.size });
      else if (st.isSymbolicLink()) out.push(this.symlink(root, `${dir}/${d.name}`, base));
    }
    return out;
  }

  /** A symlink to a readable file inside the library is that file; any other symlink is listed, unavailable. */
  private symlink(root: string, full: string, base: Omit<HostEntry, 'type' | 'available'>): HostEntry {
    try {
      const real = fs.realpathSync(full);
      const st = fs.statSync(real);
      if (isInside(root, real) && st.isFile() && readable(st)) {
        return { ...base, type: 'file', available: true, size: st.size, modifiedAt: Math.floor(st.mtimeMs), hostTime: hostTimeOf(st) };
      }
      // Folders are not followed: a link to one could loop, or show the same files twice.
      if (st.isDirectory()) return { ...base, type: 'folder', available: false };
    } catch {
      // A dangling link: listed like one leading out.
    }
    return { ...base, type: 'file', available: false };
  }

  /** The type the file's first bytes show, else its extension's; null when neither tells. */
  private async detect(root: string, names: readonly string[], name: string, buf: Buffer): Promise<string | null> {
    let head: Uint8Array | null = null;
    try {
      const fd = openInside(root, names);
      try {
        head = buf.subarray(0, fs.readSync(fd, buf, 0, HEAD_BYTES, 0));
      } finally {
        fs.closeSync(fd);
      }
    } catch {
      head = null;
    }
    if (head && head.byteLength > 0) {
      const sniffed = await detectMimeType(head).catch(() => null);
      if (sniffed) return sniffed;
    }
    return typeByName(name);
  }

  /** The entry Coffer indexed for this host entry after the scan read the index, if any. */
  private indexedSince(library: LibraryRow, host: HostEntry, parentId: string, key: string): IndexedEntry | undefined {
    return this.d.libraries
      .indexedByFileId(library.id, host.fileId)
      .find((e) => e.type === host.type && e.parentId === parentId && nameKeyOf(e.name) === key);
  }

  /** Whether the item's entry, as indexed now, is the host entry listed: same size, time and file id. */
  private indexedAs(library: LibraryRow, itemId: string, host: HostEntry): boolean {
    const now = this.d.libraries.indexedItem(library.id, itemId);
    return now !== null && now.size === host.size && sameHostTime(now.hostModifiedAt, host) && now.fileId === host.fileId;
  }

  private setUnavailable(libraryId: string, entry: IndexedEntry, unavailable: boolean): void {
    this.d.libraries.putEntry({ itemId: entry.itemId, libraryId, fileId: entry.fileId, hostModifiedAt: entry.hostModifiedAt, unavailable });
  }

  /** Removes an item and everything below it from the index (the host is not touched: it is already gone there). */
  private removeItem(library: LibraryRow, entry: IndexedEntry): void {
    // Removed already in this scan (the item another program's rename landed on, then found gone): one purge only.
    if (this.d.items.nameAndParent(entry.itemId) === null) return;
    const ids = this.d.items.liveSubtreeIds(entry.itemId);
    const item = { id: entry.itemId, type: entry.type, name: entry.name, parentId: entry.parentId };
    this.d.changes.record(libraryChange(library), ChangeKinds.purged, item, { gone: true, details: { library: library.id } });
    for (let i = ids.length - 1; i >= 0; i--) this.d.items.delete(ids[i]!);
  }

  /** A move as ItemService.relocate announces one: to whoever reached it where it was too, a rename with it as its own event. */
  private announceMove(actor: { loginId: string; accountId: string }, row: Item, from: { parentId: string | null; name: string }): void {
    if (row.parentId !== from.parentId) this.d.events.moved(actor, FileEventType.moved, row, from.parentId);
    if (row.name !== from.name) this.d.events.moved(actor, FileEventType.renamed, row, from.parentId, { oldName: from.name });
  }

  private publish(library: LibraryRow, changed: readonly ScanChange[]): void {
    const actor = { loginId: library.accountId, accountId: library.accountId };
    for (const c of changed) {
      const row = this.d.items.getLive(library.accountId, c.itemId);
      if (c.from) {
        if (row) this.announceMove(actor, row, c.from);
        continue;
      }
      // An item that left a link it joined: `{shared: false}` alone, as an unshare is announced.
      if (c.type === FileEventType.shared) {
        if (row) this.d.events.item(actor, c.type, row, c.extra);
        continue;
      }
      const gone = c.extra as { name: string; parentId: string | null; type: 'file' | 'folder' } | undefined;
      const subject = row ?? (gone ? { id: c.itemId, name: gone.name, parentId: gone.parentId, type: gone.type } : null);
      if (!subject) continue;
      this.d.events.item(
        actor,
        c.type as Parameters<FileEvents['item']>[1],
        subject,
        row && row.type === 'file' ? { size: row.size, mimeType: row.mimeType, ...c.extra } : {},
      );
    }
  }
}
