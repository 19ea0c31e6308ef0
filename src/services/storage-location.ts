import { StartupError } from '../data-dir.ts';
import type { Db } from '../db/client.ts';
import { StorageLocationRepo } from '../db/repos/storage-location.ts';
import { AppError } from '../errors.ts';
import type { StorageLocation } from '../storage/driver.ts';
import { describeLocation } from '../storage/drivers.ts';

export const STORAGE_MOVING_MESSAGE = 'Files are being moved to new storage; uploads and copies are paused. Try again in a few minutes.';

export function sameLocation(a: StorageLocation, b: StorageLocation): boolean {
  return a.driver === b.driver && (a.bucket ?? null) === (b.bucket ?? null) && a.prefix === b.prefix;
}

/**
 * The driver, bucket and prefix in use are recorded on the server's first start. Any process that opens
 * the data directory with another location is refused (unless no file has been stored yet, when the
 * server records the new one): a mistyped coffer.env would otherwise show an empty drive, or make an
 * orphan scan offer every file for deletion.
 */
export function checkStorageLocation(db: Db, configured: StorageLocation, opts: { record: boolean; now: number }): void {
  const repo = new StorageLocationRepo(db.$client);
  const recorded = repo.get();
  if (recorded && sameLocation(recorded, configured)) return;
  const files = repo.countStoredFiles();
  // A database from before locations were recorded only ever stored on local disk.
  const known: StorageLocation | null = recorded ?? (files > 0 ? { driver: 'local', bucket: null, prefix: '' } : null);
  if (known && files > 0 && !sameLocation(known, configured)) {
    const fix =
      known.driver === configured.driver
        ? `fix S3_BUCKET/S3_PREFIX in your settings (coffer.env), or move the files with "coffer storage migrate"`
        : `set COFFER_STORAGE=${known.driver} (--storage ${known.driver}) to keep using it, or move the files with "coffer storage migrate --to ${configured.driver}"`;
    throw new StartupError(
      `this installation's ${files} file(s) are stored on ${describeLocation(known)}, but Coffer was started with ${describeLocation(configured)}: ${fix}`,
    );
  }
  if (opts.record) repo.record(configured, opts.now);
}

/** While `coffer storage migrate --switch` copies the last objects, nothing new may be stored. */
export function storageMoving(): AppError {
  return new AppError(503, STORAGE_MOVING_MESSAGE, undefined, { 'Retry-After': '60' });
}
