import type { Clock } from '../../clock.ts';
import { LIBRARY_NOT_ENCRYPTED, type LibraryView } from '../../contract/libraries.ts';
import { nameProblem, normalizeName } from '../../contract/names.ts';
import type { GroupsRepo } from '../../db/repos/groups.ts';
import type { Transactions } from '../../db/repos/index.ts';
import type { ItemsRepo } from '../../db/repos/items.ts';
import type { LibrariesRepo, LibraryRow } from '../../db/repos/libraries.ts';
import type { UsersRepo } from '../../db/repos/users.ts';
import { badRequest, conflict, notFound } from '../../errors.ts';
import { newId } from '../../lib/ids.ts';
import type { Logger } from '../../log.ts';
import { libraryRootProblem, type ProtectedPath } from '../../storage/host-paths.ts';
import { emailKey } from '../accounts/email.ts';
import type { Principal } from '../identity/principal.ts';
import { type Actor, actorFields, AuditActions, type AuditService } from '../admin/audit.ts';
import { type ChangeBy, ChangeKinds, type ChangeLog } from '../changes/change-log.ts';
import { FileEventType, type FileEvents } from '../files/file-events.ts';
import type { MemberService } from '../sharing/members.ts';
import type { LibraryScanner, ScanProgress, ScanResult } from './scanner.ts';

const NOT_FOUND = 'Library not found';

type LibraryCounts = { files: number; folders: number; bytes: number };

/** Adding and removing a library changes its owner's tree as the system does (the audit log names the admin). */
const systemChange = (accountId: string): ChangeBy => ({ accountId, actor: { kind: 'system', id: null } });

interface LibraryDeps {
  clock: Clock;
  log: Logger;
  dataDir: string;
  /** Coffer's own files outside the data directory (backups, replicas, key files): a library may neither hold nor be inside one. */
  protectedPaths: readonly ProtectedPath[];
  transactions: Transactions;
  users: UsersRepo;
  groups: GroupsRepo;
  items: ItemsRepo;
  libraries: LibrariesRepo;
  members: MemberService;
  audit: AuditService;
  changes: ChangeLog;
  events: FileEvents;
  scanner: LibraryScanner;
}

/** A scan running now: its progress, its end, and the one full scan asked meanwhile (`scan`). */
interface ScanState {
  progress: ScanProgress;
  done: Promise<ScanResult>;
  next?: Promise<ScanResult>;
  counts?: LibraryCounts | undefined;
}

/**
 * The registry of libraries: the admin adds a host folder for an account (and, through a group, its
 * members), lists, rescans and removes them. Removing one forgets its items; the host folder is never touched.
 */
export class LibraryService {
  // One scan per library at a time in this process; a request meanwhile runs one more after it.
  // While a scan runs, its library's counts are read once (each count walks the whole library) and kept.
  private readonly running = new Map<string, ScanState>();

  private readonly listeners: Array<() => void> = [];
  private readonly indexedListeners: Array<() => void> = [];

  constructor(private readonly d: LibraryDeps) {}

  /** `listener` runs after a library is added or removed in this process (the watch follows at once). */
  onChange(listener: () => void): void {
    this.listeners.push(listener);
  }

  /** `listener` runs after a scan (or a removal) changed what is indexed: thumbnails and text follow. */
  onIndexed(listener: () => void): void {
    this.indexedListeners.push(listener);
  }

  list(): { libraries: LibraryView[] } {
    const counts = this.d.libraries.counts();
    return { libraries: this.d.libraries.all().map((r) => this.view(r, this.running.get(r.id)?.counts ?? counts.get(r.id))) };
  }

  get(id: string): LibraryView {
    const row = this.require(id);
    const running = this.running.get(id);
    if (!running) return this.view(row, this.d.libraries.counts(id).get(id));
    running.counts ??= this.d.libraries.counts(id).get(id);
    return this.view(row, running.counts);
  }

  /** Finds a library by id or by name (case-insensitive), for the CLI. */
  find(ref: string): LibraryView | null {
    const all = this.d.libraries.all();
    const row = all.find((r) => r.id === ref) ?? all.find((r) => r.name.toLowerCase() === ref.trim().toLowerCase());
    return row ? this.get(row.id) : null;
  }

