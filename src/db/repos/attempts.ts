import type { Database } from 'bun:sqlite';

/** Tries at a piece of work that never finished (the process died during it) before it is given up on. */
const UNFINISHED_ATTEMPTS_LIMIT = 3;

/**
 * The SQL of `unfinished_attempts`: one row per subject whose work began and did not finish, counted before the
 * work starts (as the job queue counts a job's attempts), so a subject that kills the process cannot do so forever.
 */
export class AttemptsRepo {
  constructor(private readonly sqlite: Database) {}

  /**
   * Counts one more try at `subject`, committed before the caller starts it; false (nothing counted) when it has
   * already begun UNFINISHED_ATTEMPTS_LIMIT times without finishing: the caller gives it up.
   */
  begin(purpose: string, subject: string, at: number): boolean {
    return this.sqlite
      .transaction(() => {
        const row = this.sqlite
          .query<{ attempts: number }, [string, string]>('SELECT attempts FROM unfinished_attempts WHERE purpose = ? AND subject = ?')
          .get(purpose, subject);
        if ((row?.attempts ?? 0) >= UNFINISHED_ATTEMPTS_LIMIT) return false;
        this.sqlite
          .query(
            `INSERT INTO unfinished_attempts (purpose, subject, attempts, started_at) VALUES (?1, ?2, 1, ?3)
             ON CONFLICT (purpose, subject) DO UPDATE SET attempts = attempts + 1, started_at = ?3`,
          )
          .run(purpose, subject, at);
        return true;
      })
      .immediate();
  }

  /** The work ended (with a result or an error it caught): its tries are forgotten. */
  finish(purpose: string, subject: string): void {
    this.sqlite.query('DELETE FROM unfinished_attempts WHERE purpose = ? AND subject = ?').run(purpose, subject);
  }

  /** Forgets every subject's tries of `purpose` (a rebuild tries them all again). */
  clear(purpose: string): void {
    this.sqlite.query('DELETE FROM unfinished_attempts WHERE purpose = ?').run(purpose);
  }
}
