import { Gathering } from '../../lib/gathering.ts';
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

type StorageRow = ReturnType<UsersRepo['storage']>;

/** The usage rows a batch has read, and the bytes it has added to each since (written at its end). */
interface UsageBatch {
  rows: Map<string, StorageRow>;
  added: Map<string, number>;
}

/**
 * How a write finds room: `evict` may remove the account's oldest versions (a login of the account itself),
 * `free` takes only free space (a share link's visitor, a member of a shared folder: never the owner's
 * history), `reserved` had `bytes` reserved before (a resumable upload, whose reservation ends with the write)
 * and takes room as `evict` does when `evicts`, else as `free`.
 */
export type RoomRule = 'evict' | 'free' | { reserved: number; evicts: boolean };

/**
 * The rule of a login's write: a member acting inside another account's shared folder (a principal's
 * `share`, a job's `memberAccountId`) never evicts.
 */
export function roomRuleOf(principal: { share?: unknown; memberAccountId?: string }): 'evict' | 'free' {
  return principal.share || principal.memberAccountId ? 'free' : 'evict';
}

/**
 * An account's storage: the usage counter on the owner's row (every stored file, trash and versions
 * included), the space reserved by its unfinished resumable uploads (each its whole length, from creation
 * on, so uploads in parallel cannot together overshoot) and its limit (its own, else the instance
 * default, else none). Versions never make an upload of the account's own logins fail: what they hold
 * counts as room, and committing its bytes removes the account's oldest versions first. Reading never
 * scans items.
 */
export class QuotaService {
  private readonly batch = new Gathering<UsageBatch>(
    () => ({ rows: new Map(), added: new Map() }),
    (batch) => {
      for (const [accountId, bytes] of batch.added) this.writeUsed(accountId, bytes);
    },
  );
  // The usage rows read inside `readOnceWhile`, each kept as this process's adjustments leave it.
  private readonly held = new Gathering<Map<string, StorageRow>>(
    () => new Map(),
    () => {},
  );

  constructor(
    private readonly users: UsersRepo,
    private readonly reservations: Pick<TusUploadsRepo, 'reserved'>,
    private readonly versions: Pick<VersionsRepo, 'accountBytes' | 'oldestOfAccount' | 'delete'>,
    private readonly queue: Pick<JobQueue, 'insert'>,
    /** The instance default for accounts without a limit of their own (null: unlimited). */
    private readonly defaultLimit: number | null,
  ) {}

  /**
   * Runs `write` (inside the caller's transaction) with each account's usage row read once and the bytes
   * it adds written once when it ends: every check inside sees the bytes added before it, as with a write
   * each. Written when `write` throws too, so the counter holds what was inserted, whether the caller then
   * commits or rolls back.
   */
  batchingUsage<T>(write: () => T): T {
    return this.batch.run(write);
  }

  /**
   * Runs `writes` (inside one transaction, which holds the write lock: no other connection changes a usage row
   * meanwhile) with each account's usage row read once and kept as `adjust` changes it; `forgetReads` when one of
   * them rolls back what it adjusted.
   */
  readOnceWhile<T>(writes: () => T): T {
    return this.held.run(writes);
  }

  /** Inside `readOnceWhile`: a write rolled back to its savepoint, so the rows are read again. */
  forgetReads(): void {
    this.held.current?.clear();
  }

  /** The account's usage row, with what the batch has added since it was read. */
  private storageRow(accountId: string): StorageRow {
    const batch = this.batch.current;
    if (!batch) return this.heldRow(accountId);
    let row = batch.rows.get(accountId);
    if (row === undefined) {
      row = this.heldRow(accountId);
      batch.rows.set(accountId, row);
    }
    const added = batch.added.get(accountId) ?? 0;
    return row && added ? { ...row, storageUsed: row.storageUsed + added } : row;
  }

  private heldRow(accountId: string): StorageRow {
    const held = this.held.current;
    if (!held) return this.users.storage(accountId);
    let row = held.get(accountId);
    if (row === undefined) {
      row = this.users.storage(accountId);
      held.set(accountId, row);
    }
    return row;
  }

  /** Writes a change of the counter, and keeps a row held by `readOnceWhile` as the statement leaves it. */
  private writeUsed(accountId: string, delta: number): void {
    this.users.adjustStorageUsed(accountId, delta);
    const row = this.held.current?.get(accountId);
    if (row) this.held.current!.set(accountId, { ...row, storageUsed: Math.max(0, row.storageUsed + delta) });
  }

