import type { TusUploadsRepo } from '../../db/repos/tus-uploads.ts';
import type { UsersRepo } from '../../db/repos/users.ts';
import { storageLimitExceeded } from '../../errors.ts';

export interface StorageUsage {
  used: number;
  /** The account's limit; null when unlimited. */
  total: number | null;
  /** What the limit leaves once stored files and the whole length of unfinished resumable uploads are counted. */
  free: number | null;
}

/**
 * An account's storage: the usage counter on the owner's row (every stored file, trash included), the
 * space reserved by its unfinished resumable uploads (each its whole length, from creation on, so
 * uploads in parallel cannot together overshoot) and its limit (its own, else the instance default,
 * else none). Reading never scans items.
 */
export class QuotaService {
  constructor(
    private readonly users: UsersRepo,
    private readonly reservations: Pick<TusUploadsRepo, 'reserved'>,
    /** The instance default for accounts without a limit of their own (null: unlimited). */
    private readonly defaultLimit: number | null,
  ) {}

  usage(accountId: string): StorageUsage {
    const row = this.users.storage(accountId);
    const used = row?.storageUsed ?? 0;
    const total = row?.storageLimit ?? this.defaultLimit;
    if (total === null) return { used, total, free: null };
    return { used, total, free: Math.max(0, total - used - this.reservations.reserved(accountId)) };
  }

  /** Throws 413 `Storage limit exceeded. Required: X, available: Y.` when `bytes` more would not fit. */
  assertRoom(accountId: string, bytes: number): void {
    const { free } = this.usage(accountId);
    if (free !== null && bytes > free) throw storageLimitExceeded(bytes, free);
  }

  /** Adds (or with a negative delta, removes) bytes; call inside the transaction that changes the items. */
  adjust(accountId: string, delta: number): void {
    if (delta === 0) return;
    this.users.adjustStorageUsed(accountId, delta);
  }
}
