import type { Database } from 'bun:sqlite';
import type { CoreContext } from '../context.ts';
import { Messages, notFound } from '../errors.ts';
import { ITEM_COLUMNS, type ItemRow } from '../db/repos/items.ts';
import { FileEventType } from './file-events.ts';
import type { ItemService } from './items.ts';
import type { Principal } from './principal.ts';
import type { QuotaService } from './quota.ts';

/** SPEC: trees up to this many items are handled in the request; larger ones are queued. */
export const WEB_PROCESS_LIMIT = 1000;
const JOB_BATCH = 500;

/** Progress of an operation handled in the request: `done` of `total` ids, then the final body. */
export type InlineRun = AsyncGenerator<{ done: number; total: number }, { message: string }>;

export type TrashPlan = { queued: true; jobId: string } | { queued: false; total: number; run: InlineRun };

/** How a job drives a long operation: stop between batches when asked, count each batch inside its transaction. */
export interface BatchRun {
  signal?: AbortSignal;
  /** Called with the items a batch changed, inside the batch's transaction. */
  onBatch?: (count: number) => void;
}

/** COMPAT: one progress line per batch of max(25, ceil(N/20)) ids. */
export function progressBatch(total: number): number {
  return Math.max(25, Math.ceil(total / 20));
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/**
 * Trash, restore, permanent delete and empty. Trashing marks the whole subtree with `deleted_at` and
 * `deleted_root_id` (the item the user trashed); each step works bottom-up with the root last, so an
 * interrupted step can simply run again. Permanent deletes remove rows first and queue the deletion of
 * their objects in the same transaction, so no row ever points at a missing object.
 */
export class TrashService {
  private readonly sqlite: Database;

  constructor(
    private readonly ctx: CoreContext,
    private readonly items: ItemService,
    private readonly quota: QuotaService,
  ) {
    this.sqlite = ctx.db.$client;
  }

  /** POST /api/files/delete: the selection's trees, in the request when small enough, else queued. */
  planTrash(principal: Principal, ids: string[]): TrashPlan {
    const rows = this.items.requireLiveMany(principal, ids);
    const folderIds = new Set(rows.filter((r) => r.type === 'folder').map((r) => r.id));
    // An item inside another selected folder goes with that folder.
    const roots = rows.filter((r) => !this.items.repo.isWithin(folderIds, r.parent_id));
    const trees: Array<{ root: ItemRow; ids: string[] }> = [];
    let total = 0;
    for (const root of roots) {
      const subtree = this.items.repo.liveSubtreeIds(root.id, WEB_PROCESS_LIMIT + 1 - total);
      total += subtree.length;
      trees.push({ root, ids: subtree });
      if (total > WEB_PROCESS_LIMIT) {
        const jobId = this.ctx.queue.enqueue(
          'files.trash',
          { accountId: principal.accountId, loginId: principal.loginId, ids: roots.map((r) => r.id) },
          { accountId: principal.accountId },
        );
        return { queued: true, jobId };
      }
    }
    return { queued: false, total, run: this.runTrash(principal, trees, total) };
  }

  private async *runTrash(principal: Principal, trees: Array<{ root: ItemRow; ids: string[] }>, total: number): InlineRun {
    const now = this.ctx.clock.now();
    const steps = trees.flatMap((t) => [...t.ids].reverse().map((id) => ({ id, root: t.root.id })));
    const mark = this.sqlite.query('UPDATE items SET deleted_at = ?, deleted_root_id = ? WHERE id = ? AND deleted_at IS NULL');
    const size = progressBatch(total);
    yield { done: 0, total };
    for (let i = 0; i < steps.length; i += size) {
      const batch = steps.slice(i, i + size);
      this.sqlite.transaction(() => {
        for (const s of batch) mark.run(now, s.root, s.id);
      })();
      yield { done: Math.min(total, i + batch.length), total };
    }
    for (const t of trees) this.items.events.item(principal, FileEventType.deleted, t.root);
    return { message: `Moved ${plural(trees.length, 'item')} to trash` };
  }

  /** Job body of `files.trash`: trashes each live root's tree in batches; safe to run again. */
  trashTrees(accountId: string, loginId: string, ids: string[], run: BatchRun = {}): number {
    const now = this.ctx.clock.now();
    const mark = this.sqlite.query('UPDATE items SET deleted_at = ?, deleted_root_id = ? WHERE id = ? AND deleted_at IS NULL');
    let count = 0;
    for (const id of ids) {
      const root = this.items.repo.getLive(accountId, id);
      if (!root) continue;
      const subtree = this.items.repo.liveSubtreeIds(root.id).reverse();
      for (let i = 0; i < subtree.length; i += JOB_BATCH) {
        run.signal?.throwIfAborted();
        const batch = subtree.slice(i, i + JOB_BATCH);
        count += this.sqlite.transaction(() => {
          let changed = 0;
          for (const itemId of batch) changed += mark.run(now, root.id, itemId).changes;
          run.onBatch?.(changed);
          return changed;
        })();
      }
      this.items.events.item({ accountId, loginId }, FileEventType.deleted, root);
    }
    return count;
  }

  /** Trash roots of the account for every id, else 404. */
  private requireTrashRoots(principal: Principal, ids: string[]): ItemRow[] {
    const unique = [...new Set(ids)];
    const rows = this.items.repo.getMany(principal.accountId, unique).filter((r) => r.deleted_at !== null && r.deleted_root_id === r.id);
    if (rows.length !== unique.length) throw notFound(Messages.itemNotFound);
    const byId = new Map(rows.map((r) => [r.id, r]));
    return unique.map((id) => byId.get(id)!);
  }

  private trashSetIds(rootId: string, cap: number): string[] {
    return this.sqlite
      .query<{ id: string }, [string, string, number]>('SELECT id FROM items WHERE deleted_root_id = ? AND id != ? LIMIT ?')
      .all(rootId, rootId, cap)
      .map((r) => r.id);
  }

  /** POST /api/files/trash/restore: in the request up to 1000 items, else queued. */
  planRestore(principal: Principal, ids: string[]): TrashPlan {
    const roots = this.requireTrashRoots(principal, ids);
    const sets: Array<{ root: ItemRow; ids: string[] }> = [];
    let total = 0;
    for (const root of roots) {
      const members = this.trashSetIds(root.id, WEB_PROCESS_LIMIT + 1 - total);
      total += members.length + 1;
      sets.push({ root, ids: members });
      if (total > WEB_PROCESS_LIMIT) {
        const jobId = this.ctx.queue.enqueue(
          'files.restore',
          { accountId: principal.accountId, loginId: principal.loginId, ids: roots.map((r) => r.id) },
          { accountId: principal.accountId },
        );
        return { queued: true, jobId };
      }
    }
    return { queued: false, total, run: this.runRestore(principal, sets, total) };
  }

  private async *runRestore(principal: Principal, sets: Array<{ root: ItemRow; ids: string[] }>, total: number): InlineRun {
    const steps = sets.flatMap((s) => [...s.ids.map((id) => ({ id, root: s.root.id })), { id: s.root.id, root: s.root.id }]);
    const size = progressBatch(total);
    const restored: ItemRow[] = [];
    yield { done: 0, total };
    for (let i = 0; i < steps.length; i += size) {
      const batch = steps.slice(i, i + size);
      this.sqlite
        .transaction(() => {
          for (const s of batch) {
            if (s.id === s.root) {
              const row = this.restoreRoot(principal.accountId, s.root);
              if (row) restored.push(row);
            } else this.restoreMember(s.id, s.root);
          }
        })
        .immediate();
      yield { done: Math.min(total, i + batch.length), total };
    }
    for (const row of restored) this.items.events.item(principal, FileEventType.restored, row);
    return { message: `Restored ${plural(restored.length, 'item')}` };
  }

  private restoreMember(id: string, rootId: string): number {
    return this.sqlite
      .query('UPDATE items SET deleted_at = NULL, deleted_root_id = NULL WHERE id = ? AND deleted_root_id = ?')
      .run(id, rootId).changes;
  }

  /** Puts a trash root back: in its original folder when that is live, else the root; a taken name gets `(n)`. */
  private restoreRoot(accountId: string, rootId: string): ItemRow | null {
    const root = this.items.repo.get(accountId, rootId);
    if (!root || root.deleted_root_id !== root.id) return null;
    const parent = root.parent_id ? this.items.repo.getLive(accountId, root.parent_id) : null;
    const parentId = parent?.type === 'folder' ? parent.id : null;
    const name = this.items.repo.uniqueName(accountId, parentId, root.name);
    return this.sqlite
      .query<ItemRow, [string | null, string, string, string]>(
        `UPDATE items SET deleted_at = NULL, deleted_root_id = NULL, parent_id = ?, name = ?, name_key = ? WHERE id = ? RETURNING ${ITEM_COLUMNS}`,
      )
      .get(parentId, name, name.toLowerCase(), root.id)!;
  }

  /** Job body of `files.restore`: members first in batches, the root last; safe to run again. */
  restoreTrees(accountId: string, loginId: string, ids: string[], run: BatchRun = {}): number {
    let count = 0;
    for (const id of ids) {
      const root = this.items.repo.get(accountId, id);
      if (!root || root.deleted_root_id !== root.id) continue;
      for (;;) {
        run.signal?.throwIfAborted();
        const batch = this.trashSetIds(root.id, JOB_BATCH);
        if (batch.length === 0) break;
        count += this.sqlite.transaction(() => {
          let changed = 0;
          for (const itemId of batch) changed += this.restoreMember(itemId, root.id);
          run.onBatch?.(changed);
          return changed;
        })();
      }
      const restored = this.sqlite
        .transaction(() => {
          const row = this.restoreRoot(accountId, root.id);
          if (row) run.onBatch?.(1);
          return row;
        })
        .immediate();
      if (restored) {
        count++;
        this.items.events.item({ accountId, loginId }, FileEventType.restored, restored);
      }
    }
    return count;
  }

  /** POST /api/files/trash/delete: always queued. */
  startPermanentDelete(principal: Principal, ids: string[]): { message: string; queued: true; jobId: string } {
    const roots = this.requireTrashRoots(principal, ids);
    const jobId = this.ctx.queue.enqueue(
      'trash.delete',
      { accountId: principal.accountId, loginId: principal.loginId, ids: roots.map((r) => r.id) },
      { accountId: principal.accountId },
    );
    return { message: `Deleting ${plural(roots.length, 'item')} permanently`, queued: true, jobId };
  }

  /** POST /api/files/trash/empty: queued, or a message when there is nothing to remove. */
  startEmpty(principal: Principal): { message: string; queued?: true; jobId?: string } {
    const any = this.sqlite
      .query<{ x: number }, [string]>(`SELECT 1 AS x FROM items WHERE account_id = ? AND deleted_at IS NOT NULL LIMIT 1`)
      .get(principal.accountId);
    if (!any) return { message: Messages.trashAlreadyEmpty };
    const jobId = this.ctx.queue.enqueue(
      'trash.empty',
      { accountId: principal.accountId, loginId: principal.loginId },
      { accountId: principal.accountId },
    );
    return { message: 'Emptying trash', queued: true, jobId };
  }

  /**
   * Removes one trash root and everything trashed with it: rows in batches (the root last), each batch
   * in one transaction with the usage counter and a queued deletion of its objects.
   */
  purgeRoot(accountId: string, rootId: string, run: BatchRun = {}): number {
    let count = 0;
    const select = this.sqlite.query<{ id: string; type: string; size: number; storage_key: string | null }, [string, string, number]>(
      'SELECT id, type, size, storage_key FROM items WHERE deleted_root_id = ? AND id != ? LIMIT ?',
    );
    const root = this.sqlite
      .query<{ id: string; type: string; size: number; storage_key: string | null }, [string, string]>(
        'SELECT id, type, size, storage_key FROM items WHERE id = ? AND account_id = ? AND deleted_root_id = id',
      )
      .get(rootId, accountId);
    if (!root) return 0;
    const remove = this.sqlite.query('DELETE FROM items WHERE id = ?');
    const removeBatch = (rows: Array<{ id: string; type: string; size: number; storage_key: string | null }>) =>
      this.sqlite
        .transaction(() => {
          let bytes = 0;
          const keys: string[] = [];
          for (const r of rows) {
            remove.run(r.id);
            if (r.type === 'file') bytes += r.size;
            if (r.storage_key) keys.push(r.storage_key);
          }
          this.quota.adjust(accountId, -bytes);
          if (keys.length) this.ctx.queue.insert('storage.delete', { keys });
          run.onBatch?.(rows.length);
          return rows.length;
        })
        .immediate();
    for (;;) {
      run.signal?.throwIfAborted();
      const rows = select.all(rootId, rootId, JOB_BATCH);
      if (rows.length === 0) break;
      count += removeBatch(rows);
    }
    return count + removeBatch([root]);
  }

  /** Job body of `trash.delete`. */
  deleteRoots(accountId: string, loginId: string, ids: string[], run: BatchRun = {}): number {
    let count = 0;
    for (const id of ids) {
      const root = this.items.repo.get(accountId, id);
      if (!root || root.deleted_root_id !== root.id) continue;
      count += this.purgeRoot(accountId, id, run);
      this.items.events.item({ accountId, loginId }, FileEventType.permanentlyDeleted, root);
    }
    return count;
  }

  /** Job body of `trash.empty`: every trash root of the account. */
  emptyTrash(accountId: string, run: BatchRun = {}): number {
    let count = 0;
    const next = this.sqlite.query<{ id: string }, [string]>(
      `SELECT id FROM items WHERE account_id = ? AND deleted_at IS NOT NULL AND deleted_root_id = id LIMIT 100`,
    );
    for (;;) {
      const roots = next.all(accountId);
      if (roots.length === 0) return count;
      for (const r of roots) count += this.purgeRoot(accountId, r.id, run);
    }
  }

  /** Job body of `trash.purge`: trash roots older than the retention (COMPAT), every account. */
  purgeExpired(retentionDays: number, run: BatchRun = {}): number {
    if (retentionDays <= 0) return 0;
    const cutoff = this.ctx.clock.now() - retentionDays * 24 * 3600_000;
    const next = this.sqlite.query<{ id: string; account_id: string }, [number]>(
      `SELECT id, account_id FROM items WHERE deleted_at IS NOT NULL AND deleted_root_id = id AND deleted_at < ? LIMIT 100`,
    );
    let count = 0;
    for (;;) {
      const roots = next.all(cutoff);
      if (roots.length === 0) return count;
      for (const r of roots) count += this.purgeRoot(r.account_id, r.id, run);
    }
  }
}
