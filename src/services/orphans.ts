import type { Database } from 'bun:sqlite';
import type { CoreContext } from '../context.ts';
import { badRequest, Messages, notFound, AppError } from '../errors.ts';
import { isUuid } from '../lib/ids.ts';
import { existsMany } from '../storage/driver.ts';
import { isValidStorageKey } from '../storage/keys.ts';
import { actorFields, AuditActions, type Actor, type AuditPrincipal, type AuditService } from './audit.ts';
import type { QuotaService } from './quota.ts';

export const GRACE_MINUTES = { min: 60, max: 525600, default: 1440 } as const;
/** Items per category in a report (SPEC "Orphan scan report"). */
export const REPORT_LIMIT = 2000;
/** Entries per array in one delete request. */
export const DELETE_LIMIT = 500;
export const ORPHANS_SCAN_JOB = 'orphans.scan';
export const ORPHANS_DELETE_JOB = 'orphans.delete';

// Keys looked up per query and rows checked per page: what the scan holds in memory at once.
const SCAN_BATCH = 1000;

export const SkipReasons = {
  invalidKey: 'Not a valid storage key',
  keyReferenced: 'A file now references this object',
  objectGone: 'Object no longer exists',
  objectTooRecent: 'Object was written too recently',
  rowGone: 'Row no longer exists',
  rowWithoutKey: 'Row does not map to a storage key',
  rowTooRecent: 'Row was created too recently',
  objectBack: 'Stored object exists again',
} as const;

export interface StorageOrphan {
  key: string;
  size: number;
  lastModified: string;
}

export interface DatabaseOrphan {
  id: string;
  name: string;
  path: string;
  size: number;
  mimeType: string | null;
  modified: string;
  createdAt: string;
  trashed: boolean;
  ownerEmail: string | null;
  ownerName: string | null;
}

export interface OrphanScanReport {
  scannedAt: string;
  graceMinutes: number;
  driver: string;
  totals: { storedObjects: number; databaseRows: number; skippedTooRecent: number };
  storageOrphans: { items: StorageOrphan[]; count: number; totalBytes: number; truncated: boolean };
  databaseOrphans: { items: DatabaseOrphan[]; count: number; totalBytes: number; truncated: boolean };
}

export interface OrphanDeleteResult {
  graceMinutes: number;
  storage: { results: Array<{ key: string; deleted: boolean; reason?: string }>; deleted: number; skipped: number };
  database: { results: Array<{ id: string; deleted: boolean; reason?: string }>; deleted: number; skipped: number };
}

export interface ScanProgress {
  phase: 'storage' | 'database';
  done: number;
  /** Rows to check (known for the database phase only). */
  total: number | null;
}

interface FileRow {
  id: string;
  account_id: string;
  parent_id: string | null;
  name: string;
  size: number;
  mime_type: string | null;
  storage_key: string;
  modified_at: number;
  created_at: number;
  deleted_at: number | null;
}

/** Storage orphans that are incomplete multipart uploads are named `<key>?uploadId=<id>` in reports and selections. */
const UPLOAD_MARK = '?uploadId=';

export function incompleteUploadName(key: string, uploadId: string): string {
  return `${key}${UPLOAD_MARK}${uploadId}`;
}

function parseUploadName(name: string): { key: string; uploadId: string } | null {
  const at = name.indexOf(UPLOAD_MARK);
  return at < 0 ? null : { key: name.slice(0, at), uploadId: name.slice(at + UPLOAD_MARK.length) };
}

export type JobPoll<T> = { done: false; body: { jobId: string; status: 'created' | 'active' } } | { done: true; result: T };

/**
 * Orphaned files (SPEC "Orphaned files"): stored objects no file row points at, and file rows whose
 * object is missing. The scan only reads; deletion re-verifies every entry at the moment it acts.
 * Nothing here runs automatically: only an admin's request (API or CLI) starts either.
 */
export class OrphanService {
  private readonly sqlite: Database;

