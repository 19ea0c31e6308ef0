import type { LibrariesRepo } from '../../db/repos/libraries.ts';
import type { VersionsRepo } from '../../db/repos/versions.ts';
import type { Clock } from '../../clock.ts';
import type { Transactions } from '../../db/repos/index.ts';
import type { Item, ItemsRepo } from '../../db/repos/items.ts';
import { Messages } from '../../errors.ts';
import { Jobs } from '../../jobs/catalog.ts';
import type { JobQueue } from '../../jobs/queue.ts';
import { PermanentJobError } from '../../jobs/registry.ts';
import { type ChangeBy, ChangeKinds, type ChangeLog } from '../changes/change-log.ts';
import type { AuditPrincipal } from '../admin/audit.ts';
import { FileEventType, type FileEvents } from './file-events.ts';
import type { JobStarters } from './file-jobs.ts';
import type { ItemService, Page } from './items.ts';
import type { Principal } from '../identity/principal.ts';
import { startedBy } from './file-jobs.ts';
import type { QuotaService } from './quota.ts';
import { runAll, runInTurns, type Steps } from '../../lib/steps.ts';
import type { PageQuery, Tree } from './tree.ts';

/** docs/api.md › Limits: trees up to this many items are handled in the request; larger ones are queued. */
const WEB_PROCESS_LIMIT = 1000;
const JOB_BATCH = 500;
// Trashed items named one by one in the audit record of an emptied trash; the rest are counted.
const AUDIT_LISTED = 100;

/** Progress of an operation handled in the request: `done` of `total` ids, then the final body. */
export type InlineRun = AsyncGenerator<{ done: number; total: number }, { message: string }>;

export type TrashPlan = { queued: true; jobId: string } | { queued: false; total: number; run: InlineRun };

/** How a job drives a long operation: stop between batches when asked, count each batch inside its transaction. */
export interface BatchRun {
  signal?: AbortSignal;
  /** Called with the items a batch changed, inside the batch's transaction. */
  onBatch?: (count: number) => void;
}

/** docs/compatibility.md › Jobs: one progress line per batch of max(25, ceil(N/20)) ids. */
function progressBatch(total: number): number {
  return Math.max(25, Math.ceil(total / 20));
}

/** Whom a queued file job is for (its payload's starter), and the ids it names. */
type JobStarter = { accountId: string; loginId: string; memberAccountId?: string };
type JobTrees = JobStarter & { ids: string[] };
/** A trash root put back, and the items that left share links with it. */
type Restored = { row: Item; unshared: readonly Item[] };

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

export interface TrashDeps {
  clock: Clock;
  retentionClock: Pick<Clock, 'now'>;
  queue: JobQueue;
  transactions: Transactions;
  items: ItemsRepo;
  tree: Tree;
  listing: ItemService;
  quota: QuotaService;
  events: FileEvents;
  changes: ChangeLog;
  versions: VersionsRepo;
  libraries: Pick<LibrariesRepo, 'ofItem'>;
  starters: Pick<JobStarters, 'assertStillMay'>;
}

/**
 * Trash, restore, permanent delete and empty. Trashing marks the whole subtree with `deletedAt` and
 * `deletedRootId` (the item the user trashed); each step works bottom-up with the root last, so an
 * interrupted step can simply run again. Permanent deletes remove rows first and queue the deletion of
 * their objects in the same transaction, so no row ever points at a missing object.
 */
export class TrashService {
  constructor(private readonly d: TrashDeps) {}

  /** The trash: the roots of what was trashed (a trashed folder's contents are restored with it). */
  list(principal: Principal, q: PageQuery): Page {
    return this.d.listing.listScope({ kind: 'trash', accountId: principal.accountId }, q);
  }

