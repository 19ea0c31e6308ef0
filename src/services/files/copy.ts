import { newStorageKey } from '../../storage/keys.ts';
import type { StoredObject } from './uploads.ts';
import { createHash } from 'node:crypto';
import type { Clock } from '../../clock.ts';
import type { Transactions } from '../../db/repos/index.ts';
import type { Item, ItemsRepo } from '../../db/repos/items.ts';
import { badRequest, forbidden, Messages } from '../../errors.ts';
import { newId } from '../../lib/ids.ts';
import { Jobs, type Payload } from '../../jobs/catalog.ts';
import type { JobQueue } from '../../jobs/queue.ts';
import { PermanentJobError } from '../../jobs/registry.ts';
import type { SealedStore } from '../../storage/sealed.ts';
import type { DiskSpaceService } from './disk-space.ts';
import { ChangeKinds, type ChangeLog } from '../changes/change-log.ts';
import { FileEventType, type FileEvents } from './file-events.ts';
import type { LibraryFiles } from './library-files.ts';
import type { Principal } from '../identity/principal.ts';
import { startedBy } from './file-jobs.ts';
import { type QuotaService, roomRuleOf } from './quota.ts';
import type { Tree } from './tree.ts';
import type { UploadIntentService } from './upload-intents.ts';

export interface CopyDeps {
  clock: Clock;
  queue: JobQueue;
  storage: Pick<SealedStore, 'copy' | 'delete'>;
  transactions: Transactions;
  items: ItemsRepo;
  tree: Tree;
  quota: QuotaService;
  intents: UploadIntentService;
  disk: DiskSpaceService;
  events: FileEvents;
  libraryFiles: Pick<LibraryFiles, 'libraryOf'>;
  changes: ChangeLog;
}

const CHILD_PAGE = 500;
const LIBRARY_COPY = 'Copying out of a library is not available yet: download the files, or copy them on the server.';

/** Where a copy's rows go: the job whose ids derive them, the account that owns them and how their commits find room. */
interface CopyTarget {
  jobId: string;
  accountId: string;
  room: 'evict' | 'free';
  /** The login the change log names for the copy. */
  loginId: string;
}

/**
 * Ids and storage keys of a copy are derived from the job id and the source id, so a job that runs
 * again after a crash finds what its first run made and neither duplicates nor re-copies it.
 */
function derived(jobId: string, sourceId: string, purpose: 'id' | 'key'): string {
  const digest = createHash('sha256').update(`${purpose}:${jobId}:${sourceId}`).digest('base64url');
  return purpose === 'id' ? digest.slice(0, 22) : digest.slice(0, 32);
}

/** Deep copies of files and folders, always on the job queue. */
export class CopyService {
  constructor(private readonly d: CopyDeps) {}