  constructor(
    private readonly ctx: CoreContext,
    private readonly quota: QuotaService,
    private readonly audit: AuditService,
  ) {
    this.sqlite = ctx.db.$client;
  }

  /** Queues a read-only scan (API). */
  startScan(principal: AuditPrincipal, graceMinutes: number): { jobId: string; status: 'created' } {
    const jobId = this.ctx.queue.enqueue(ORPHANS_SCAN_JOB, { graceMinutes });
    this.audit.record({ action: AuditActions.orphansScan, principal, targetType: 'orphans', targetId: jobId, details: { graceMinutes } });
    return { jobId, status: 'created' };
  }

  /** Queues a deletion of reviewed entries (API); at least one entry is required. */
  startDelete(principal: AuditPrincipal, input: { storageKeys: string[]; fileIds: string[]; graceMinutes: number }): { jobId: string; status: 'created' } {
    if (input.storageKeys.length === 0 && input.fileIds.length === 0) throw badRequest(Messages.orphansNothingSelected);
    const jobId = this.ctx.queue.enqueue(ORPHANS_DELETE_JOB, {
      ...input,
      requestedBy: { loginId: principal.loginId, accountId: principal.accountId, email: principal.email ?? null, ip: principal.ip ?? null },
    });
    return { jobId, status: 'created' };
  }

  pollScan(jobId: string): JobPoll<OrphanScanReport> {
    return this.poll<OrphanScanReport>(jobId, ORPHANS_SCAN_JOB);
  }

  pollDelete(jobId: string): JobPoll<OrphanDeleteResult> {
    return this.poll<OrphanDeleteResult>(jobId, ORPHANS_DELETE_JOB);
  }

  private poll<T>(jobId: string, kind: string): JobPoll<T> {
    if (!isUuid(jobId)) throw badRequest(Messages.invalidJobId);
    const job = this.ctx.queue.get(jobId);
    if (!job || job.kind !== kind) throw notFound(Messages.jobNotFound);
    if (job.status === 'created' || job.status === 'active') return { done: false, body: { jobId, status: job.status } };
    if (job.status === 'completed') return { done: true, result: job.result as T };
    throw new AppError(500, Messages.jobFailed);
  }