  usage(accountId: string): Usage {
    const row = this.storageRow(accountId);
    const used = row?.storageUsed ?? 0;
    const total = row?.storageLimit ?? this.defaultLimit;
    if (total === null) return { used, total, free: null };
    return { used, total, free: Math.max(0, total - used - this.reservations.reserved(accountId)) };
  }

  /** GET /api/user/storage: the usage and the bytes versions hold (included in `used`). */
  storage(accountId: string): StorageUsage {
    return { ...this.usage(accountId), versions: this.versions.accountBytes(accountId) };
  }

  /** What an upload may use: what neither files nor reservations take, versions included (null: unlimited). */
  room(accountId: string): number | null {
    const left = this.unreserved(accountId);
    return left === null ? null : Math.max(0, left + this.versions.accountBytes(accountId));
  }

  /** Whether new files may land in the account: it is there and neither disabled nor being deleted (read with its usage row). */
  accepts(accountId: string): boolean {
    const row = this.storageRow(accountId);
    return row !== null && row.disabledAt === null;
  }

  /** 413 when `bytes` more would not fit in the free space (versions stay); changes nothing. */
  assertFree(accountId: string, bytes: number): void {
    const { free } = this.usage(accountId);
    if (free !== null && bytes > free) throw storageLimitExceeded(bytes, free);
  }

  /** The check of committed bytes under `rule`; inside the transaction that commits them. */
  assertRoomFor(accountId: string, bytes: number, rule: RoomRule): void {
    if (rule === 'evict') this.assertRoom(accountId, bytes);
    else if (rule === 'free') this.assertFree(accountId, bytes);
    else this.assertReserved(accountId, bytes, rule);
  }

  /** 413 when `bytes` more would not fit under `rule` (`evict`: even with every version gone); changes nothing. */
  assertCouldFit(accountId: string, bytes: number, rule: 'evict' | 'free'): void {
    if (rule === 'free') return this.assertFree(accountId, bytes);
    const room = this.room(accountId);
    if (room !== null && bytes > room) throw storageLimitExceeded(bytes, room);
  }

  /**
   * Throws 413 `Storage limit exceeded. Required: X, available: Y.` when `bytes` more would not fit once
   * the account's oldest versions are removed; removes just as many as are needed. Inside a transaction.
   */
  assertRoom(accountId: string, bytes: number): void {
    let left = this.unreserved(accountId);
    if (left === null || bytes <= left) return;
    // Below zero, reservations counted on versions: they are removed now, when bytes are committed.
    if (bytes <= left + this.versions.accountBytes(accountId)) left += this.evictOldestVersions(accountId, bytes - left);
    if (bytes > left) throw storageLimitExceeded(bytes, left);
  }

  /**
   * A resumable upload's commit: its bytes must fit the limit as it stands now (an admin may have lowered it since
   * the reservation), counting its own reservation, which ends in this transaction, as room. Only an upload of the
   * account's own logins (`evicts`) removes the oldest versions it needs, as `assertRoom` does.
   */
  private assertReserved(accountId: string, bytes: number, rule: { reserved: number; evicts: boolean }): void {
    const unreserved = this.unreserved(accountId);
    if (unreserved === null) return;
    let left = unreserved + rule.reserved;
    if (bytes <= left) return;
    if (rule.evicts && bytes <= left + this.versions.accountBytes(accountId)) left += this.evictOldestVersions(accountId, bytes - left);
    if (bytes > left) throw storageLimitExceeded(bytes, Math.max(0, left));
  }

  /** Adds (or with a negative delta, removes) bytes; call inside the transaction that changes the items. */
  adjust(accountId: string, delta: number): void {
    if (delta === 0) return;
    const batch = this.batch.current;
    if (batch) {
      if (delta > 0) {
        batch.added.set(accountId, (batch.added.get(accountId) ?? 0) + delta);
        return;
      }
      // Bytes removed (versions evicted) are written in order after what was added, then the row read again.
      const added = batch.added.get(accountId);
      if (added) this.writeUsed(accountId, added);
      batch.added.delete(accountId);
      batch.rows.delete(accountId);
    }
    this.writeUsed(accountId, delta);
  }

  /** The limit less usage and reservations, below zero when reservations count on versions (null: unlimited). */
  private unreserved(accountId: string): number | null {
    const row = this.storageRow(accountId);
    const total = row?.storageLimit ?? this.defaultLimit;
    if (total === null) return null;
    return total - (row?.storageUsed ?? 0) - this.reservations.reserved(accountId);
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