  /** POST /api/files/delete: the selection's trees, in the request when small enough, else queued. */
  planTrash(caller: Principal, ids: string[]): TrashPlan {
    // A member's editor trashes into the sharing owner's trash.
    const principal = this.d.tree.actor(caller, { ids }, 'edit');
    const rows = this.d.tree.requireLiveMany(principal, ids);
    const folderIds = new Set(rows.filter((r) => r.type === 'folder').map((r) => r.id));
    // An item inside another selected folder goes with that folder.
    const roots = rows.filter((r) => !this.d.tree.isInside(folderIds, r.parentId));
    const trees: Array<{ root: Item; ids: string[] }> = [];
    let total = 0;
    for (const root of roots) {
      const subtree = this.d.items.liveSubtreeIds(root.id, WEB_PROCESS_LIMIT + 1 - total);
      total += subtree.length;
      trees.push({ root, ids: subtree });
      if (total > WEB_PROCESS_LIMIT) return this.queue(Jobs.filesTrash, principal, roots);
    }
    return { queued: false, total, run: this.runTrash(principal, trees, total) };
  }

  private queue(job: typeof Jobs.filesTrash | typeof Jobs.filesRestore, principal: Principal, roots: Item[]): TrashPlan {
    const payload = { ...startedBy(principal), ids: roots.map((r) => r.id) };
    return { queued: true, jobId: this.d.queue.enqueue(job, payload, { accountId: principal.accountId }) };
  }

  /**
   * Each batch reads the trees again in its transaction: another request may have moved items out of a selected folder
   * (they stay where they went, never trashed, or purged, with it), moved some in (they go with it), or trashed a
   * selected item itself (skipped, and said so) since the request was planned.
   */
  private async *runTrash(principal: Principal, trees: Array<{ root: Item; ids: string[] }>, total: number): InlineRun {
    const now = this.d.clock.now();
    const size = progressBatch(total);
    const { accountId } = principal;
    const trashed: Item[] = [];
    let gone = 0;
    let at = 0;
    let done = 0;
    // Ids this run marked or tried to: never tried twice, so a row the tree's guard keeps cannot hold the run in a loop.
    const tried = new Set<string>();
    yield { done: 0, total };
    while (at < trees.length) {
      done += this.d.transactions.batch(() => {
        let room = size;
        while (room > 0 && at < trees.length) {
          const { root } = trees[at]!;
          if (!this.d.items.getLive(accountId, root.id)) {
            if (!tried.has(root.id)) gone++;
            at++;
            continue;
          }
          // Deepest first and the root last: every folder is marked after what it holds.
          const ids = this.d.items
            .liveSubtreeIds(root.id)
            .reverse()
            .filter((id) => !tried.has(id));
          const batch = ids.slice(0, room);
          for (const id of batch) {
            tried.add(id);
            const changed = this.d.items.markTrashed(id, root.id, now);
            if (changed && id === root.id) {
              this.recordTrashed(principal, root.id);
              trashed.push(root);
            }
          }
          room -= batch.length;
          if (batch.length === ids.length) at++;
        }
        return size - room;
      });
      yield { done: Math.min(total, done), total };
    }
    for (const root of trashed) this.d.events.item(principal, FileEventType.deleted, root);
    const left = trees.flatMap((t) => t.ids).filter((id) => !tried.has(id) && this.d.items.getLive(accountId, id)).length;
    const notes = [
      left
        ? `${plural(left, 'item')} moved out of it meanwhile ${left === 1 ? 'was' : 'were'} left where ${left === 1 ? 'it is' : 'they are'}`
        : '',
      gone
        ? `${plural(gone, 'item')} ${gone === 1 ? 'was' : 'were'} no longer there (another request moved ${gone === 1 ? 'it' : 'them'} to the trash or deleted ${gone === 1 ? 'it' : 'them'})`
        : '',
    ];
    return { message: [`Moved ${plural(trashed.length, 'item')} to trash`, ...notes.filter(Boolean)].join('; ') };
  }