  /**
   * Adds `path` as a library of the account `owner` names, as a folder at the top of its My files (and given
   * to `group`'s members, as editors, or viewers when read-only). The caller scans it next (`scan`).
   */
  add(
    by: Actor,
    input: { path: string; name: string; owner: string; readOnly?: boolean | undefined; group?: string | undefined },
  ): { library: LibraryView; warning: string } {
    const name = normalizeName(input.name.trim());
    const problem = nameProblem(name);
    if (problem) throw badRequest(problem);
    const owner = this.d.users.byEmailKey(emailKey(input.owner));
    if (!owner || owner.parentUserId !== null || owner.deletionRequestedAt !== null) {
      throw notFound(`No account with email ${input.owner}: a library belongs to an account owner (not a sub-user).`);
    }
    const group = input.group === undefined ? null : this.groupOf(input.group);
    const checked = libraryRootProblem(input.path, {
      dataDir: this.d.dataDir,
      otherRoots: this.d.libraries.all().map((l) => l.path),
      protectedPaths: this.d.protectedPaths,
    });
    if ('problem' in checked) throw badRequest(checked.problem);
    const id = newId();
    const folderId = newId();
    const now = this.d.clock.now();
    const folder = this.d.transactions.immediate(() => {
      if (this.d.libraries.all().some((l) => l.path === checked.root)) throw conflict(`${checked.root} is already a library.`);
      if (this.d.items.liveByName(owner.id, null, name)) {
        throw conflict(`${owner.email} already has an item named "${name}" at the top of My files: choose another --name.`);
      }
      const folder = this.d.items.insertFolder({ id: folderId, accountId: owner.id, parentId: null, name }, now);
      this.d.changes.record(
        systemChange(owner.id),
        ChangeKinds.created,
        { id: folderId, type: 'folder', name, parentId: null },
        {
          details: { library: id },
        },
      );
      this.d.libraries.insert({
        id,
        name,
        path: checked.root,
        accountId: owner.id,
        folderId,
        readOnly: input.readOnly ?? false,
        groupId: group?.id ?? null,
        createdBy: by === 'cli' ? null : by.loginId,
        createdAt: now,
      });
      return folder;
    });
    if (group) {
      this.d.members.add(this.actingFor(owner), folderId, { groupId: group.id, role: input.readOnly ? 'viewer' : 'editor' });
    }
    // Once its group reaches it, as other new folders are: open lists show it before its first scan ends.
    this.d.events.announce({ accountId: owner.id, loginId: owner.id }, FileEventType.folderCreated, folder);
    this.d.audit.record({
      action: AuditActions.libraryAdd,
      ...actorFields(by),
      targetType: 'library',
      targetId: id,
      details: { name, path: checked.root, owner: owner.email, readOnly: input.readOnly ?? false, group: group?.name ?? null },
    });
    for (const listener of this.listeners) listener();
    return { library: this.get(id), warning: LIBRARY_NOT_ENCRYPTED };
  }

  /** Forgets a library: its items leave the owner's tree (shares and all); the host folder stays as it is. */
  remove(by: Actor, id: string): { message: string } {
    const row = this.require(id);
    const ids = this.d.items.liveSubtreeIds(row.folderId);
    const folder = { id: row.folderId, type: 'folder' as const, name: row.name, parentId: null };
    const owner = this.d.users.byId(row.accountId);
    if (owner) {
      // Those it is shared with lose it as an unshare takes it: their pages drop it, their desktop clients look again.
      const acting = this.actingFor(owner);
      const shared = this.d.members.list(acting, row.folderId);
      for (const g of shared.groups) this.d.members.removeGroup(acting, row.folderId, g.groupId);
      for (const m of shared.members) this.d.members.remove(acting, row.folderId, m.accountId);
    }
    this.d.transactions.immediate(() => {
      this.d.changes.record(systemChange(row.accountId), ChangeKinds.purged, folder, { gone: true, details: { library: id } });
      for (let i = ids.length - 1; i >= 0; i--) this.d.items.delete(ids[i]!);
      this.d.libraries.remove(id);
    });
    this.d.events.announce({ accountId: row.accountId, loginId: row.accountId }, FileEventType.permanentlyDeleted, folder);
    this.d.audit.record({
      action: AuditActions.libraryRemove,
      ...actorFields(by),
      targetType: 'library',
      targetId: id,
      details: { name: row.name, path: row.path },
    });
    for (const listener of this.listeners) listener();
    for (const listener of this.indexedListeners) listener();
    return { message: `Removed the library ${row.name}; its files stay in ${row.path}.` };
  }

