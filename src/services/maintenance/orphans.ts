import type { OrphanDeletion, OrphanReport } from '../../contract/admin.ts';
import type { Clock } from '../../clock.ts';
import type { Transactions } from '../../db/repos/index.ts';
import type { ItemsRepo } from '../../db/repos/items.ts';
import type { UsersRepo } from '../../db/repos/users.ts';
import { badRequest, Messages } from '../../errors.ts';
import type { EventHub } from '../../events/hub.ts';
import { Jobs } from '../../jobs/catalog.ts';
import type { JobQueue } from '../../jobs/queue.ts';
import { existsMany, StorageCallNotImplementedError, type IncompleteUpload, type StorageDriver } from '../../storage/driver.ts';
import { isValidStorageKey, ownerKeyOf } from '../../storage/keys.ts';
import { actorFields, AuditActions, type Actor, type AuditPrincipal, type AuditService } from '../admin/audit.ts';
import { FileEventType } from '../files/file-events.ts';
import { type JobOutcome, pollJob } from '../files/job-status.ts';
import type { QuotaService } from '../files/quota.ts';
import type { TusUploadService } from '../resumable-uploads/tus-uploads.ts';

/** Items per category in a report (docs/api.md › Orphaned files). */
const REPORT_LIMIT = 2000;

// Keys looked up per query and rows checked per page: what the scan holds in memory at once.
const SCAN_BATCH = 1000;

const SkipReasons = {
  invalidKey: 'Not a valid storage key',
  keyReferenced: 'A file now references this object',
  keyUploading: 'A resumable upload in progress owns this object',
  objectGone: 'Object no longer exists',
  objectTooRecent: 'Object was written too recently',
  rowGone: 'Row no longer exists',
  rowWithoutKey: 'Row does not map to a storage key',
  rowTooRecent: 'Row was created too recently',
  objectBack: 'Stored object exists again',
} as const;

export interface ScanProgress {
  phase: 'storage' | 'database';
  done: number;
  /** Rows to check (known for the database phase only). */
  total: number | null;
}

/** Storage orphans that are incomplete multipart uploads are named `<key>?uploadId=<id>` in reports and selections. */
const UPLOAD_MARK = '?uploadId=';

function incompleteUploadName(key: string, uploadId: string): string {
  return `${key}${UPLOAD_MARK}${uploadId}`;
}

function parseUploadName(name: string): { key: string; uploadId: string } | null {
  const at = name.indexOf(UPLOAD_MARK);
  return at < 0 ? null : { key: name.slice(0, at), uploadId: name.slice(at + UPLOAD_MARK.length) };
}

/**
 * Orphaned files (docs/api.md › Orphaned files): stored objects no file row points at, and file rows whose
 * object is missing. The scan only reads; deletion re-verifies every entry at the moment it acts.
 * Nothing here runs automatically: only an admin's request (API or CLI) starts either.
 */
export class OrphanService {
  constructor(
    private readonly d: {
      clock: Clock;
      queue: JobQueue;
      driver: StorageDriver;
      hub: EventHub;
      transactions: Transactions;
      items: ItemsRepo;
      users: UsersRepo;
      quota: QuotaService;
      audit: AuditService;
      /** Unfinished resumable uploads own objects no file row points at yet: never orphans. */
      tusUploads: Pick<TusUploadService, 'keysInUse'>;
    },
  ) {}

  /** Queues a read-only scan (API). */
  startScan(principal: AuditPrincipal, graceMinutes: number): { jobId: string; status: 'created' } {
    // A scan reads every stored object: another tab or a repeated call joins the one queued or running.
    const running = this.d.queue.available ? this.d.queue.pendingWith(Jobs.orphansScan, { graceMinutes }) : null;
    if (running) return { jobId: running, status: 'created' };
    const jobId = this.d.queue.enqueue(Jobs.orphansScan, { graceMinutes });
    this.d.audit.record({ action: AuditActions.orphansScan, principal, targetType: 'orphans', targetId: jobId, details: { graceMinutes } });
    return { jobId, status: 'created' };
  }

