import { newStorageKey } from '../../storage/keys.ts';
import type { StoredObject } from './stored-object.ts';
import { createHash } from 'node:crypto';
import type { Clock } from '../../clock.ts';
import type { Transactions } from '../../db/repos/index.ts';
import type { Item, ItemsRepo } from '../../db/repos/items.ts';
import type { FileChecksumsRepo } from '../../db/repos/file-checksums.ts';
import { badRequest, conflict, Messages, notFound } from '../../errors.ts';
import { newId } from '../../lib/ids.ts';
import { Jobs, type Payload } from '../../jobs/catalog.ts';
import type { JobQueue } from '../../jobs/queue.ts';
import { PermanentJobError } from '../../jobs/registry.ts';
import type { SealedStore } from '../../storage/sealed.ts';
import { StorageNotFoundError } from '../../storage/driver.ts';
import type { DiskSpaceService } from './disk-space.ts';
import { ChangeKinds, type ChangeLog } from '../changes/change-log.ts';
import { FileEventType, type FileEvents } from './file-events.ts';
import type { LibraryFiles } from './library-files.ts';
import type { LibraryContent } from './library-content.ts';
import type { StagedHostFile } from '../../lib/staged-host-file.ts';
import type { Principal } from '../identity/principal.ts';
import { type JobStarters, startedBy } from './file-jobs.ts';
import { type QuotaService, roomRuleOf } from './quota.ts';
import type { Tree } from './tree.ts';
import type { UploadIntentService } from './upload-intents.ts';
import type { TrashService } from './trash.ts';

export interface CopyDeps {
  clock: Clock;
  queue: JobQueue;
  storage: Pick<SealedStore, 'copy' | 'put' | 'delete'>;
  transactions: Transactions;
  items: ItemsRepo;
  tree: Tree;
  quota: QuotaService;
  intents: UploadIntentService;
  disk: DiskSpaceService;
  events: FileEvents;
  libraryFiles: Pick<LibraryFiles, 'libraryOf' | 'locate' | 'open'>;
  libraryContent: Pick<LibraryContent, 'stage' | 'drop'>;
  changes: ChangeLog;
  /** A copy's bytes are its source's: so is the SHA1 a client sent with them. */
  checksums: Pick<FileChecksumsRepo, 'carry'>;
  trash: Pick<TrashService, 'trashTrees' | 'deleteRoots' | 'restoreTrees'>;
  starters: Pick<JobStarters, 'assertStillMay'>;
}

const CHILD_PAGE = 500;
// A move's guard job waits until start-up makes it due (JobQueue.release): while the move runs, it never is.
const HELD = Number.MAX_SAFE_INTEGER;
// A library file's row: its content is the host file, not an object of the store.
const HOST_CONTENT = { storageKey: null, wrappedKey: null, keyId: null };

/** Where a copy's rows go: the job whose ids derive them, the account that owns them and how their commits find room. */
interface CopyTarget {
  jobId: string;
  accountId: string;
  room: 'evict' | 'free';
  /** The login the change log names for the copy. */
  loginId: string;
  /** What a copy answers when a folder it writes into went (trashed, deleted) while its bytes were copied. */
  folderGone: () => Error;
  /** The ids of the copies made (or found again) so far: a walk of the sources never enters them, as another request may have moved one inside a source. */
  made: Set<string>;
  /** Whether `source` may still be copied into `parentId` (a member's job: its share may end while the copy runs). */
  mayCopy?: (source: Item, parentId: string | null) => boolean;
  /** A move's sources as they were copied (contentOf), by id: one changed since is not the copy's to delete. */
  copied?: Map<string, string>;
  /** Throws when the copy may no longer land (a WebDAV lock taken on its folder meanwhile); asked where the copy commits. */
  atCommit?: () => void;
}

/** What a file holds, as far as a copy of it is concerned (a folder: nothing of its own). */
const contentOf = (row: Item) => (row.type === 'folder' ? '' : `${row.storageKey}:${row.size}:${row.modifiedAt}`);

const JOB_TARGET_GONE = 'the target folder no longer exists';
const inRequestFolderGone = () => notFound(Messages.folderNotFound);

/**
 * Ids and storage keys of a copy are derived from the job id and the source id, so a job that runs
 * again after a crash finds what its first run made and neither duplicates nor re-copies it.
 */
