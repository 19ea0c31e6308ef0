import { and, count, eq } from 'drizzle-orm';
import type { Db } from '../client.ts';
import { storageLocation, storageMigrationCopies } from '../schema/storage-location.ts';

/** The recorded storage: driver, bucket and prefix, and whether `coffer storage migrate --switch` paused writes. */
export type RecordedLocation = Omit<typeof storageLocation.$inferSelect, 'id'>;
type Location = Pick<RecordedLocation, 'driver' | 'bucket' | 'prefix'>;

/** The SQL of the one `storage_location` row and of `storage_migration_copies` (what a migration has copied). */
export class StorageLocationRepo {
  constructor(private readonly db: Db) {}

  get(): RecordedLocation | null {
    const { driver, bucket, prefix, recordedAt, writesPausedAt } = storageLocation;
    return (
      this.db.select({ driver, bucket, prefix, recordedAt, writesPausedAt }).from(storageLocation).where(eq(storageLocation.id, 1)).get() ??
      null
    );
  }

  /** Records `location` as current (writes resume). */
  record(location: Location, at: number): void {
    const row = { driver: location.driver, bucket: location.bucket, prefix: location.prefix, recordedAt: at, writesPausedAt: null };
    this.db
      .insert(storageLocation)
      .values({ id: 1, ...row })
      .onConflictDoUpdate({ target: storageLocation.id, set: row })
      .run();
  }

  setWritesPaused(at: number | null): void {
    this.db.update(storageLocation).set({ writesPausedAt: at }).where(eq(storageLocation.id, 1)).run();
  }

  isCopied(target: string, storageKey: string): boolean {
    return (
      this.db
        .select({ target: storageMigrationCopies.target })
        .from(storageMigrationCopies)
        .where(and(eq(storageMigrationCopies.target, target), eq(storageMigrationCopies.storageKey, storageKey)))
        .get() !== undefined
    );
  }

  markCopied(target: string, storageKey: string, at: number): void {
    this.db.insert(storageMigrationCopies).values({ target, storageKey, copiedAt: at }).onConflictDoNothing().run();
  }

  copiedCount(target: string): number {
    return this.db.select({ n: count() }).from(storageMigrationCopies).where(eq(storageMigrationCopies.target, target)).get()!.n;
  }

  forgetCopies(target: string): void {
    this.db.delete(storageMigrationCopies).where(eq(storageMigrationCopies.target, target)).run();
  }
}
