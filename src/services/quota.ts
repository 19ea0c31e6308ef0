import type { Database } from 'bun:sqlite';
import type { CoreContext } from '../context.ts';
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
  private readonly sqlite: Database;

  constructor(private readonly ctx: CoreContext) {
    this.sqlite = ctx.db.$client;
  }

  usage(accountId: string): StorageUsage {
    const row = this.sqlite
      .query<{ storage_used: number; storage_limit: number | null }, [string]>('SELECT storage_used, storage_limit FROM users WHERE id = ?')
      .get(accountId);
    const used = row?.storage_used ?? 0;
    const total = row?.storage_limit ?? this.ctx.config.defaultStorageLimit;
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
    this.sqlite.query('UPDATE users SET storage_used = MAX(0, storage_used + ?) WHERE id = ?').run(delta, accountId);
  }
}