  /** Queues a deletion of reviewed entries (API); at least one entry is required. */
  startDelete(
    principal: AuditPrincipal,
    input: { storageKeys: string[]; fileIds: string[]; graceMinutes: number },
  ): { jobId: string; status: 'created' } {
    if (input.storageKeys.length === 0 && input.fileIds.length === 0) throw badRequest(Messages.orphansNothingSelected);
    const jobId = this.d.queue.enqueue(Jobs.orphansDelete, {
      ...input,
      requestedBy: { loginId: principal.loginId, accountId: principal.accountId, email: principal.email ?? null, ip: principal.ip ?? null },
    });
    return { jobId, status: 'created' };
  }

  pollScan(jobId: string): JobOutcome<OrphanReport> {
    return pollJob(this.d.queue, jobId, (job) => job.kind === Jobs.orphansScan.name);
  }

  pollDelete(jobId: string): JobOutcome<OrphanDeletion> {
    return pollJob(this.d.queue, jobId, (job) => job.kind === Jobs.orphansDelete.name);
  }

  /**
   * Walks every stored object and every file row once, holding one batch of each in memory, so a
   * million objects cost the same memory as a thousand. Entries younger than the grace window are held
   * back on both sides: an upload writes its object before its row, and both may be in flight.
   */
  async scan(opts: {
    graceMinutes: number;
    onProgress?: (p: ScanProgress) => void;
    signal?: AbortSignal;
    by?: Actor;
  }): Promise<OrphanReport> {
    const now = this.d.clock.now();
    const cutoff = now - opts.graceMinutes * 60_000;
    const report: OrphanReport = {
      scannedAt: new Date(now).toISOString(),
      graceMinutes: opts.graceMinutes,
      driver: this.d.driver.name,
      totals: { storedObjects: 0, databaseRows: 0, skippedTooRecent: 0 },
      storageOrphans: { items: [], count: 0, totalBytes: 0, truncated: false },
      databaseOrphans: { items: [], count: 0, totalBytes: 0, truncated: false },
    };

    let batch: Array<{ key: string; size: number; lastModified: Date }> = [];
    const checkObjects = () => {
      const keys = batch.map((o) => o.key);
      // A thumbnail is known while its file is.
      const known = this.d.items.referencedKeys(keys.map(ownerKeyOf));
      const uploading = this.d.tusUploads.keysInUse(keys);
      for (const o of batch) {
        if (known.has(ownerKeyOf(o.key)) || uploading.has(o.key)) continue;
        if (o.lastModified.getTime() > cutoff) {
          report.totals.skippedTooRecent++;
          continue;
        }
        const s = report.storageOrphans;
        s.count++;
        s.totalBytes += o.size;
        if (s.items.length < REPORT_LIMIT) s.items.push({ key: o.key, size: o.size, lastModified: o.lastModified.toISOString() });
      }
      batch = [];
      opts.onProgress?.({ phase: 'storage', done: report.totals.storedObjects, total: null });
    };
    for await (const object of this.d.driver.list()) {
      report.totals.storedObjects++;
      batch.push(object);
      if (batch.length >= SCAN_BATCH) {
        opts.signal?.throwIfAborted();
        checkObjects();
      }
    }
    checkObjects();
    // Uploads begun and never finished hold billed parts that no row will ever point at.
    const unlisted = await this.eachIncompleteUpload((u) => {
      opts.signal?.throwIfAborted();
      if (u.initiated.getTime() > cutoff) {
        report.totals.skippedTooRecent++;
        return;
      }
      const s = report.storageOrphans;
      s.count++;
      if (s.items.length < REPORT_LIMIT)
        s.items.push({ key: incompleteUploadName(u.key, u.uploadId), size: 0, lastModified: u.initiated.toISOString() });
    });
    if (unlisted !== null) report.incompleteUploadsUnlisted = unlisted;

    const total = this.d.items.countFiles({ withKey: true });
    const paths = new PathResolver(this.d.items, this.d.users);
    let after = '';
    for (;;) {
      opts.signal?.throwIfAborted();
      const rows = this.d.items.filePage(after, SCAN_BATCH, { withKey: true });
      if (rows.length === 0) break;
      after = rows.at(-1)!.id;
      const present = await existsMany(
        this.d.driver,
        rows.map((r) => r.storageKey),
        isValidStorageKey,
      );
      rows.forEach((row, i) => {
        report.totals.databaseRows++;
        if (present[i]) return;
        if (row.createdAt > cutoff) {
          report.totals.skippedTooRecent++;
          return;
        }
        const d = report.databaseOrphans;
        d.count++;
        d.totalBytes += row.size;
        if (d.items.length < REPORT_LIMIT) {
          const owner = paths.owner(row.accountId);
          d.items.push({
            id: row.id,
            name: row.name,
            path: paths.pathOf(row.parentId, row.name),
            size: row.size,
            mimeType: row.mimeType,
            modified: new Date(row.modifiedAt).toISOString(),
            createdAt: new Date(row.createdAt).toISOString(),
            trashed: row.deletedAt !== null,
            ownerEmail: owner?.email ?? null,
            ownerName: owner?.name ?? null,
          });
        }
      });
      opts.onProgress?.({ phase: 'database', done: report.totals.databaseRows, total });
    }
    report.storageOrphans.truncated = report.storageOrphans.count > report.storageOrphans.items.length;
    report.databaseOrphans.truncated = report.databaseOrphans.count > report.databaseOrphans.items.length;
    if (opts.by) {
      this.d.audit.record({
        action: AuditActions.orphansScan,
        ...actorFields(opts.by),
        targetType: 'orphans',
        details: {
          graceMinutes: opts.graceMinutes,
          storageOrphans: report.storageOrphans.count,
          databaseOrphans: report.databaseOrphans.count,
        },
      });
    }
    return report;
  }