function derived(jobId: string, sourceId: string, purpose: 'id' | 'key'): string {
  const digest = createHash('sha256').update(`${purpose}:${jobId}:${sourceId}`).digest('base64url');
  return purpose === 'id' ? digest.slice(0, 22) : digest.slice(0, 32);
}

/**
 * Deep copies of files and folders, always on the job queue. A library file copied into the store is read
 * from its host file and encrypted; a copy into a library is written to its host folder (a temporary file
 * renamed into place at the commit of its row), taking no room in the store.
 */
export class CopyService {
  constructor(private readonly d: CopyDeps) {}

  /** POST /api/files/copy: checks the selection, target and quota for the whole trees, then queues. */
  start(caller: Principal, input: { ids: string[]; parentId?: string | null }): { message: string; queued: true; jobId: string } {
    // Copies cross a share's boundary either way: the copy belongs to (and counts against) the target's account.
    const source = this.d.tree.actor(caller, { ids: input.ids }, 'view');
    const principal = this.d.tree.actor(caller, { parentId: input.parentId }, 'edit');
    const rows = this.d.tree.requireLiveMany(source, input.ids);
    const targetId = this.d.tree.requireFolder(principal, input.parentId)?.id ?? null;
    if (this.d.tree.isInsideAnyFolder(rows, targetId)) throw badRequest(Messages.copyIntoSelf);
    this.d.tree.assertNests(rows, targetId);
    const bytes = this.d.tree.liveBytes(rows);
    // Nothing is removed before the copy runs: each file's commit makes its own room.
    this.d.quota.assertCouldFit(principal.accountId, bytes, roomRuleOf(principal));
    this.d.disk.assertRoom(bytes);
    const crossing = source.accountId !== principal.accountId ? { sourceAccountId: source.accountId } : {};
    const jobId = this.d.queue.enqueue(
      Jobs.filesCopy,
      { ...startedBy(principal), ids: rows.map((r) => r.id), parentId: targetId, ...crossing },
      { accountId: principal.accountId },
    );
    return { message: `Copying ${rows.length} item${rows.length === 1 ? '' : 's'}`, queued: true, jobId };
  }

  /**
   * WebDAV COPY, in the request: `source` to an exact folder and name (the caller made sure it is
   * free); `shallow` copies a folder without its contents (Depth: 0). Quota and disk are checked for
   * the whole tree first; a folder whose copy fails part way is removed.
   */
  async copyNow(
    principal: Principal,
    source: Item,
    parentId: string | null,
    name: string,
    shallow: boolean,
    replacedId: string | null = null,
    atCommit?: () => void,
  ): Promise<Item> {
    if (this.d.tree.isInsideAnyFolder([source], parentId)) throw badRequest(Messages.copyIntoSelf);
    if (shallow && source.type === 'folder') this.d.items.assertNests(parentId, 1);
    else this.d.tree.assertNests([source], parentId);
    const bytes = shallow ? source.size : this.d.tree.liveBytes([source]);
    const room = roomRuleOf(principal);
    this.d.quota.assertCouldFit(principal.accountId, bytes, room);
    this.d.disk.assertRoom(bytes);
    const into = {
      jobId: newId(),
      accountId: principal.accountId,
      room,
      loginId: principal.loginId,
      folderGone: inRequestFolderGone,
      made: new Set<string>(),
      atCommit,
    };
    const deep = source.type === 'folder' && !shallow;
    // A crash before the copy is whole: the next start removes what it made and puts the replaced destination back.
    const guard =
      deep || replacedId
        ? this.d.queue.insert(
            Jobs.copyGuard,
            {
              accountId: principal.accountId,
              loginId: principal.loginId,
              copyOf: into.jobId,
              sourceId: source.id,
              phase: 'copy',
              ...(replacedId ? { restores: replacedId } : {}),
            },
            { runAt: HELD },
          )
        : null;
    try {
      const root = await this.copyItem(into, source, parentId, true, name);
      if (deep) {
        try {
          await this.copyChildren(into, source.accountId, source.id, root.id);
          atCommit?.();
        } catch (err) {
          // All or nothing: a folder copied part way (the storage limit reached meanwhile, say) goes, not left as if whole.
          this.removeOwn(principal, root.id, into.made);
          throw err;
        }
      }
      this.d.events.item(principal, FileEventType.copied, root);
      return root;
    } finally {
      if (guard) this.d.queue.cancel(guard);
    }
  }