  /**
   * Scans a library; progress reports every batch. Asked while a scan runs, one more full scan follows it (the
   * running one may have passed what changed before the ask), shared by every ask meanwhile.
   */
  scan(id: string, onProgress?: (p: ScanProgress) => void): Promise<ScanResult> {
    const running = this.running.get(id);
    if (!running) return this.start(id, onProgress);
    running.next ??= running.done.then(() => this.scan(id, onProgress));
    return running.next;
  }

  /** Scans only the folders a watch saw changes in (host paths from the root), after any scan running now. */
  async scanFolders(id: string, folders: ReadonlyArray<readonly string[]>): Promise<ScanResult> {
    for (let running = this.running.get(id); running; running = this.running.get(id)) await running.done;
    return this.start(id, undefined, folders);
  }

  private start(id: string, onProgress?: (p: ScanProgress) => void, folders?: ReadonlyArray<readonly string[]>): Promise<ScanResult> {
    const row = this.require(id);
    const state: ScanState = {
      progress: { entries: 0, added: 0, updated: 0, moved: 0, removed: 0, skipped: 0 },
      done: Promise.resolve({ entries: 0, added: 0, updated: 0, moved: 0, removed: 0, skipped: 0, available: true, error: null }),
    };
    state.done = this.d.scanner
      .scan(
        row,
        (p) => {
          state.progress = p;
          onProgress?.(p);
        },
        folders,
      )
      .then((result) => {
        if (result.added + result.updated + result.moved + result.removed > 0) for (const listener of this.indexedListeners) listener();
        return result;
      })
      .catch((err: unknown) => {
        const error = `The scan stopped: ${err instanceof Error ? err.message : String(err)}`;
        this.d.log.warn('library scan failed', { library: id, err: error });
        this.d.libraries.scanned(id, this.d.clock.now(), state.progress.entries, error, true);
        return { ...state.progress, available: true, error };
      })
      .finally(() => this.running.delete(id));
    this.running.set(id, state);
    return state.done;
  }

  /** Scans every library one after the other (at start and on the rescan schedule). */
  async scanAll(): Promise<void> {
    for (const row of this.d.libraries.all()) await this.scan(row.id);
  }

  private groupOf(ref: string): { id: string; name: string } {
    const group = this.d.groups.get(ref) ?? this.d.groups.byNameKey(ref.trim().toLowerCase());
    if (!group) throw notFound(`No group named ${ref}`);
    return group;
  }

  /** The admin acting as the owner, to give the library's folder to a group (the owner could do the same). */
  private actingFor(owner: { id: string; email: string; name: string }): Principal {
    return {
      loginId: owner.id,
      accountId: owner.id,
      sessionId: '',
      ip: '',
      email: owner.email,
      name: owner.name,
      isOwner: true,
      isAdmin: false,
      permissions: new Set(),
    };
  }

  private require(id: string): LibraryRow {
    const row = this.d.libraries.get(id);
    if (!row) throw notFound(NOT_FOUND);
    return row;
  }

  private view(r: LibraryRow, counts: LibraryCounts | undefined): LibraryView {
    const owner = this.d.users.byId(r.accountId);
    const group = r.groupId ? this.d.groups.get(r.groupId) : null;
    const running = this.running.get(r.id);
    return {
      id: r.id,
      name: r.name,
      path: r.path,
      folderId: r.folderId,
      ownerId: r.accountId,
      ownerEmail: owner?.email ?? '',
      readOnly: r.readOnly,
      group: group ? { id: group.id, name: group.name } : null,
      available: r.available,
      files: counts?.files ?? 0,
      // The library's own folder is not one of its folders.
      folders: Math.max(0, (counts?.folders ?? 1) - 1),
      bytes: counts?.bytes ?? 0,
      scannedAt: r.scannedAt === null ? null : new Date(r.scannedAt).toISOString(),
      scanError: r.scanError,
      scanning: running ? { entries: running.progress.entries } : null,
      createdAt: new Date(r.createdAt).toISOString(),
    };
  }
}