  /**
   * Walks every stored object and every file row once, holding one batch of each in memory, so a
   * million objects cost the same memory as a thousand. Entries younger than the grace window are held
   * back on both sides: an upload writes its object before its row, and both may be in flight.
   */
  async scan(opts: { graceMinutes: number; onProgress?: (p: ScanProgress) => void; signal?: AbortSignal; by?: Actor }): Promise<OrphanScanReport> {
    const now = this.ctx.clock.now();
    const cutoff = now - opts.graceMinutes * 60_000;
    const report: OrphanScanReport = {
      scannedAt: new Date(now).toISOString(),
      graceMinutes: opts.graceMinutes,
      driver: this.ctx.driver.name,
      totals: { storedObjects: 0, databaseRows: 0, skippedTooRecent: 0 },
      storageOrphans: { items: [], count: 0, totalBytes: 0, truncated: false },
      databaseOrphans: { items: [], count: 0, totalBytes: 0, truncated: false },
    };

    const referenced = this.sqlite.query<{ storage_key: string }, [string]>(
      'SELECT storage_key FROM items WHERE storage_key IN (SELECT value FROM json_each(?))',
    );
    let batch: Array<{ key: string; size: number; lastModified: Date }> = [];
    const checkObjects = () => {
      const known = new Set(referenced.all(JSON.stringify(batch.map((o) => o.key))).map((r) => r.storage_key));
      for (const o of batch) {
        if (known.has(o.key)) continue;
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
    for await (const object of this.ctx.driver.list()) {
      report.totals.storedObjects++;
      batch.push(object);
      if (batch.length >= SCAN_BATCH) {
        opts.signal?.throwIfAborted();
        checkObjects();
      }
    }
    checkObjects();
    // Uploads begun and never finished hold billed parts that no row will ever point at.
    if (this.ctx.driver.listIncompleteUploads) {
      for await (const u of this.ctx.driver.listIncompleteUploads()) {
        opts.signal?.throwIfAborted();
        if (u.initiated.getTime() > cutoff) {
          report.totals.skippedTooRecent++;
          continue;
        }
        const s = report.storageOrphans;
        s.count++;
        if (s.items.length < REPORT_LIMIT) s.items.push({ key: incompleteUploadName(u.key, u.uploadId), size: 0, lastModified: u.initiated.toISOString() });
      }
    }

    const total = this.sqlite.query<{ n: number }, []>(`SELECT COUNT(*) AS n FROM items WHERE type = 'file' AND storage_key IS NOT NULL`).get()!.n;
    const page = this.sqlite.query<FileRow, [string, number]>(
      `SELECT id, account_id, parent_id, name, size, mime_type, storage_key, modified_at, created_at, deleted_at FROM items
       WHERE id > ? AND type = 'file' AND storage_key IS NOT NULL ORDER BY id LIMIT ?`,
    );
    const paths = new PathResolver(this.sqlite);
    let after = '';
    for (;;) {
      opts.signal?.throwIfAborted();
      const rows = page.all(after, SCAN_BATCH);
      if (rows.length === 0) break;
      after = rows.at(-1)!.id;
      const present = await existsMany(this.ctx.driver, rows.map((r) => r.storage_key), isValidStorageKey);
      rows.forEach((row, i) => {
        report.totals.databaseRows++;
        if (present[i]) return;
        if (row.created_at > cutoff) {
          report.totals.skippedTooRecent++;
          return;
        }
        const d = report.databaseOrphans;
        d.count++;
        d.totalBytes += row.size;
        if (d.items.length < REPORT_LIMIT) {
          const owner = paths.owner(row.account_id);
          d.items.push({
            id: row.id,
            name: row.name,
            path: paths.pathOf(row.parent_id, row.name),
            size: row.size,
            mimeType: row.mime_type,
            modified: new Date(row.modified_at).toISOString(),
            createdAt: new Date(row.created_at).toISOString(),
            trashed: row.deleted_at !== null,
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
      this.audit.record({
        action: AuditActions.orphansScan,
        ...actorFields(opts.by),
        targetType: 'orphans',
        details: { graceMinutes: opts.graceMinutes, storageOrphans: report.storageOrphans.count, databaseOrphans: report.databaseOrphans.count },
      });
    }
    return report;
  }

  /** Deletes the given entries, each re-verified first; anything that no longer qualifies is skipped with its reason. */
  async deleteOrphans(input: { storageKeys: string[]; fileIds: string[]; graceMinutes: number }, by: Actor): Promise<OrphanDeleteResult> {
    const cutoff = this.ctx.clock.now() - input.graceMinutes * 60_000;
    const result: OrphanDeleteResult = {
      graceMinutes: input.graceMinutes,
      storage: { results: [], deleted: 0, skipped: 0 },
      database: { results: [], deleted: 0, skipped: 0 },
    };
    const referenced = this.sqlite.query<{ id: string }, [string]>('SELECT id FROM items WHERE storage_key = ?');
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
        if (reason === null && (await this.ctx.driver.abortIncompleteUpload!(upload.key, upload.uploadId))) {
          result.storage.results.push({ key, deleted: true });
          result.storage.deleted++;
        } else {
          result.storage.results.push({ key, deleted: false, reason: reason ?? SkipReasons.objectGone });
          result.storage.skipped++;
        }
        continue;
      }
      const reason = await this.storageSkipReason(key, cutoff, referenced);
      if (reason === null && (await this.ctx.driver.delete(key))) {
        result.storage.results.push({ key, deleted: true });
        result.storage.deleted++;
      } else {
        result.storage.results.push({ key, deleted: false, reason: reason ?? SkipReasons.objectGone });
        result.storage.skipped++;
      }
    }

    const rowOf = this.sqlite.query<FileRow & { type: string; storage_key: string | null }, [string]>('SELECT * FROM items WHERE id = ?');
    for (const id of new Set(input.fileIds)) {
      const row = rowOf.get(id);
      let reason: string | null = null;
      if (!row) reason = SkipReasons.rowGone;
      else if (row.type !== 'file' || !row.storage_key) reason = SkipReasons.rowWithoutKey;
      else if (row.created_at > cutoff) reason = SkipReasons.rowTooRecent;
      else if (await this.exists(row.storage_key)) reason = SkipReasons.objectBack;
      if (reason === null && row) {
        // Deleted only if the row still points at the object found missing.
        const removed = this.sqlite
          .transaction(() => {
            const n = this.sqlite.query('DELETE FROM items WHERE id = ? AND storage_key = ?').run(row.id, row.storage_key).changes;
            if (n) this.quota.adjust(row.account_id, -row.size);
            return n > 0;
          })
          .immediate();
        if (removed) {
          this.ctx.hub.publish(row.account_id, 'file.permanently_deleted', { id: row.id, name: row.name, type: 'file', parentId: row.parent_id, userId: row.account_id });
          result.database.results.push({ id, deleted: true });
          result.database.deleted++;
          continue;
        }
        reason = SkipReasons.rowGone;
      }
      result.database.results.push({ id, deleted: false, reason: reason! });
      result.database.skipped++;
    }

    this.audit.record({
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

  private async storageSkipReason(key: string, cutoff: number, referenced: { get(key: string): { id: string } | null }): Promise<string | null> {
    if (!isValidStorageKey(key)) return SkipReasons.invalidKey;
    if (referenced.get(key)) return SkipReasons.keyReferenced;
    const info = await this.ctx.driver.head(key);
    if (!info) return SkipReasons.objectGone;
    if (info.lastModified.getTime() > cutoff) return SkipReasons.objectTooRecent;
    // Checked again last: a row written while we looked at the object wins.
    if (referenced.get(key)) return SkipReasons.keyReferenced;
    return null;
  }

  /** The driver's incomplete uploads by report name, with when each began. */
  private async incompleteUploads(): Promise<Map<string, Date>> {
    const out = new Map<string, Date>();
    if (!this.ctx.driver.listIncompleteUploads) return out;
    for await (const u of this.ctx.driver.listIncompleteUploads()) out.set(incompleteUploadName(u.key, u.uploadId), u.initiated);
    return out;
  }

  /** A row holding a malformed key points at nothing the driver could store. */
  private async exists(key: string): Promise<boolean> {
    return isValidStorageKey(key) && (await this.ctx.driver.head(key)) !== null;
  }
}

/** Folder paths and owners of reported rows; caches only what the (bounded) report needs. */
class PathResolver {
  private readonly folders = new Map<string, string>();
  private readonly owners = new Map<string, { email: string; name: string } | null>();
  private readonly folder;
  private readonly user;

  constructor(sqlite: Database) {
    this.folder = sqlite.query<{ name: string; parent_id: string | null }, [string]>('SELECT name, parent_id FROM items WHERE id = ?');
    this.user = sqlite.query<{ email: string; name: string }, [string]>('SELECT email, name FROM users WHERE id = ?');
  }

  pathOf(parentId: string | null, name: string): string {
    return `${parentId ? this.folderPath(parentId, 0) : ''}/${name}`;
  }

  owner(accountId: string): { email: string; name: string } | null {
    if (!this.owners.has(accountId)) this.owners.set(accountId, this.user.get(accountId) ?? null);
    return this.owners.get(accountId)!;
  }

  private folderPath(id: string, depth: number): string {
    const cached = this.folders.get(id);
    if (cached !== undefined) return cached;
    const row = this.folder.get(id);
    // A missing parent (or a cycle) ends the path rather than failing the scan.
    const path = !row ? '' : `${row.parent_id && depth < 256 ? this.folderPath(row.parent_id, depth + 1) : ''}/${row.name}`;
    this.folders.set(id, path);
    return path;
  }
}