  /**
   * WebDAV COPY or MOVE of a file onto another file: the source's content under a new key (a byte copy of its
   * object, or a library file's bytes encrypted anew), then the destination's new content through `commit`
   * (which keeps its content before as a version, and lands it in the host folder for a library file).
   * The copy is removed when the commit throws.
   */
  async copyOnto(source: Item, commit: (object: StoredObject) => Promise<Item>): Promise<Item> {
    this.d.disk.assertRoom(source.size);
    const storageKey = newStorageKey();
    this.d.intents.record(storageKey);
    try {
      const content = await this.copyContent(source, storageKey);
      const row = await commit({
        storageKey,
        size: source.size,
        wrappedKey: content.wrappedKey,
        keyId: content.keyId,
        mimeType: source.mimeType ?? 'application/octet-stream',
        detected: true,
      });
      if (source.storageKey && row.storageKey === storageKey)
        this.d.checksums.carry({ id: source.id, storageKey: source.storageKey }, { id: row.id, storageKey });
      return row;
    } catch (err) {
      await this.discard(storageKey);
      throw err;
    }
  }

  /** Whether any of `ids` is a library's item. */
  inLibraries(ids: readonly string[]): boolean {
    return ids.some((id) => this.d.libraryFiles.libraryOf(id));
  }

  /** A file's content copied to `storageKey`: its object's bytes as they are (same data key), or its host file's encrypted. */
  private async copyContent(source: Item, storageKey: string): Promise<{ wrappedKey: string; keyId: string }> {
    const location = source.storageKey ? null : this.d.libraryFiles.locate(source);
    if (location) return this.d.storage.put(storageKey, this.d.libraryFiles.open(location, source.size));
    await this.d.storage.copy(source.storageKey!, storageKey).catch((err: unknown) => {
      // Deleted for good (or its content replaced) since it was read: the item is gone, the store is not at fault.
      const gone =
        err instanceof StorageNotFoundError && this.d.items.getLive(source.accountId, source.id)?.storageKey !== source.storageKey;
      throw gone ? notFound(Messages.itemNotFound) : err;
    });
    return { wrappedKey: source.wrappedKey!, keyId: source.keyId! };
  }

  /** Whether moving `ids` into `parentId` crosses between a library and the store (or two libraries): a copy then a delete. */
  crossesLibraries(ids: readonly string[], parentId: string | null): boolean {
    const target = parentId ? (this.d.libraryFiles.libraryOf(parentId)?.id ?? null) : null;
    return ids.some((id) => (this.d.libraryFiles.libraryOf(id)?.id ?? null) !== target);
  }

