import type { Clock } from '../../clock.ts';
import type { ItemsRepo } from '../../db/repos/items.ts';
import type { StorageLocationRepo } from '../../db/repos/storage-location.ts';
import { AppError, Messages, StartupError } from '../../errors.ts';
import type { StorageLocation } from '../../storage/driver.ts';
import { describeLocation, sameLocation } from '../../storage/drivers.ts';
import { Gathering } from '../../lib/gathering.ts';

/**
 * Where this installation's objects live. The driver, bucket and prefix in use are recorded on the
 * server's first start; a process that opens the data directory with another location is refused
 * (unless no file has been stored yet, when the server records the new one): a mistyped coffer.env
 * would otherwise show an empty drive, or make an orphan scan offer every file for deletion.
 */
export class StorageLocationService {
  // Open while the writes of one write transaction run: a check that passed stands for the rest of them.
  private readonly locked = new Gathering<{ accepted: boolean }>(
    () => ({ accepted: false }),
    () => {},
  );

  constructor(
    private readonly d: {
      /** The location of the driver this process was started with. */
      configured: StorageLocation;
      locations: StorageLocationRepo;
      items: ItemsRepo;
      clock: Clock;
    },
  ) {}

  /** At start-up: refuses a location other than the recorded one; `record` (the server) records it when none is. */
  check(opts: { record: boolean }): void {
    const { configured } = this.d;
    const recorded = this.d.locations.get();
    if (recorded && sameLocation(recorded, configured)) return;
    const files = this.d.items.countFiles({ withKey: true });
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
    if (opts.record) this.d.locations.record(configured, this.d.clock.now());
  }

  /**
   * Before an object is written and again when its row commits: refused (503) while `coffer storage
   * migrate --switch` copies the last objects, and once it recorded another location.
   */
  assertAcceptsWrites(): void {
    const scope = this.locked.current;
    if (scope?.accepted) return;
    const r = this.d.locations.get();
    if (r && (r.writesPausedAt !== null || !sameLocation(r, this.d.configured))) {
      throw new AppError(503, Messages.storageMoving, undefined, { 'Retry-After': '60' });
    }
    if (scope) scope.accepted = true;
  }

  /**
   * Runs `writes`, all inside one write transaction that writes no location, with the location read by their first
   * check only: the transaction holds the write lock, so `coffer storage migrate --switch` cannot pause writes or
   * record another location until it commits. A refusal is not kept: each write that checks reads again.
   */
  checkedOnceWhile<T>(writes: () => T): T {
    return this.locked.run(writes);
  }
}