  /**
   * Job body of `files.trash`. One a member started inside a share runs only while it is still an editor there:
   * queued, it may run after the member was removed or made a viewer, and then trashes nothing.
   */
  trashJob(p: JobTrees, run: BatchRun = {}): Promise<number> {
    this.d.starters.assertStillMay(p, 'trash.trash');
    const member = p.memberAccountId;
    if (member !== undefined && !p.ids.every((id) => this.d.tree.editsShared(member, id)))
      throw new PermanentJobError('access to the shared folder ended before the trash ran');
    return runInTurns(this.trashSteps(p.accountId, p.loginId, p.ids, run));
  }

  /** Trashes each live root's tree in batches; safe to run again. */
  trashTrees(accountId: string, loginId: string, ids: string[], run: BatchRun = {}): number {
    return runAll(this.trashSteps(accountId, loginId, ids, run));
  }

  *trashSteps(accountId: string, loginId: string, ids: string[], run: BatchRun = {}): Steps<number> {
    const now = this.d.clock.now();
    let count = 0;
    for (const id of ids) {
      const root = this.d.items.getLive(accountId, id);
      if (!root) continue;
      const subtree = this.d.items.liveSubtreeIds(root.id).reverse();
      for (let i = 0; i < subtree.length; i += JOB_BATCH) {
        run.signal?.throwIfAborted();
        const batch = subtree.slice(i, i + JOB_BATCH);
        count += this.d.transactions.batch(() => {
          let changed = 0;
          for (const itemId of batch) {
            const marked = this.d.items.markTrashed(itemId, root.id, now);
            if (marked && itemId === root.id) this.recordTrashed({ accountId, loginId }, root.id);
            changed += marked;
          }
          run.onBatch?.(changed);
          return changed;
        });
      }
      this.d.events.item({ accountId, loginId }, FileEventType.deleted, root);
      // A turn between trees, never inside one: the tree's list is read once, so a file put into one of its folders or moved
      // out of it meanwhile would be left live under a trashed folder, or trashed where it went.
      yield;
    }
    return count;
  }

  /** POST /api/files/trash/restore: in the request up to 1000 items, else queued. */
  planRestore(principal: Principal, ids: string[]): TrashPlan {
    const roots = this.outerFirst(this.d.tree.requireTrashRoots(principal, ids));
    const sets: Array<{ root: Item; ids: string[] }> = [];
    let total = 0;
    for (const root of roots) {
      const members = this.d.items.trashSetIds(root.id, WEB_PROCESS_LIMIT + 1 - total);
      total += members.length + 1;
      sets.push({ root, ids: members });
      if (total > WEB_PROCESS_LIMIT) return this.queue(Jobs.filesRestore, principal, roots);
    }
    return { queued: false, total, run: this.runRestore(principal, sets, total) };
  }

  /** Roots whose old folder lies in another selected root after it, so they go back into it rather than home. */
  private outerFirst(roots: Item[]): Item[] {
    const ordered: Item[] = [];
    let left = roots;
    while (left.length > 0) {
      const folders = new Set(left.filter((r) => r.type === 'folder').map((r) => r.id));
      const inside = this.d.tree.insideAny(
        folders,
        left.flatMap((r) => (r.parentId ? [r.parentId] : [])),
      );
      const ready = left.filter((r) => r.parentId === null || !inside.has(r.parentId));
      // A cycle cannot arise (items form a tree); the guard only keeps the loop finite.
      if (ready.length === 0) return [...ordered, ...left];
      ordered.push(...ready);
      const placed = new Set(ready);
      left = left.filter((r) => !placed.has(r));
    }
    return ordered;
  }