  /**
   * A move between a library and the store (or two libraries), in the request: each item is copied into the
   * target (under `name`, else a free name) with the quota rules of the target's account, then its source is
   * deleted for good (a library's host files with it). A failing copy is removed and leaves its source as it was.
   */
  async moveAcross(
    principal: Principal,
    ids: readonly string[],
    parentId: string | null,
    name?: string,
    atCommit?: () => void,
  ): Promise<Item[]> {
    const rows = this.d.tree.requireLiveMany(principal, ids);
    const targetId = this.d.tree.requireFolder(principal, parentId)?.id ?? null;
    if (this.d.tree.isInsideAnyFolder(rows, targetId)) throw badRequest(Messages.moveIntoSelf);
    this.d.tree.assertNests(rows, targetId);
    const bytes = this.d.tree.liveBytes(rows);
    const room = roomRuleOf(principal);
    if (!(targetId && this.d.libraryFiles.libraryOf(targetId))) this.d.quota.assertCouldFit(principal.accountId, bytes, room);
    this.d.disk.assertRoom(bytes);
    // Each source must be one its tree lets go (not in a read-only library, not a library's own folder) before anything is copied.
    for (const row of rows) this.d.items.checkChange({ kind: 'trash', itemId: row.id });
    const { accountId, loginId } = principal;
    const moved: Item[] = [];
    for (const row of rows) {
      const into = {
        jobId: newId(),
        accountId,
        room,
        loginId,
        folderGone: inRequestFolderGone,
        made: new Set<string>(),
        copied: new Map<string, string>(),
      };
      // What a crash from here on leaves is undone at the next start (phase copy), or finished once the copy is whole (phase delete).
      const step = { accountId, loginId, copyOf: into.jobId, sourceId: row.id };
      let guard = this.d.queue.insert(Jobs.copyGuard, { ...step, phase: 'copy' }, { runAt: HELD });
      let copy: Item | null = null;
      try {
        try {
          copy = await this.copyItem(into, row, targetId, true, name);
          if (row.type === 'folder') await this.copyChildren(into, accountId, row.id, copy.id);
          // Nothing awaited from here to the sources' delete: what is checked now still holds there.
          atCommit?.();
        } catch (err) {
          if (copy) this.removeOwn(principal, copy.id, into.made);
          throw err;
        }
        // What was copied leaves; an item put into the source (or a file replaced) meanwhile stays, with the folders above it.
        const sources = this.ownRoots(accountId, row.id, (source) => into.copied.get(source.id) === contentOf(source));
        guard = this.d.transactions.immediate(() => {
          this.d.queue.cancel(guard);
          return this.d.queue.insert(Jobs.copyGuard, { ...step, phase: 'delete', sources }, { runAt: HELD });
        });
        try {
          this.d.trash.trashTrees(accountId, loginId, sources);
        } catch (err) {
          // The host kept the source (a read-only mount, say): the copy goes, so the move changed nothing.
          this.removeOwn(principal, copy.id, into.made);
          throw err;
        }
        this.d.trash.deleteRoots(accountId, loginId, sources);
      } finally {
        this.d.queue.cancel(guard);
      }
      this.d.events.item(principal, FileEventType.copied, copy);
      moved.push(copy);
    }
    return moved;
  }

  /**
   * The end of a WebDAV MOVE of a file onto a library file (a copy, then a delete): `copied`, the source as it was
   * copied, goes for good, unless it changed meanwhile (saved again, say), and then stays.
   */
  deleteMovedFile(by: { accountId: string; loginId: string }, copied: Item): void {
    const gone = this.ownRoots(by.accountId, copied.id, (row) => contentOf(row) === contentOf(copied));
    this.d.trash.trashTrees(by.accountId, by.loginId, gone);
    this.d.trash.deleteRoots(by.accountId, by.loginId, gone);
  }

  /** Removes for good what a copy that failed made in `rootId`'s tree (`made`), as `ownRoots` finds it. */
  private removeOwn(by: { accountId: string; loginId: string }, rootId: string, made: ReadonlySet<string>): void {
    const gone = this.ownRoots(by.accountId, rootId, (row) => made.has(row.id));
    this.d.trash.trashTrees(by.accountId, by.loginId, gone);
    this.d.trash.deleteRoots(by.accountId, by.loginId, gone);
  }

  /**
   * The outermost items of `rootId`'s live tree that are `own` (a copy's rows, a move's copied sources) with nothing
   * else below them: an item another request put in the tree meanwhile stays, with the folders above it.
   */
  private ownRoots(accountId: string, rootId: string, own: (row: Item) => boolean): string[] {
    const rows = this.d.items.getMany(accountId, this.d.items.liveSubtreeIds(rootId));
    const byId = new Map(rows.map((r) => [r.id, r]));
    const kept = new Set<string>();
    for (const row of rows) {
      if (own(row)) continue;
      for (let at: Item | undefined = row; at && !kept.has(at.id); at = at.id === rootId ? undefined : byId.get(at.parentId ?? ''))
        kept.add(at.id);
    }
    return rows.filter((r) => !kept.has(r.id) && (r.id === rootId || kept.has(r.parentId ?? ''))).map((r) => r.id);
  }

  /**
   * Job body of `files.copy-guard`, run after a crash cut a copy made in the request short: a copy not yet whole
   * is removed (the source stays as it was, and a destination it replaced comes back from the trash); once a move's
   * copy was whole, its copied sources are deleted as the move would have.
   */
  settleCopy(p: Payload<'copyGuard'>): { count: number } {
    const ids = p.phase === 'copy' ? [derived(p.copyOf, p.sourceId, 'id')] : (p.sources ?? [p.sourceId]);
    const found = ids.filter((id) => this.d.items.get(p.accountId, id) !== null);
    this.d.trash.trashTrees(p.accountId, p.loginId, found);
    this.d.trash.deleteRoots(p.accountId, p.loginId, found);
    if (p.restores) this.d.trash.restoreTrees(p.accountId, p.loginId, [p.restores]);
    return { count: found.length };
  }

