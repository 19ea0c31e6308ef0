import fs from 'node:fs';
import type { Transactions } from '../../db/repos/index.ts';
import type { DatabaseRepo } from '../../db/repos/database.ts';
import type { ItemsRepo } from '../../db/repos/items.ts';
import type { UsersRepo } from '../../db/repos/users.ts';
import { existsMany, type ProbeStep, type StorageDriver, type StorageLocation } from '../../storage/driver.ts';
import type { Keyring } from '../../storage/keyring.ts';
import { isValidStorageKey } from '../../storage/keys.ts';
import { AuditActions, type AuditService } from '../admin/audit.ts';
import type { SettingsService } from '../admin/settings.ts';
import type { DiskSpace, DiskSpaceService } from '../files/disk-space.ts';
import type { ItemService, RecoveredItems } from '../files/items.ts';
import type { StaleUploads, TusUploadService } from '../resumable-uploads/tus-uploads.ts';
import type { ReplicationCheck, ReplicationService } from './replication.ts';

const PAGE = 1000;
const LISTED = 100;

interface UsageMismatch {
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
  /** Live items whose folder is gone (no listing reaches them): what a trash or restore cut short would leave. */
  unreachableItems: {
    count: number;
    items: Array<{ id: string; name: string; accountId: string }>;
    /** With `fix`: where each account's items went (a folder at the top of its tree). */
    recovered?: RecoveredItems[];
    /** With `fix`: items a move refused (a library's), still out of reach, with why. */
    left?: Array<{ id: string; reason: string }>;
  };
  keys: { currentKeyId: string; notCurrent: number; unavailable: number };
  auditQueue: { pending: number; failed: number };
  /** Free space on the data directory's disk; `low` when less than twice the reserve uploads stop at is free. */
  disk: DiskSpace;
  /** Resumable uploads: unfinished ones, those past their expiry and staged bytes no upload owns (the server removes both). */
  uploads: StaleUploads;
  /** Where objects are stored; for a bucket, each step of a probe object's round trip (put, get, list, delete). */
  storage: { location: StorageLocation; checks: ProbeStep[] };
  /** Stored settings an earlier version accepted that this one reads differently, each with what to do. */
  settings: string[];
  /** Files holding secrets (secrets.json, the *_FILE settings) that the file's group or other users may read or write, with their mode. */
  exposedSecrets: Array<{ path: string; mode: string }>;
  /** With REPLICATE_TO: what waits for the destination, and a warning when it fails, another server took it over, or the replica is behind. */
  replication?: ReplicationCheck;
}

type Progress = (p: { phase: string; done: number; total: number }) => void;

/**
 * `coffer doctor`: the database's own integrity check, usage counters against the real sums, file rows
 * whose stored object is missing, data keys under a master key that is not current or not available,
 * free disk space against the reserve, and stale resumable uploads (listed only: the server's maintenance
 * job removes them, so they need no one).
 * free disk space against the reserve, and, on S3, a probe object's put, get, list and delete, and
 * with REPLICATE_TO whether the replica is behind, its destination answers, and no other server took it over.
 * The repairs it makes (with `fix`): the usage counters, and items out of reach moved into a folder "Recovered items"
 * at their account's root; everything else needs a person.
 */
export class DoctorService {
  constructor(
    private readonly d: {
      driver: StorageDriver;
      keyring: Keyring;
      transactions: Transactions;
      database: DatabaseRepo;
      users: UsersRepo;
      items: ItemsRepo;
      recovery: Pick<ItemService, 'recoverUnreachable'>;
      audit: AuditService;
      disk: DiskSpaceService;
      tusUploads: Pick<TusUploadService, 'stale'>;
      replication: Pick<ReplicationService, 'inspect'> | null;
      settings: Pick<SettingsService, 'storedNotices'>;
      /** secrets.json and every secret file the configuration names. */
      secretFiles: string[];
    },
  ) {}

