import type { Database } from 'bun:sqlite';
import { createHash } from 'node:crypto';
import type { CoreContext } from '../context.ts';
import { badRequest, Messages } from '../errors.ts';
import type { ItemRow } from '../db/repos/items.ts';
import { PermanentJobError } from '../jobs/registry.ts';
import { FileEventType } from './file-events.ts';
import type { ItemService } from './items.ts';
import type { Principal } from './principal.ts';
import type { QuotaService } from './quota.ts';
import type { UploadIntentService } from './upload-intents.ts';
import type { DiskSpaceService } from './disk-space.ts';

export interface CopyPayload {
  accountId: string;
  loginId: string;
  ids: string[];
  parentId: string | null;
}

const CHILD_PAGE = 500;

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
  private readonly sqlite: Database;

  constructor(
    private readonly ctx: CoreContext,
    private readonly items: ItemService,
    private readonly quota: QuotaService,
    private readonly intents: UploadIntentService,
    private readonly disk: DiskSpaceService,
  ) {
    this.sqlite = ctx.db.$client;
  }

  /** POST /api/files/copy: checks the selection, target and quota for the whole trees, then queues. */
  start(principal: Principal, input: { ids: string[]; parentId?: string | null }): { message: string; queued: true; jobId: string } {
    const rows = this.items.requireLiveMany(principal, input.ids);
    const target = this.items.requireFolder(principal, input.parentId);
    const targetId = target?.id ?? null;
    if (targetId !== null && this.items.repo.isWithin(new Set(rows.filter((r) => r.type === 'folder').map((r) => r.id)), targetId)) {
      throw badRequest(Messages.copyIntoSelf);
    }
    const bytes = this.treeBytes(rows);
    this.quota.assertRoom(principal.accountId, bytes);
    this.disk.assertRoom(bytes);
    const jobId = this.ctx.queue.enqueue(
      'files.copy',
      { accountId: principal.accountId, loginId: principal.loginId, ids: rows.map((r) => r.id), parentId: targetId } satisfies CopyPayload,
      { accountId: principal.accountId },
    );
    return { message: `Copying ${rows.length} item${rows.length === 1 ? '' : 's'}`, queued: true, jobId };
  }

  private treeBytes(rows: ItemRow[]): number {
    let total = 0;
    const sum = this.sqlite.query<{ total: number | null }, [string]>(
      `WITH RECURSIVE t(id, type, size) AS (
         SELECT id, type, size FROM items WHERE id = ?1 AND deleted_at IS NULL
         UNION ALL
         SELECT i.id, i.type, i.size FROM items i JOIN t ON i.parent_id = t.id WHERE t.type = 'folder' AND i.deleted_at IS NULL
       ) SELECT SUM(CASE WHEN type = 'file' THEN size ELSE 0 END) AS total FROM t`,
    );
    for (const r of rows) total += sum.get(r.id)?.total ?? 0;
    return total;
  }

  /** Job body of `files.copy`: returns the ids of the top-level copies (the same on every run of the job). */
  async run(jobId: string, p: CopyPayload, signal?: AbortSignal): Promise<{ count: number; ids: string[] }> {
    const repo = this.items.repo;
    if (p.parentId !== null) {
      const target = repo.getLive(p.accountId, p.parentId);
      if (!target || target.type !== 'folder') throw new PermanentJobError('the target folder no longer exists');
    }
    const ids: string[] = [];
    const created: ItemRow[] = [];
    for (const sourceId of p.ids) {
      const copyId = derived(jobId, sourceId, 'id');
      const existing = repo.get(p.accountId, copyId);
      const source = repo.getLive(p.accountId, sourceId);
      if (!source && !existing) continue;
      const root = existing ?? (await this.copyItem(jobId, source!, p.parentId, true));
      if (!existing) created.push(root);
      ids.push(root.id);
      if (source?.type === 'folder') await this.copyChildren(jobId, p.accountId, source.id, root.id, signal);
    }
    for (const row of created) this.items.events.item(p, FileEventType.copied, row);
    return { count: ids.length, ids };
  }

  /** Copies the live children of `sourceFolder` into `copyFolder`, depth first, page by page. */
  private async copyChildren(
    jobId: string,
    accountId: string,
    sourceFolder: string,
    copyFolder: string,
    signal?: AbortSignal,
  ): Promise<void> {
    let after = '';
    for (;;) {
      signal?.throwIfAborted();
      const children = this.items.repo.liveChildren(accountId, sourceFolder, after, CHILD_PAGE);
      for (const child of children) {
        const copyId = derived(jobId, child.id, 'id');
        const copy = this.items.repo.get(accountId, copyId) ?? (await this.copyItem(jobId, child, copyFolder, false));
        if (child.type === 'folder') await this.copyChildren(jobId, accountId, child.id, copy.id, signal);
      }
      if (children.length < CHILD_PAGE) return;
      after = children[children.length - 1]!.id;
    }
  }

  /** One item: the object first (a byte copy under a derived key, same wrapped data key), then its row. */
  private async copyItem(jobId: string, source: ItemRow, parentId: string | null, isRoot: boolean): Promise<ItemRow> {
    const storageKey = source.type === 'file' ? derived(jobId, source.id, 'key') : null;
    try {
      if (storageKey) {
        this.disk.assertRoom(source.size);
        this.intents.record(storageKey);
        await this.ctx.storage.copy(source.storage_key!, storageKey);
      }
      return this.insertCopy(derived(jobId, source.id, 'id'), source, storageKey, parentId, isRoot, this.ctx.clock.now());
    } catch (err) {
      if (storageKey) {
        const removed = await this.ctx.storage.delete(storageKey).then(
          () => true,
          () => false,
        );
        if (removed) this.intents.forget(storageKey);
        else this.intents.abandon(storageKey);
      }
      throw err;
    }
  }

  private insertCopy(
    id: string,
    source: ItemRow,
    storageKey: string | null,
    parentId: string | null,
    isRoot: boolean,
    now: number,
  ): ItemRow {
    return this.sqlite
      .transaction(() => {
        const repo = this.items.repo;
        if (source.type === 'file') this.quota.assertRoom(source.account_id, source.size);
        const row = repo.insert({
          id,
          accountId: source.account_id,
          parentId,
          type: source.type,
          // Inside a new folder the names are already unique; only the top-level copy can collide.
          name: isRoot ? repo.uniqueName(source.account_id, parentId, source.name) : source.name,
          size: source.size,
          mimeType: source.mime_type,
          storageKey,
          wrappedKey: source.wrapped_key,
          keyId: source.key_id,
          starred: Boolean(source.starred),
          modifiedAt: source.modified_at,
          accessedAt: now,
          createdAt: now,
        });
        if (source.type === 'file') this.quota.adjust(source.account_id, source.size);
        if (storageKey) this.intents.committed(storageKey);
        return row;
      })
      .immediate();
  }
}
