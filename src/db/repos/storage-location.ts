import type { Database } from 'bun:sqlite';
import type { StorageLocation } from '../../storage/driver.ts';

export interface RecordedLocation extends StorageLocation {
  recordedAt: number;
  writesPausedAt: number | null;
}

interface LocationRow {
  driver: 'local' | 's3';
  bucket: string | null;
  prefix: string;
  recorded_at: number;
  writes_paused_at: number | null;
}

/** The one `storage_location` row and the `storage_migration_copies` progress of `coffer storage migrate`. */
export class StorageLocationRepo {
  constructor(private readonly sqlite: Database) {}

  get(): RecordedLocation | null {
    const r = this.sqlite.query<LocationRow, []>('SELECT driver, bucket, prefix, recorded_at, writes_paused_at FROM storage_location WHERE id = 1').get();
    return r ? { driver: r.driver, bucket: r.bucket, prefix: r.prefix, recordedAt: r.recorded_at, writesPausedAt: r.writes_paused_at } : null;
  }

  /** Records `location` as current (writes resume). */
  record(location: StorageLocation, now: number): void {
    this.sqlite
      .query(
        `INSERT INTO storage_location (id, driver, bucket, prefix, recorded_at, writes_paused_at) VALUES (1, ?1, ?2, ?3, ?4, NULL)
         ON CONFLICT (id) DO UPDATE SET driver = ?1, bucket = ?2, prefix = ?3, recorded_at = ?4, writes_paused_at = NULL`,
      )
      .run(location.driver, location.bucket, location.prefix, now);
  }

  setWritesPaused(at: number | null): void {
    this.sqlite.query('UPDATE storage_location SET writes_paused_at = ? WHERE id = 1').run(at);
  }

  /** Whether objects may be written to `location` now: it is the recorded one and no switch is under way. */
  acceptsWrites(location: StorageLocation): boolean {
    const r = this.get();
    if (!r) return true;
    return r.writesPausedAt === null && r.driver === location.driver && r.bucket === location.bucket && r.prefix === location.prefix;
  }

  /** Rows that point at a stored object. */
  countStoredFiles(): number {
    return this.sqlite.query<{ n: number }, []>(`SELECT COUNT(*) AS n FROM items WHERE type = 'file' AND storage_key IS NOT NULL`).get()!.n;
  }

  /** File rows with their objects, in key order after `afterKey`: what a migration copies. */
  storedFilesPage(afterKey: string, limit: number): Array<{ storage_key: string; size: number }> {
    return this.sqlite
      .query<{ storage_key: string; size: number }, [string, number]>(
        `SELECT storage_key, MAX(size) AS size FROM items WHERE type = 'file' AND storage_key > ? GROUP BY storage_key ORDER BY storage_key LIMIT ?`,
      )
      .all(afterKey, limit);
  }

  isCopied(target: string, storageKey: string): boolean {
    return this.sqlite.query('SELECT 1 FROM storage_migration_copies WHERE target = ? AND storage_key = ?').get(target, storageKey) !== null;
  }

  markCopied(target: string, storageKey: string, now: number): void {
    this.sqlite.query('INSERT OR IGNORE INTO storage_migration_copies (target, storage_key, copied_at) VALUES (?, ?, ?)').run(target, storageKey, now);
  }

  copiedCount(target: string): number {
    return this.sqlite.query<{ n: number }, [string]>('SELECT COUNT(*) AS n FROM storage_migration_copies WHERE target = ?').get(target)!.n;
  }

  forgetCopies(target: string): void {
    this.sqlite.query('DELETE FROM storage_migration_copies WHERE target = ?').run(target);
  }

  /** Objects of uploads and copies in flight (their rows are not committed yet). */
  pendingWrites(): number {
    return this.sqlite.query<{ n: number }, []>('SELECT COUNT(*) AS n FROM upload_intents').get()!.n;
  }
}