  private async *runRestore(principal: Principal, sets: Array<{ root: Item; ids: string[] }>, total: number): InlineRun {
    const steps = sets.flatMap((s) => [...s.ids.map((id) => ({ id, root: s.root.id })), { id: s.root.id, root: s.root.id }]);
    const size = progressBatch(total);
    const restored: Restored[] = [];
    // Roots another request restored or deleted for good since the plan: what is left of their sets is not touched.
    const gone = new Set<string>();
    yield { done: 0, total };
    for (let i = 0; i < steps.length; i += size) {
      const batch = steps.slice(i, i + size);
      this.d.transactions.immediate(() => {
        for (const s of batch) {
          // Read again in each batch: a member is never put back under a root that left the trash meanwhile.
          if (gone.has(s.root) || !this.inTrash(principal.accountId, s.root)) {
            gone.add(s.root);
            continue;
          }
          if (s.id === s.root) {
            // Members the plan did not name, or restored in an earlier batch and trashed with the root again since, go back with it.
            for (const id of this.d.items.trashSetIds(s.root, Number.MAX_SAFE_INTEGER)) this.d.items.restoreMember(id, s.root);
            const back = this.restoreRoot(principal, s.root);
            if (back) restored.push(back);
          } else this.d.items.restoreMember(s.id, s.root);
        }
      });
      yield { done: Math.min(total, i + batch.length), total };
    }
    for (const back of restored) this.announceRestored(principal, back);
    const note = gone.size
      ? `; ${plural(gone.size, 'item')} ${gone.size === 1 ? 'was' : 'were'} no longer in the trash (another request restored or deleted ${gone.size === 1 ? 'it' : 'them'})`
      : '';
    return { message: `Restored ${plural(restored.length, 'item')}${note}` };
  }

  /** Whether `rootId` is still a trash root of the account. */
  private inTrash(accountId: string, rootId: string): boolean {
    return this.d.items.get(accountId, rootId)?.deletedRootId === rootId;
  }

  /**
   * Puts a trash root back: in its original folder when that is live, else the account's home (Tree.homeFolder); a taken
   * name gets `(n)`.
   * Put back elsewhere, it leaves the links it joined in its old folder, as a move out of it does.
   */
  private restoreRoot(by: { accountId: string; loginId: string }, rootId: string): Restored | null {
    const { accountId } = by;
    const root = this.d.items.get(accountId, rootId);
    if (!root || root.deletedRootId !== root.id) return null;
    const parent = root.parentId ? this.d.items.getLive(accountId, root.parentId) : null;
    // A folder moved too deep for this one (while it was in the trash) counts as gone: its members are live again already.
    const fits = parent?.type === 'folder' && (root.type === 'file' || this.d.items.nests(parent.id, root.id));
    // A library's item whose folder is gone goes back to its library's folder: its file cannot leave the library.
    const parentId = fits ? parent.id : (this.d.libraries.ofItem(root.id)?.folderId ?? this.d.tree.homeFolder(accountId));
    const row = this.d.items.restoreRoot(root.id, parentId, this.d.tree.uniqueName(accountId, parentId, root.name));
    this.d.changes.record(by, ChangeKinds.restored, row, { before: root });
    return { row, unshared: parentId !== root.parentId ? this.d.listing.afterMove(by, [row.id]) : [] };
  }

  /** After the restore's commit: the item back, and each item that left a link with it unshared. */
  private announceRestored(by: { accountId: string; loginId: string }, back: Restored): void {
    this.d.events.item(by, FileEventType.restored, back.row);
    for (const left of back.unshared) this.d.events.item(by, FileEventType.shared, left, { shared: false });
  }

  /** The change log's row of a trash root just marked, in the batch's transaction. */
  private recordTrashed(by: { accountId: string; loginId: string }, rootId: string): void {
    const root = this.d.items.get(by.accountId, rootId);
    if (root) this.d.changes.record(by, ChangeKinds.trashed, root);
  }

  /** Job body of `files.restore`: members first in batches, the root last; safe to run again. */
  /** Job body of `files.restore`, while its starter may still restore. */
  restoreJob(p: JobTrees, run: BatchRun = {}): Promise<number> {
    this.d.starters.assertStillMay(p, 'trash.restore');
    return runInTurns(this.restoreSteps(p.accountId, p.loginId, p.ids, run));
  }

  restoreTrees(accountId: string, loginId: string, ids: string[], run: BatchRun = {}): number {
    return runAll(this.restoreSteps(accountId, loginId, ids, run));
  }

