import { Gathering } from '../../lib/gathering.ts';
import type { Clock } from '../../clock.ts';
import type { UploadIntentsRepo } from '../../db/repos/upload-intents.ts';
import type { Logger } from '../../log.ts';
import { StorageCallNotImplementedError } from '../../storage/driver.ts';
import type { SealedStore } from '../../storage/sealed.ts';
import type { StorageLocationService } from '../admin/storage-location.ts';

export interface IntentSweep {
  /** Objects removed because no row will ever point at them. */
  removedObjects: number;
  /** Intents dropped (their object removed, never written, or committed after all). */
  clearedIntents: number;
}

const SWEEP_PAGE = 500;

/**
 * Uploads and copies write an object before the row that points at it, so a crash between the two would
 * leave an object nobody knows. Each writer records an intent before the first byte, and clears it in the
 * transaction that commits the row, or once it has removed the object again. An intent found with no
 * row and no writer at work is what a crash left behind: `sweep` removes its object (at start-up, before
 * anything is written, and hourly).
 */
export class UploadIntentService {
  /** Keys this process is writing now; only the server writes objects, so these are all there are. */
  private readonly writing = new Set<string>();
  /** The keys committed inside `batchingCommits`, cleared at its end. */
  private readonly gathered = new Gathering<string[]>(
    () => {
      this.location.assertAcceptsWrites();
      return [];
    },
    (keys) => {
      if (keys.length) this.repo.clearMany(keys);
      for (const key of keys) this.writing.delete(key);
    },
  );

  constructor(
    private readonly repo: UploadIntentsRepo,
    private readonly storage: Pick<SealedStore, 'delete' | 'driver'>,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly location: Pick<StorageLocationService, 'assertAcceptsWrites'>,
  ) {}

  /** Before an object is written under `key`; refused while `coffer storage migrate --switch` runs, and after it moved the files elsewhere. */
  record(key: string): void {
    this.location.assertAcceptsWrites();
    this.writing.add(key);
    this.repo.record(key, this.clock.now());
  }

  /**
   * Inside the transaction that commits the row pointing at `key`: the object is known from now on.
   * Checked again here, so no row can point at an object the migration's last pass did not see.
   */
  committed(key: string): void {
    if (this.gathered.current) {
      this.gathered.current.push(key);
      return;
    }
    this.location.assertAcceptsWrites();
    this.repo.clear(key);
    this.writing.delete(key);
  }

  /**
   * Runs `write` (inside the transaction that commits its rows, which holds the write lock, so the location
   * cannot change meanwhile) with the location checked once before it writes anything, and the intents of
   * the keys it commits cleared in one statement when it ends.
   */
  batchingCommits<T>(write: () => T): T {
    return this.gathered.run(write);
  }

  /** After the object under `key` was removed again (or never published). */
  forget(key: string): void {
    this.repo.clear(key);
    this.writing.delete(key);
  }

  /** The writer gave up on `key` without removing its object: the intent stays for the sweep. */
  abandon(key: string): void {
    this.writing.delete(key);
  }

  /** Removes the object of every intent that has no row and no writer at work in this process. */
  async sweep(): Promise<IntentSweep> {
    const out: IntentSweep = { removedObjects: 0, clearedIntents: 0 };
    const swept = new Set<string>();
    let after = '';
    for (;;) {
      const rows = this.repo.page(after, SWEEP_PAGE);
      if (rows.length === 0) break;
      after = rows.at(-1)!.storageKey;
      for (const r of rows) {
        if (this.writing.has(r.storageKey)) continue;
        if (!r.referenced && (await this.storage.delete(r.storageKey))) out.removedObjects++;
        // Re-checked after the await: a writer may have started on this key meanwhile.
        if (this.writing.has(r.storageKey)) continue;
        this.repo.clear(r.storageKey);
        if (!r.referenced) swept.add(r.storageKey);
        out.clearedIntents++;
      }
    }
    await this.abortIncompleteUploads(swept);
    if (out.clearedIntents) this.log.info('removed objects of interrupted uploads', { ...out });
    return out;
  }

  /** A bucket's multipart uploads a crash cut off under `keys`: aborted, so their parts are not billed until an orphan review. */
  private async abortIncompleteUploads(keys: ReadonlySet<string>): Promise<void> {
    const driver = this.storage.driver;
    if (keys.size === 0 || !driver.listIncompleteUploads || !driver.abortIncompleteUpload) return;
    try {
      for await (const u of driver.listIncompleteUploads()) {
        if (keys.has(u.key) && !this.writing.has(u.key)) await driver.abortIncompleteUpload(u.key, u.uploadId);
      }
    } catch (err) {
      // A store without ListMultipartUploads (or away now): orphan review lists what is left.
      if (!(err instanceof StorageCallNotImplementedError))
        this.log.warn('could not abort interrupted multipart uploads', { err: String(err) });
    }
  }
}
