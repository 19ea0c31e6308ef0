import type { Database } from 'bun:sqlite';
import type { CoreContext } from '../context.ts';
import { existsMany, type StorageLocation } from '../storage/driver.ts';
import { S3Driver } from '../storage/s3.ts';
import { isValidStorageKey } from '../storage/keys.ts';
import { AuditActions, type AuditService } from './audit.ts';
import type { DiskSpace, DiskSpaceService } from './disk-space.ts';

const PAGE = 1000;
const LISTED = 100;

export interface UsageMismatch {
  accountId: string;
  email: string;
  recorded: number;
  actual: number;
  fixed: boolean;
}

export interface DoctorReport {
  ok: boolean;
  database: { integrity: 'ok' | 'damaged'; messages: string[] };
  usage: { accounts: number; mismatches: UsageMismatch[] };
  missingObjects: { checked: number; count: number; items: Array<{ id: string; name: string; accountId: string; storageKey: string }> };
  keys: { currentKeyId: string; notCurrent: number; unavailable: number };
  auditQueue: { pending: number; failed: number };
  /** Free space on the data directory's disk; `low` when less than twice the reserve uploads stop at is free. */
  disk: DiskSpace;
  /** Where objects are stored; for a bucket, each step of a probe object's round trip (put, get, list, delete). */
  storage: { location: StorageLocation; checks: Array<{ step: string; ok: boolean; error?: string }> };
}

/**
 * `coffer doctor`: the database's own integrity check, usage counters against the real sums, file rows
 * whose stored object is missing, data keys under a master key that is not current or not available,
 * free disk space against the reserve, and, on S3, a probe object's put, get, list and delete.
 * The only repair it makes (with `fix`) is the usage counters; everything else needs a person.
 */
export class DoctorService {
  private readonly sqlite: Database;

  constructor(
    private readonly ctx: CoreContext,
    private readonly audit: AuditService,
    private readonly disk: DiskSpaceService,
  ) {
    this.sqlite = ctx.db.$client;
  }

  async check(opts: { fix?: boolean; onProgress?: (p: { phase: string; done: number; total: number }) => void } = {}): Promise<DoctorReport> {
    const integrity = this.sqlite.query<{ integrity_check: string }, []>('PRAGMA integrity_check').all().map((r) => r.integrity_check);
    const databaseOk = integrity.length === 1 && integrity[0] === 'ok';

    const accounts = this.sqlite
      .query<{ id: string; email: string; storage_used: number; actual: number }, []>(
        `SELECT u.id, u.email, u.storage_used,
                (SELECT COALESCE(SUM(i.size), 0) FROM items i WHERE i.account_id = u.id AND i.type = 'file') AS actual
         FROM users u WHERE u.parent_user_id IS NULL ORDER BY u.created_at, u.id`,
      )
      .all();
    const mismatches: UsageMismatch[] = accounts
      .filter((a) => a.storage_used !== a.actual)
      .map((a) => ({ accountId: a.id, email: a.email, recorded: a.storage_used, actual: a.actual, fixed: false }));
    if (opts.fix && mismatches.length) {
      // Recomputed inside the UPDATE, so an upload committing meanwhile is counted, not overwritten.
      const repair = this.sqlite.query(
        `UPDATE users SET storage_used = (SELECT COALESCE(SUM(size), 0) FROM items WHERE account_id = ?1 AND type = 'file') WHERE id = ?1`,
      );
      this.sqlite.transaction(() => mismatches.forEach((m) => (m.fixed = repair.run(m.accountId).changes > 0)))();
      this.audit.record({
        action: AuditActions.doctorFix,
        actor: 'cli',
        targetType: 'usage_counter',
        details: { accounts: mismatches.map((m) => ({ accountId: m.accountId, from: m.recorded, to: m.actual })) },
      });
    }

    const missing = await this.findMissingObjects(opts.onProgress);

    const currentKeyId = this.ctx.keyring.current.id;
    let notCurrent = 0;
    let unavailable = 0;
    for (const r of this.sqlite
      .query<{ key_id: string; n: number }, []>('SELECT key_id, COUNT(*) AS n FROM items WHERE key_id IS NOT NULL GROUP BY key_id')
      .all()) {
      if (r.key_id === currentKeyId) continue;
      notCurrent += r.n;
      if (!this.ctx.keyring.has(r.key_id)) unavailable += r.n;
    }

    const queue = this.audit.queueDepths();
    const disk = this.disk.status();
    const storage = { location: this.ctx.driver.location, checks: this.ctx.driver instanceof S3Driver ? await this.ctx.driver.probe() : [] };

    const report: DoctorReport = {
      ok: false,
      database: { integrity: databaseOk ? 'ok' : 'damaged', messages: databaseOk ? [] : integrity.slice(0, LISTED) },
      usage: { accounts: accounts.length, mismatches },
      missingObjects: missing,
      keys: { currentKeyId, notCurrent, unavailable },
      auditQueue: queue,
      disk,
      storage,
    };
    report.ok = storage.checks.every((c) => c.ok) && databaseOk && mismatches.every((m) => m.fixed) && missing.count === 0 && unavailable === 0 && queue.failed === 0 && !disk.low;
    return report;
  }

  /** Every file row's object, checked with `head`, one page of rows at a time. */
  private async findMissingObjects(onProgress?: (p: { phase: string; done: number; total: number }) => void): Promise<DoctorReport['missingObjects']> {
    const total = this.sqlite.query<{ n: number }, []>(`SELECT COUNT(*) AS n FROM items WHERE type = 'file'`).get()!.n;
    const page = this.sqlite.query<{ id: string; name: string; account_id: string; storage_key: string | null }, [string, number]>(
      `SELECT id, name, account_id, storage_key FROM items WHERE id > ? AND type = 'file' ORDER BY id LIMIT ?`,
    );
    const out: DoctorReport['missingObjects'] = { checked: 0, count: 0, items: [] };
    let after = '';
    for (;;) {
      const rows = page.all(after, PAGE);
      if (rows.length === 0) return out;
      after = rows.at(-1)!.id;
      const present = await existsMany(this.ctx.driver, rows.map((r) => r.storage_key), isValidStorageKey);
      rows.forEach((r, i) => {
        out.checked++;
        if (present[i]) return;
        out.count++;
        if (out.items.length < LISTED) out.items.push({ id: r.id, name: r.name, accountId: r.account_id, storageKey: r.storage_key ?? '' });
      });
      onProgress?.({ phase: 'objects', done: out.checked, total });
    }
  }
}