  /** POST /api/files/copy: checks the selection, target and quota for the whole trees, then queues. */
  start(caller: Principal, input: { ids: string[]; parentId?: string | null }): { message: string; queued: true; jobId: string } {
    // Copies cross a share's boundary either way: the copy belongs to (and counts against) the target's account.
    const source = this.d.tree.actor(caller, { ids: input.ids }, 'view');
    const principal = this.d.tree.actor(caller, { parentId: input.parentId }, 'edit');
    const rows = this.d.tree.requireLiveMany(source, input.ids);
    this.refuseLibraryItems(rows);
    const targetId = this.d.tree.requireFolder(principal, input.parentId)?.id ?? null;
    if (this.d.tree.isInsideAnyFolder(rows, targetId)) throw badRequest(Messages.copyIntoSelf);
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
   * the whole tree first.
   */
  async copyNow(principal: Principal, source: Item, parentId: string | null, name: string, shallow: boolean): Promise<Item> {
    this.refuseLibraryItems([source]);
    if (this.d.tree.isInsideAnyFolder([source], parentId)) throw badRequest(Messages.copyIntoSelf);
    const bytes = shallow ? source.size : this.d.tree.liveBytes([source]);
    const room = roomRuleOf(principal);
    this.d.quota.assertCouldFit(principal.accountId, bytes, room);
    this.d.disk.assertRoom(bytes);
    const into = { jobId: newId(), accountId: principal.accountId, room, loginId: principal.loginId };
    const root = await this.copyItem(into, source, parentId, true, name);
    if (source.type === 'folder' && !shallow) await this.copyChildren(into, source.accountId, source.id, root.id);
    this.d.events.item(principal, FileEventType.copied, root);
    return root;
  }

  /**
   * WebDAV COPY of a file onto another file: a byte copy of the source's object under a new key, then
   * the destination's new content through `commit` (which keeps its content before as a version).
   * The copy is removed when the commit throws.
   */
  async copyOnto(source: Item, commit: (object: StoredObject) => Item): Promise<Item> {
    this.refuseLibraryItems([source]);
    this.d.disk.assertRoom(source.size);
    const storageKey = newStorageKey();
    this.d.intents.record(storageKey);
    try {
      await this.d.storage.copy(source.storageKey!, storageKey);
      return commit({
        storageKey,
        size: source.size,
        wrappedKey: source.wrappedKey!,
        keyId: source.keyId!,
        mimeType: source.mimeType ?? 'application/octet-stream',
        detected: true,
      });
    } catch (err) {
      await this.discard(storageKey);
      throw err;
    }
  }

  /** Job body of `files.copy`: returns the ids of the top-level copies (the same on every run of the job). */
  async run(jobId: string, p: Payload<'filesCopy'>, signal?: AbortSignal): Promise<{ count: number; ids: string[] }> {
    const repo = this.d.items;
    const from = p.sourceAccountId ?? p.accountId;
    if (p.parentId !== null) {
      const target = repo.getLive(p.accountId, p.parentId);
      if (!target || target.type !== 'folder') throw new PermanentJobError('the target folder no longer exists');
    }
    const into = { jobId, accountId: p.accountId, room: roomRuleOf(p), loginId: p.loginId };
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
        const copyId = derived(target.jobId, child.id, 'id');
        const copy = this.d.items.get(target.accountId, copyId) ?? (await this.copyItem(target, child, copyFolder, false));
        if (child.type === 'folder') await this.copyChildren(target, sourceAccountId, child.id, copy.id, signal);
      }
      if (children.length < CHILD_PAGE) return;
      after = children[children.length - 1]!.id;
    }
  }

  /** A library's files have no object to copy: a copy of one (or of a folder holding them) is refused before anything is made. */
  private refuseLibraryItems(rows: ReadonlyArray<Pick<Item, 'id'>>): void {
    if (rows.some((r) => this.d.libraryFiles.libraryOf(r.id))) throw forbidden(LIBRARY_COPY);
  }

  /** One item of the target's account: the object first (a byte copy under a derived key, same wrapped data key), then its row. */
  private async copyItem(target: CopyTarget, source: Item, parentId: string | null, isRoot: boolean, name?: string): Promise<Item> {
    const storageKey = source.type === 'file' ? derived(target.jobId, source.id, 'key') : null;
    try {
      if (storageKey) {
        this.d.disk.assertRoom(source.size);
        this.d.intents.record(storageKey);
        await this.d.storage.copy(source.storageKey!, storageKey);
      }
      return this.insertCopy(target, source, storageKey, parentId, isRoot, name);
    } catch (err) {
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
    storageKey: string | null,
    parentId: string | null,
    isRoot: boolean,
    name?: string,
  ): Item {
    const { accountId } = target;
    const now = this.d.clock.now();
    return this.d.transactions.immediate(() => {
      if (source.type === 'file') this.d.quota.assertRoomFor(accountId, source.size, target.room);
      const row = this.d.items.insert({
        id: derived(target.jobId, source.id, 'id'),
        accountId,
        parentId,
        type: source.type,
        // Inside a new folder the names are already unique; only the top-level copy can collide.
        name: name ?? (isRoot ? this.d.tree.uniqueName(accountId, parentId, source.name) : source.name),
        size: source.size,
        mimeType: source.mimeType,
        storageKey,
        wrappedKey: source.wrappedKey,
        keyId: source.keyId,
        starred: source.starred,
        modifiedAt: source.modifiedAt,
        accessedAt: now,
        createdAt: now,
      });
      if (source.type === 'file') this.d.quota.adjust(accountId, source.size);
      if (storageKey) this.d.intents.committed(storageKey);
      if (isRoot) this.d.changes.record(target, ChangeKinds.copied, row, { details: { sourceId: source.id } });
      return row;
    });
  }
}