  /** Deletes the given entries, each re-verified first; anything that no longer qualifies is skipped with its reason. */
  async deleteOrphans(input: { storageKeys: string[]; fileIds: string[]; graceMinutes: number }, by: Actor): Promise<OrphanDeletion> {
    const cutoff = this.d.clock.now() - input.graceMinutes * 60_000;
    const result: OrphanDeletion = {
      graceMinutes: input.graceMinutes,
      storage: { results: [], deleted: 0, skipped: 0 },
      database: { results: [], deleted: 0, skipped: 0 },
    };
    let uploads: Map<string, Date> | null = null;
    for (const key of new Set(input.storageKeys)) {
      const upload = parseUploadName(key);
      if (upload) {
        uploads ??= await this.incompleteUploads();
        const initiated = uploads.get(key);
        let reason: string | null = null;
        if (!isValidStorageKey(upload.key)) reason = SkipReasons.invalidKey;
        else if (!initiated) reason = SkipReasons.objectGone;
        else if (initiated.getTime() > cutoff) reason = SkipReasons.objectTooRecent;
        if (reason === null && (await this.d.driver.abortIncompleteUpload!(upload.key, upload.uploadId))) {
          result.storage.results.push({ key, deleted: true });
          result.storage.deleted++;
        } else {
          result.storage.results.push({ key, deleted: false, reason: reason ?? SkipReasons.objectGone });
          result.storage.skipped++;
        }
        continue;
      }
      const reason = await this.storageSkipReason(key, cutoff);
      if (reason === null && (await this.d.driver.delete(key))) {
        result.storage.results.push({ key, deleted: true });
        result.storage.deleted++;
      } else {
        result.storage.results.push({ key, deleted: false, reason: reason ?? SkipReasons.objectGone });
        result.storage.skipped++;
      }
    }

    for (const id of new Set(input.fileIds)) {
      const row = this.d.items.find(id);
      let reason: string | null = null;
      if (!row) reason = SkipReasons.rowGone;
      else if (row.type !== 'file' || !row.storageKey) reason = SkipReasons.rowWithoutKey;
      else if (row.createdAt > cutoff) reason = SkipReasons.rowTooRecent;
      else if (await this.exists(row.storageKey)) reason = SkipReasons.objectBack;
      if (reason === null && row) {
        // Deleted only if the row still points at the object found missing.
        const key = row.storageKey!;
        const removed = this.d.transactions.immediate(() => {
          const gone = this.d.items.deleteIfKey(row.id, key);
          if (gone) this.d.quota.adjust(row.accountId, -row.size);
          return gone;
        });
        if (removed) {
          this.d.hub.publish(row.accountId, FileEventType.permanentlyDeleted, {
            id: row.id,
            name: row.name,
            type: 'file',
            parentId: row.parentId,
            userId: row.accountId,
          });
          result.database.results.push({ id, deleted: true });
          result.database.deleted++;
          continue;
        }
        reason = SkipReasons.rowGone;
      }
      result.database.results.push({ id, deleted: false, reason: reason! });
      result.database.skipped++;
    }

    this.d.audit.record({
      action: AuditActions.orphansDelete,
      ...actorFields(by),
      targetType: 'orphans',
      details: {
        graceMinutes: input.graceMinutes,
        deletedStorageKeys: result.storage.results.filter((r) => r.deleted).map((r) => r.key),
        deletedFileIds: result.database.results.filter((r) => r.deleted).map((r) => r.id),
        skipped: result.storage.skipped + result.database.skipped,
      },
    });
    return result;
  }

