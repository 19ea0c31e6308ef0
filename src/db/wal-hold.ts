import { Database } from 'bun:sqlite';
import { DATABASE_BUSY_TIMEOUT_MS } from '../errors.ts';

/**
 * Keeps SQLite from discarding write-ahead log frames before a follower has read them. A read transaction
 * held open on its own connection stops any checkpoint from restarting the log (and, when it reads the
 * database file alone, from writing to it), so every frame committed after the hold began stays in the
 * log until the hold is let go; it is let go only while the write lock is held and everything has been read.
 */
export class WalHold {
  private readonly reader: Database;
  private readonly locker: Database;
  private holding = false;

  constructor(file: string) {
    this.reader = new Database(file, { strict: true });
    this.locker = new Database(file, { strict: true });
    this.reader.run(`PRAGMA busy_timeout = ${DATABASE_BUSY_TIMEOUT_MS}`);
    // Short: the server's own writes are on this thread, so only another process can keep it waiting.
    this.locker.run('PRAGMA busy_timeout = 1000');
  }

  private hold(): void {
    this.reader.run('BEGIN');
    this.reader.query('SELECT COUNT(*) FROM sqlite_master').get();
    this.holding = true;
  }

  private release(): void {
    if (this.holding) this.reader.run('COMMIT');
    this.holding = false;
  }

  /**
   * With the write lock held (no commit can happen), runs `drain` to read the log to its end, then lets the
   * hold go, checkpoints what it can, and holds again. Returns null when the write lock was busy, else
   * whether every frame is now in the database file (the hold then reads the file alone, and nothing can
   * be written to it until the hold is let go again).
   */
  checkpointAfter(drain: () => void): boolean | null {
    try {
      this.locker.run('BEGIN IMMEDIATE');
    } catch (err) {
      if ((err as { code?: string }).code === 'SQLITE_BUSY') return null;
      throw err;
    }
    try {
      drain();
      this.release();
      const r = this.reader.query<{ busy: number; log: number; checkpointed: number }, []>('PRAGMA wal_checkpoint(PASSIVE)').get()!;
      this.hold();
      // Busy (another connection checkpointing: a `coffer` command, another program) reports -1 for both.
      return r.busy === 0 && r.log === r.checkpointed;
    } finally {
      this.locker.run('ROLLBACK');
    }
  }

  close(): void {
    this.release();
    this.reader.close();
    this.locker.close();
  }
}
