import type { Database } from 'bun:sqlite';
import { storageLocation } from '../schema/storage-location.ts';
import { selectList } from '../select.ts';

/** The recorded storage: driver, bucket and prefix, and whether `coffer storage migrate --switch` paused writes. */
export type RecordedLocation = Omit<typeof storageLocation.$inferSelect, 'id'>;
type Location = Pick<RecordedLocation, 'driver' | 'bucket' | 'prefix'>;

const LOCATION = selectList(storageLocation, ['driver', 'bucket', 'prefix', 'recordedAt', 'writesPausedAt']);

/**
 * The SQL of the one `storage_location` row and of `storage_migration_copies` (what a migration has
 * copied). Raw statements, cached by the connection: every upload reads the location twice.
 */
export class StorageLocationRepo {
  constructor(private readonly sqlite: Database) {}

  get(): RecordedLocation | null {
    return this.sqlite.query<RecordedLocation, []>(`SELECT ${LOCATION} FROM storage_location WHERE id = 1`).get();
  }

  /** Records `location` as current (writes resume). */
  record(location: Location, at: number): void {
    this.sqlite
      .query(
        `INSERT INTO storage_location (id, driver, bucket, prefix, recorded_at, writes_paused_at) VALUES (1, ?1, ?2, ?3, ?4, NULL)
         ON CONFLICT (id) DO UPDATE SET driver = ?1, bucket = ?2, prefix = ?3, recorded_at = ?4, writes_paused_at = NULL`,
      )
      .run(location.driver, location.bucket, location.prefix, at);
  }

  setWritesPaused(at: number | null): void {
    this.sqlite.query('UPDATE storage_location SET writes_paused_at = ? WHERE id = 1').run(at);
  }

  isCopied(target: string, storageKey: string): boolean {
    return (
      this.sqlite.query('SELECT 1 FROM storage_migration_copies WHERE target = ? AND storage_key = ?').get(target, storageKey) !== null
    );
  }

  markCopied(target: string, storageKey: string, at: number): void {
    this.sqlite
      .query('INSERT OR IGNORE INTO storage_migration_copies (target, storage_key, copied_at) VALUES (?, ?, ?)')
      .run(target, storageKey, at);
  }

  copiedCount(target: string): number {
    return this.sqlite.query<{ n: number }, [string]>('SELECT COUNT(*) AS n FROM storage_migration_copies WHERE target = ?').get(target)!.n;
  }

  forgetCopies(target: string): void {
    this.sqlite.query('DELETE FROM storage_migration_copies WHERE target = ?').run(target);
  }
}
