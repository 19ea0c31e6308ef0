import type { StorageUsage } from '../../contract/files.ts';
import type { TusUploadsRepo } from '../../db/repos/tus-uploads.ts';
import type { UsersRepo } from '../../db/repos/users.ts';
import type { VersionsRepo } from '../../db/repos/versions.ts';
import { storageLimitExceeded } from '../../errors.ts';
import { Jobs } from '../../jobs/catalog.ts';
import type { JobQueue } from '../../jobs/queue.ts';

/** What the account uses and may still use, without what versions hold. */
export type Usage = Omit<StorageUsage, 'versions'>;

const EVICT_PAGE = 100;

/**
 * An account's storage: the usage counter on the owner's row (every stored file, trash and versions
 * included), the space reserved by its unfinished resumable uploads (each its whole length, from creation
 * on, so uploads in parallel cannot together overshoot) and its limit (its own, else the instance
 * default, else none). Versions never make an upload fail: what they hold counts as room, and making
 * room removes the account's oldest versions first. Reading never scans items.
 */
export class QuotaService {
  constructor(
    private readonly users: UsersRepo,
    private readonly reservations: Pick<TusUploadsRepo, 'reserved'>,
    private readonly versions: Pick<VersionsRepo, 'accountBytes' | 'oldestOfAccount' | 'delete'>,
    private readonly queue: Pick<JobQueue, 'insert'>,
    /** The instance default for accounts without a limit of their own (null: unlimited). */
    private readonly defaultLimit: number | null,
  ) {}

  usage(accountId: string): Usage {
    const row = this.users.storage(accountId);
    const used = row?.storageUsed ?? 0;
    const total = row?.storageLimit ?? this.defaultLimit;
    if (total === null) return { used, total, free: null };
    return { used, total, free: Math.max(0, total - used - this.reservations.reserved(accountId)) };
  }

  /** GET /api/user/storage: the usage and the bytes versions hold (included in `used`). */
  storage(accountId: string): StorageUsage {
    return { ...this.usage(accountId), versions: this.versions.accountBytes(accountId) };
  }

  /** What an upload may use: the free space plus what the account's versions hold (null: unlimited). */
  room(accountId: string): number | null {
    const { free } = this.usage(accountId);
    return free === null ? null : free + this.versions.accountBytes(accountId);
  }

  /** 413 when `bytes` more would not fit even with every version of the account gone; changes nothing. */
  assertCouldFit(accountId: string, bytes: number): void {
    const room = this.room(accountId);
    if (room !== null && bytes > room) throw storageLimitExceeded(bytes, room);
  }

  /**
   * Throws 413 `Storage limit exceeded. Required: X, available: Y.` when `bytes` more would not fit once
   * the account's oldest versions are removed; removes just as many as are needed. Inside a transaction.
   */
  assertRoom(accountId: string, bytes: number): void {
    let { free } = this.usage(accountId);
    if (free === null || bytes <= free) return;
    if (bytes <= free + this.versions.accountBytes(accountId)) free += this.evictOldestVersions(accountId, bytes - free);
    if (bytes > free) throw storageLimitExceeded(bytes, free);
  }

  /** Adds (or with a negative delta, removes) bytes; call inside the transaction that changes the items. */
  adjust(accountId: string, delta: number): void {
    if (delta === 0) return;
    this.users.adjustStorageUsed(accountId, delta);
  }

  /** Removes the account's oldest versions until `needed` bytes are freed (or none is left); answers the bytes freed. */
  private evictOldestVersions(accountId: string, needed: number): number {
    let freed = 0;
    const keys: string[] = [];
    while (freed < needed) {
      const page = this.versions.oldestOfAccount(accountId, EVICT_PAGE);
      if (page.length === 0) break;
      for (const v of page) {
        if (freed >= needed) break;
        this.versions.delete(v.id);
        freed += v.size;
        keys.push(v.storageKey);
      }
    }
    this.adjust(accountId, -freed);
    if (keys.length) this.queue.insert(Jobs.storageDelete, { keys });
    return freed;
  }
}