  /** Job body of `files.copy`: returns the ids of the top-level copies (the same on every run of the job). */
  async run(jobId: string, p: Payload<'filesCopy'>, signal?: AbortSignal): Promise<{ count: number; ids: string[] }> {
    const repo = this.d.items;
    const from = p.sourceAccountId ?? p.accountId;
    this.d.starters.assertStillMay(p, 'copy.start');
    this.assertStillShared(p);
    if (p.parentId !== null) {
      const target = repo.getLive(p.accountId, p.parentId);
      if (!target || target.type !== 'folder') throw new PermanentJobError(JOB_TARGET_GONE);
    }
    // The target may have moved deeper since the job was queued: refused before anything is copied.
    for (const id of p.ids) {
      const source = repo.getLive(from, id);
      if (source?.type === 'folder' && !repo.get(p.accountId, derived(jobId, id, 'id')) && !repo.nests(p.parentId, id))
        throw new PermanentJobError(Messages.folderTooDeep);
    }
    const into = {
      jobId,
      accountId: p.accountId,
      room: roomRuleOf(p),
      loginId: p.loginId,
      folderGone: () => new PermanentJobError(JOB_TARGET_GONE),
      made: new Set(p.ids.map((id) => derived(jobId, id, 'id'))),
      mayCopy: (source: Item, parentId: string | null) => this.sharedAccess(p, [source.id], parentId),
    };
    const ids: string[] = [];
    const created: Item[] = [];
    for (const sourceId of p.ids) {
      const copyId = derived(jobId, sourceId, 'id');
      const existing = repo.get(p.accountId, copyId);
      const source = repo.getLive(from, sourceId);
      if (!source && !existing) continue;
      const root = existing ?? (await this.copyItem(into, source!, p.parentId, true));
      if (!existing) created.push(root);
      ids.push(root.id);
      if (source?.type === 'folder') await this.copyChildren(into, from, source.id, root.id, signal);
    }
    for (const row of created) this.d.events.item(p, FileEventType.copied, row);
    return { count: ids.length, ids };
  }

  /**
   * A copy out of, into or inside a share runs only while the member still has what starting it needed: it is
   * queued, and may run after the member was removed (or made a viewer), or after the owner moved the items out.
   */
  private assertStillShared(p: Payload<'filesCopy'>): void {
    if (!this.sharedAccess(p, p.ids, p.parentId)) throw new PermanentJobError('access to the shared folder ended before the copy ran');
  }

  /** Whether the member whose job `p` is may still read `ids` and write into `parentId` (a job crossing no share: always). */
  private sharedAccess(p: Payload<'filesCopy'>, ids: readonly string[], parentId: string | null): boolean {
    const member = p.memberAccountId ?? (p.sourceAccountId !== undefined ? p.accountId : undefined);
    if (member === undefined) return true;
    const into = p.memberAccountId !== undefined;
    const outOf = (p.sourceAccountId ?? p.accountId) !== member;
    return (
      (!into || (parentId !== null && this.d.tree.editsShared(member, parentId))) &&
      (!outOf || ids.every((id) => this.d.tree.reachesShared(member, id)))
    );
  }

  /** Copies the live children of `sourceFolder` into `copyFolder`, depth first, page by page. */
  private async copyChildren(
    target: CopyTarget,
    sourceAccountId: string,
    sourceFolder: string,
    copyFolder: string,
    signal?: AbortSignal,
  ): Promise<void> {
    let after = '';
    for (;;) {
      signal?.throwIfAborted();
      const children = this.d.items.liveChildren(sourceAccountId, sourceFolder, after, CHILD_PAGE);
      for (const child of children) {
        if (target.made.has(child.id)) continue;
        const copyId = derived(target.jobId, child.id, 'id');
        const found = this.d.items.get(target.accountId, copyId);
        if (found) target.made.add(found.id);
        const copy = found ?? (await this.copyItem(target, child, copyFolder, false));
        if (child.type === 'folder') await this.copyChildren(target, sourceAccountId, child.id, copy.id, signal);
      }
      if (children.length < CHILD_PAGE) return;
      after = children[children.length - 1]!.id;
    }
  }