  *restoreSteps(accountId: string, loginId: string, ids: string[], run: BatchRun): Steps<number> {
    let count = 0;
    for (const id of ids) {
      const root = this.d.items.get(accountId, id);
      if (!root || root.deletedRootId !== root.id) continue;
      for (;;) {
        run.signal?.throwIfAborted();
        const batch = this.d.items.trashSetIds(root.id, JOB_BATCH);
        if (batch.length === 0) break;
        count += this.d.transactions.batch(() => {
          let changed = 0;
          for (const itemId of batch) changed += this.d.items.restoreMember(itemId, root.id);
          run.onBatch?.(changed);
          return changed;
        });
        yield;
      }
      const restored = this.d.transactions.immediate(() => {
        const back = this.restoreRoot({ accountId, loginId }, root.id);
        if (back) run.onBatch?.(1);
        return back;
      });
      if (restored) {
        count++;
        this.announceRestored({ accountId, loginId }, restored);
      }
    }
    return count;
  }

  /** POST /api/files/trash/delete: always queued. */
  startPermanentDelete(principal: Principal, ids: string[]): { message: string; queued: true; jobId: string } {
    const roots = this.d.tree.requireTrashRoots(principal, ids);
    const jobId = this.d.queue.enqueue(
      Jobs.trashDelete,
      { ...startedBy(principal), ids: roots.map((r) => r.id) },
      { accountId: principal.accountId },
    );
    return { message: `Deleting ${plural(roots.length, 'item')} permanently`, queued: true, jobId };
  }

  /** POST /api/files/trash/empty: queued, or a message when there is nothing to remove. */
  startEmpty(principal: Principal): { message: string; queued?: true; jobId?: string } {
    if (!this.d.items.hasTrash(principal.accountId)) return { message: Messages.trashAlreadyEmpty };
    const payload = startedBy(principal);
    const jobId = this.d.queue.enqueue(Jobs.trashEmpty, payload, { accountId: principal.accountId });
    return { message: 'Emptying trash', queued: true, jobId };
  }

  /**
   * Removes one trash root and everything trashed with it: rows in batches (the root last), each batch
   * in one transaction with the usage counter and a queued deletion of its objects.
   */
  private *purgeRoot(by: ChangeBy, rootId: string, run: BatchRun = {}): Steps<number> {
    const { accountId } = by;
    // Each batch takes back first what a restore racing this delete put back under the entry (members go back before
    // their root), in the transaction that reads the batch: the root goes only once nothing is left under it.
    const removeBatch = () =>
      this.d.transactions.immediate(() => {
        // Restored whole meanwhile (the restore's last batch came first): what is live stays.
        const root = this.d.items.trashRoot(accountId, rootId);
        if (!root) return { count: 0, last: true };
        this.d.items.takeBackRestored(rootId);
        const members = this.d.items.trashSetPage(rootId, JOB_BATCH);
        const last = members.length === 0;
        const rows = last ? [root] : members;
        if (last) this.recordPurged(by, rootId);
        let bytes = 0;
        const keys: string[] = [];
        for (const r of rows) {
          if (r.type === 'file') {
            const versions = this.d.versions.deleteOfItem(r.id);
            // A library file's own bytes never counted (they are on the host); its versions did.
            bytes += (this.d.libraries.ofItem(r.id) ? 0 : r.size) + versions.bytes;
            keys.push(...versions.keys);
          }
          this.d.items.purge(r.id);
          if (r.storageKey) keys.push(r.storageKey);
        }
        this.d.quota.adjust(accountId, -bytes);
        if (keys.length) this.d.queue.insert(Jobs.storageDelete, { keys });
        run.onBatch?.(rows.length);
        return { count: rows.length, last };
      });
    let count = 0;
    for (;;) {
      run.signal?.throwIfAborted();
      const batch = removeBatch();
      count += batch.count;
      if (batch.last) return count;
      yield;
    }
  }

