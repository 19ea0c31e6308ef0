import type { Database } from 'bun:sqlite';
import type { CoreContext } from '../context.ts';
import { StorageLocationRepo } from '../db/repos/storage-location.ts';
import { storageMoving } from './storage-location.ts';

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
  private readonly sqlite: Database;
  /** Keys this process is writing now; only the server writes objects, so these are all there are. */
  private readonly writing = new Set<string>();

  private readonly locations: StorageLocationRepo;

  constructor(private readonly ctx: CoreContext) {
    this.sqlite = ctx.db.$client;
    this.locations = new StorageLocationRepo(this.sqlite);
  }

  /** Before an object is written under `key`; refused while `coffer storage migrate --switch` runs, and after it moved the files elsewhere. */
  record(key: string): void {
    if (!this.locations.acceptsWrites(this.ctx.driver.location)) throw storageMoving();
    this.writing.add(key);
    this.sqlite.query('INSERT OR IGNORE INTO upload_intents (storage_key, created_at) VALUES (?, ?)').run(key, this.ctx.clock.now());
  }

  /**
   * Inside the transaction that commits the row pointing at `key`: the object is known from now on.
   * Checked again here, so no row can point at an object the migration's last pass did not see.
   */
  committed(key: string): void {
    if (!this.locations.acceptsWrites(this.ctx.driver.location)) throw storageMoving();
    this.sqlite.query('DELETE FROM upload_intents WHERE storage_key = ?').run(key);
    this.writing.delete(key);
  }

  /** After the object under `key` was removed again (or never published). */
  forget(key: string): void {
    this.sqlite.query('DELETE FROM upload_intents WHERE storage_key = ?').run(key);
    this.writing.delete(key);
  }

  /** The writer gave up on `key` without removing its object: the intent stays for the sweep. */
  abandon(key: string): void {
    this.writing.delete(key);
  }

  /** Removes the object of every intent that has no row and no writer at work in this process. */
  async sweep(): Promise<IntentSweep> {
    const page = this.sqlite.query<{ storage_key: string; referenced: number }, [string, number]>(
      `SELECT u.storage_key, EXISTS (SELECT 1 FROM items i WHERE i.storage_key = u.storage_key) AS referenced
       FROM upload_intents u WHERE u.storage_key > ? ORDER BY u.storage_key LIMIT ?`,
    );
    const drop = this.sqlite.query('DELETE FROM upload_intents WHERE storage_key = ?');
    const out: IntentSweep = { removedObjects: 0, clearedIntents: 0 };
    let after = '';
    for (;;) {
      const rows = page.all(after, SWEEP_PAGE);
      if (rows.length === 0) break;
      after = rows.at(-1)!.storage_key;
      for (const r of rows) {
        if (this.writing.has(r.storage_key)) continue;
        if (!r.referenced && (await this.ctx.storage.delete(r.storage_key))) out.removedObjects++;
        // Re-checked after the await: a writer may have started on this key meanwhile.
        if (this.writing.has(r.storage_key)) continue;
        drop.run(r.storage_key);
        out.clearedIntents++;
      }
    }
    if (out.clearedIntents) this.ctx.log.info('removed objects of interrupted uploads', { ...out });
    return out;
  }
}