  private async storageSkipReason(key: string, cutoff: number): Promise<string | null> {
    if (!isValidStorageKey(key)) return SkipReasons.invalidKey;
    if (this.d.items.isKeyReferenced(ownerKeyOf(key))) return SkipReasons.keyReferenced;
    if (this.d.tusUploads.keysInUse([key]).size > 0) return SkipReasons.keyUploading;
    const info = await this.d.driver.head(key);
    if (!info) return SkipReasons.objectGone;
    if (info.lastModified.getTime() > cutoff) return SkipReasons.objectTooRecent;
    // Checked again last: a row written while we looked at the object wins.
    if (this.d.items.isKeyReferenced(ownerKeyOf(key))) return SkipReasons.keyReferenced;
    return null;
  }

  /** The driver's incomplete uploads by report name, with when each began; none on a store that cannot list them. */
  private async incompleteUploads(): Promise<Map<string, Date>> {
    const out = new Map<string, Date>();
    await this.eachIncompleteUpload((u) => out.set(incompleteUploadName(u.key, u.uploadId), u.initiated));
    return out;
  }

  /** Calls `each` for every incomplete upload; null, or why they could not be listed (the store does not implement it). */
  private async eachIncompleteUpload(each: (u: IncompleteUpload) => void): Promise<string | null> {
    if (!this.d.driver.listIncompleteUploads) return null;
    try {
      for await (const u of this.d.driver.listIncompleteUploads()) each(u);
      return null;
    } catch (err) {
      if (err instanceof StorageCallNotImplementedError) return err.message;
      throw err;
    }
  }

  /** A row holding a malformed key points at nothing the driver could store. */
  private async exists(key: string): Promise<boolean> {
    return isValidStorageKey(key) && (await this.d.driver.head(key)) !== null;
  }
}

/** Folder paths and owners of reported rows; caches only what the (bounded) report needs. */
class PathResolver {
  private readonly folders = new Map<string, string>();
  private readonly owners = new Map<string, { email: string; name: string } | null>();

  constructor(
    private readonly items: ItemsRepo,
    private readonly users: UsersRepo,
  ) {}

  pathOf(parentId: string | null, name: string): string {
    return `${parentId ? this.folderPath(parentId, 0) : ''}/${name}`;
  }

  owner(accountId: string): { email: string; name: string } | null {
    if (!this.owners.has(accountId)) this.owners.set(accountId, this.users.nameAndEmail(accountId));
    return this.owners.get(accountId)!;
  }

  private folderPath(id: string, depth: number): string {
    const cached = this.folders.get(id);
    if (cached !== undefined) return cached;
    const row = this.items.nameAndParent(id);
    // A missing parent (or a cycle) ends the path rather than failing the scan.
    const path = !row ? '' : `${row.parentId && depth < 256 ? this.folderPath(row.parentId, depth + 1) : ''}/${row.name}`;
    this.folders.set(id, path);
    return path;
  }
}