  async check(opts: { fix?: boolean; onProgress?: Progress } = {}): Promise<DoctorReport> {
    const integrity = this.d.database.integrityCheck();
    const databaseOk = integrity.length === 1 && integrity[0] === 'ok';

    const accounts = this.d.users.usageCheck();
    const mismatches: UsageMismatch[] = accounts
      .filter((a) => a.storageUsed !== a.actual)
      .map((a) => ({ accountId: a.id, email: a.email, recorded: a.storageUsed, actual: a.actual, fixed: false }));
    if (opts.fix && mismatches.length) {
      this.d.transactions.batch(() => {
        for (const m of mismatches) m.fixed = this.d.users.repairUsage(m.accountId);
      });
      this.d.audit.record({
        action: AuditActions.doctorFix,
        actor: 'cli',
        targetType: 'usage_counter',
        details: { accounts: mismatches.map((m) => ({ accountId: m.accountId, from: m.recorded, to: m.actual })) },
      });
    }

    const missing = await this.findMissingObjects(opts.onProgress);
    const unreachableItems: DoctorReport['unreachableItems'] = this.d.items.unreachable(LISTED);
    if (opts.fix && unreachableItems.count) {
      const { recovered, left } = this.d.recovery.recoverUnreachable();
      unreachableItems.recovered = recovered;
      unreachableItems.left = left;
      this.d.audit.record({
        action: AuditActions.doctorFix,
        actor: 'cli',
        targetType: 'items_out_of_reach',
        details: {
          accounts: recovered.map((r) => ({ accountId: r.accountId, folderId: r.folderId, moved: r.items.length })),
          left: left.length,
        },
      });
    }

    const currentKeyId = this.d.keyring.current.id;
    let notCurrent = 0;
    let unavailable = 0;
    for (const [keyId, n] of Object.entries(this.d.items.countByKeyId())) {
      if (keyId === currentKeyId) continue;
      notCurrent += n;
      if (!this.d.keyring.has(keyId)) unavailable += n;
    }

    const queue = this.d.audit.queueDepths();
    const disk = this.d.disk.status();
    const uploads = await this.d.tusUploads.stale();
    const storage = { location: this.d.driver.location, checks: (await this.d.driver.probe?.()) ?? [] };
    const replication = await this.d.replication?.inspect();
    const settings = this.d.settings.storedNotices();
    const exposedSecrets = exposedFiles(this.d.secretFiles);

    const report: DoctorReport = {
      ok: false,
      database: { integrity: databaseOk ? 'ok' : 'damaged', messages: databaseOk ? [] : integrity.slice(0, LISTED) },
      usage: { accounts: accounts.length, mismatches },
      missingObjects: missing,
      unreachableItems,
      keys: { currentKeyId, notCurrent, unavailable },
      auditQueue: queue,
      disk,
      uploads,
      storage,
      settings,
      exposedSecrets,
      ...(replication ? { replication } : {}),
    };
    report.ok =
      storage.checks.every((c) => c.ok) &&
      databaseOk &&
      mismatches.every((m) => m.fixed) &&
      missing.count === 0 &&
      (unreachableItems.count === 0 || unreachableItems.left?.length === 0) &&
      unavailable === 0 &&
      queue.failed === 0 &&
      !disk.low &&
      settings.length === 0 &&
      exposedSecrets.length === 0 &&
      !replication?.warning;
    return report;
  }

  /** Every file row's object, checked with `head`, one page of rows at a time. */
  private async findMissingObjects(onProgress?: Progress): Promise<DoctorReport['missingObjects']> {
    const total = this.d.items.countFiles();
    const out: DoctorReport['missingObjects'] = { checked: 0, count: 0, items: [] };
    let after = '';
    for (;;) {
      const rows = this.d.items.filePage(after, PAGE);
      if (rows.length === 0) return out;
      after = rows.at(-1)!.id;
      const present = await existsMany(
        this.d.driver,
        rows.map((r) => r.storageKey),
        isValidStorageKey,
      );
      rows.forEach((r, i) => {
        out.checked++;
        if (present[i]) return;
        out.count++;
        if (out.items.length < LISTED) out.items.push({ id: r.id, name: r.name, accountId: r.accountId, storageKey: r.storageKey ?? '' });
      });
      onProgress?.({ phase: 'objects', done: out.checked, total });
    }
  }
}

/**
 * Of `files`, those others may read or write, or the group too when this user owns the file (it needs no group to read it;
 * a root-owned file the service reads through its group, as docs/sign-on.md sets up, is fine). A missing file is the server's to report.
 */
function exposedFiles(files: string[]): Array<{ path: string; mode: string }> {
  const out: Array<{ path: string; mode: string }> = [];
  for (const file of files) {
    let st: fs.Stats;
    try {
      st = fs.statSync(file);
    } catch {
      continue;
    }
    const mode = st.mode & 0o777;
    if (mode & (st.uid === process.getuid?.() ? 0o077 : 0o007)) out.push({ path: file, mode: `0${mode.toString(8).padStart(3, '0')}` });
  }
  return out;
}