  /**
   * One item of the target's account: the object first (a byte copy under a derived key, same wrapped data
   * key; a library file's bytes encrypted anew), then its row; into a library, the object staged in the host
   * folder first and deleted once the row is committed.
   */
  private async copyItem(target: CopyTarget, source: Item, parentId: string | null, isRoot: boolean, name?: string): Promise<Item> {
    const storageKey = source.type === 'file' ? derived(target.jobId, source.id, 'key') : null;
    let staged: StagedHostFile | null = null;
    try {
      let content: Pick<Item, 'storageKey' | 'wrappedKey' | 'keyId'> = source;
      if (storageKey) {
        this.d.disk.assertRoom(source.size);
        this.d.intents.record(storageKey);
        content = { storageKey, ...(await this.copyContent(source, storageKey)) };
        staged = await this.d.libraryContent.stage(
          parentId,
          { storageKey, wrappedKey: content.wrappedKey!, size: source.size },
          source.modifiedAt,
        );
      }
      return this.insertCopy(target, source, content, staged, parentId, isRoot, name);
    } catch (err) {
      await this.d.libraryContent.drop(staged, null);
      if (storageKey) await this.discard(storageKey);
      throw err;
    }
  }

  /** Removes a copy that was not committed; one that cannot be removed is left to the intent sweep. */
  private async discard(storageKey: string): Promise<void> {
    const removed = await this.d.storage.delete(storageKey).then(
      () => true,
      () => false,
    );
    if (removed) this.d.intents.forget(storageKey);
    else this.d.intents.abandon(storageKey);
  }

  private insertCopy(
    target: CopyTarget,
    source: Item,
    content: Pick<Item, 'storageKey' | 'wrappedKey' | 'keyId'>,
    staged: StagedHostFile | null,
    parentId: string | null,
    isRoot: boolean,
    name?: string,
  ): Item {
    const { accountId } = target;
    const now = this.d.clock.now();
    const storageKey = source.type === 'file' ? content.storageKey : null;
    return this.d.transactions.immediate(() => {
      // Checked again for each item: the share may have ended, or the item left it, while earlier ones were copied.
      if (target.mayCopy && !target.mayCopy(source, parentId))
        throw new PermanentJobError('access to the shared folder ended while the copy ran');
      // The folder was checked before the bytes were copied: it may have gone to the trash (or for good) since.
      if (parentId !== null && this.d.items.getLive(accountId, parentId)?.type !== 'folder') throw target.folderGone();
      if (isRoot) target.atCommit?.();
      // An exact name (a WebDAV COPY's destination) may have been taken since: refused as a rename onto it is.
      if (name !== undefined && this.d.items.liveByName(accountId, parentId, name)) throw conflict(Messages.nameTaken);
      // A copy into a library takes no room in the store.
      const counted = source.type === 'file' && !staged;
      if (counted) this.d.quota.assertRoomFor(accountId, source.size, target.room);
      const row = this.d.items.insert(
        {
          id: derived(target.jobId, source.id, 'id'),
          accountId,
          parentId,
          type: source.type,
          // Inside the new folder too: another request may have put an item there while the copy ran.
          name: name ?? this.d.tree.uniqueName(accountId, parentId, source.name),
          size: source.size,
          mimeType: source.mimeType,
          ...(staged || source.type === 'folder' ? HOST_CONTENT : { storageKey, wrappedKey: content.wrappedKey, keyId: content.keyId }),
          starred: source.starred,
          modifiedAt: staged?.modifiedAt ?? source.modifiedAt,
          accessedAt: now,
          createdAt: now,
        },
        staged ?? undefined,
      );
      if (counted) this.d.quota.adjust(accountId, source.size);
      if (source.storageKey && row.storageKey)
        this.d.checksums.carry({ id: source.id, storageKey: source.storageKey }, { id: row.id, storageKey: row.storageKey });
      if (storageKey) this.d.intents.committed(storageKey);
      if (staged && storageKey) this.d.queue.insert(Jobs.storageDelete, { keys: [storageKey] });
      if (isRoot) this.d.changes.record(target, ChangeKinds.copied, row, { details: { sourceId: source.id } });
      target.made.add(row.id);
      target.copied?.set(source.id, contentOf(source));
      return row;
    });
  }
}
