import type { UsersRepo } from '../db/repos/users.ts';
import { storageLimitExceeded } from '../errors.ts';

export interface StorageUsage {
  used: number;
  /** The account's limit; null when unlimited. */
  total: number | null;
  free: number | null;
}

/**
 * An account's storage: the usage counter on the owner's row (every stored file, trash included) and
 * its limit (its own, else the instance default, else none). Reading never scans items.
 */
export class QuotaService {
  constructor(
    private readonly users: UsersRepo,
    /** The instance default for accounts without a limit of their own (null: unlimited). */
    private readonly defaultLimit: number | null,
  ) {}

  usage(accountId: string): StorageUsage {
    const row = this.users.storage(accountId);
    const used = row?.storageUsed ?? 0;
    const total = row?.storageLimit ?? this.defaultLimit;
    return { used, total, free: total === null ? null : Math.max(0, total - used) };
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