  /** The change log's row of a trash root going for good, before its row does (its name and place are kept). */
  private recordPurged(by: ChangeBy, rootId: string): void {
    const row = this.d.items.get(by.accountId, rootId);
    if (row) this.d.changes.record(by, ChangeKinds.purged, row, { gone: true });
  }

  /** Job body of `trash.delete`, while its starter may still delete for good. */
  deleteJob(p: JobTrees, run: BatchRun = {}): Promise<number> {
    this.d.starters.assertStillMay(p, 'trash.delete');
    return runInTurns(this.deleteSteps(p.accountId, p.loginId, p.ids, run));
  }

  /** Removes each trash root for good. */
  deleteRoots(accountId: string, loginId: string, ids: string[], run: BatchRun = {}): number {
    return runAll(this.deleteSteps(accountId, loginId, ids, run));
  }

  *deleteSteps(accountId: string, loginId: string, ids: string[], run: BatchRun): Steps<number> {
    let count = 0;
    for (const id of ids) {
      const root = this.d.items.get(accountId, id);
      if (!root || root.deletedRootId !== root.id) continue;
      count += yield* this.purgeRoot({ accountId, loginId }, id, run);
      this.d.events.item({ accountId, loginId }, FileEventType.permanentlyDeleted, root);
    }
    return count;
  }

  /** Job body of `trash.empty`, while its starter may still empty the trash. */
  emptyJob(p: JobStarter, trashedUpTo: number, run: BatchRun = {}): Promise<number> {
    this.d.starters.assertStillMay(p, 'trash.empty');
    return runInTurns(this.emptySteps(p, trashedUpTo, run));
  }

  /**
   * Every trash root of the account trashed up to `trashedUpTo` (when emptying was asked for), with one audit
   * record of what went (also when stopped part way); `system` when no one asked (the account's deletion).
   */
  *emptySteps(by: AuditPrincipal, trashedUpTo: number, run: BatchRun = {}, system = false): Steps<number> {
    let count = 0;
    const emptied = { count: 0, items: 0, listed: [] as Item[] };
    try {
      for (;;) {
        const roots = this.d.items.trashRootIds(by.accountId, trashedUpTo, 100);
        if (roots.length === 0) return count;
        for (const id of roots) {
          const root = this.d.items.get(by.accountId, id);
          const purged = yield* this.purgeRoot(by, id, run);
          count += purged;
          if (!root || purged === 0) continue;
          emptied.count++;
          emptied.items += purged;
          if (emptied.listed.length < AUDIT_LISTED) emptied.listed.push(root);
          // Announced as a permanent delete is: open trashes drop it, and the change's seq stops holding streams' ids back.
          this.d.events.announce(by, FileEventType.permanentlyDeleted, root);
        }
        // A root of one file ends without a turn of its own: 50,000 of them held every request to the end.
        yield;
      }
    } finally {
      if (emptied.count > 0) this.d.events.trashEmptied(by, emptied, system);
    }
  }

  /** Job body of `trash.purge`: trash roots older than the retention (docs/compatibility.md › Files), every account. */
  purgeExpired(retentionDays: number, run: BatchRun = {}): number {
    return runAll(this.purgeExpiredSteps(retentionDays, run));
  }

  *purgeExpiredSteps(retentionDays: number, run: BatchRun = {}): Steps<number> {
    if (retentionDays <= 0) return 0;
    const cutoff = this.d.retentionClock.now() - retentionDays * 24 * 3600_000;
    let count = 0;
    for (;;) {
      const roots = this.d.items.expiredTrashRoots(cutoff, 100);
      if (roots.length === 0) return count;
      for (const r of roots) {
        const root = this.d.items.get(r.accountId, r.id);
        count += yield* this.purgeRoot({ accountId: r.accountId, actor: { kind: 'system', id: null } }, r.id, run);
        // Announced as a permanent delete is (without its audit record: no one asked): an open trash drops it.
        if (root) this.d.events.announce({ accountId: r.accountId, loginId: r.accountId }, FileEventType.permanentlyDeleted, root);
      }
      yield;
    }
  }
}
