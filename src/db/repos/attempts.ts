import type { Database } from 'bun:sqlite';

/** Tries at a piece of work that never finished (the process died during it) before it is given up on. */
const UNFINISHED_ATTEMPTS_LIMIT = 3;

/**
 * A subject of a batch begun together (beginBatch): `counted` (the batch goes on), `new` (no try yet, not counted: another
 * has unfinished ones), `unfinished` (begin it alone), `given-up` (begun UNFINISHED_ATTEMPTS_LIMIT times, never finished).
 */
export type BatchTry = 'counted' | 'new' | 'unfinished' | 'given-up';

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

  /**
   * begin() for a batch in one transaction: every subject is counted when none has an unfinished try. Otherwise none
   * is, so that after a crash each suspect is tried alone and the one that kills the process takes no neighbour's tries.
   */
  beginBatch(purpose: string, subjects: readonly string[], at: number): BatchTry[] {
    return this.sqlite
      .transaction(() => {
        const read = this.sqlite.query<{ attempts: number }, [string, string]>(
          'SELECT attempts FROM unfinished_attempts WHERE purpose = ? AND subject = ?',
        );
        const tries = subjects.map((subject) => read.get(purpose, subject)?.attempts ?? 0);
        if (tries.some((n) => n > 0)) {
          return tries.map((n): BatchTry => (n >= UNFINISHED_ATTEMPTS_LIMIT ? 'given-up' : n > 0 ? 'unfinished' : 'new'));
        }
        const insert = this.sqlite.query(
          `INSERT INTO unfinished_attempts (purpose, subject, attempts, started_at) VALUES (?1, ?2, 1, ?3)
           ON CONFLICT (purpose, subject) DO UPDATE SET attempts = attempts + 1, started_at = ?3`,
        );
        for (const subject of subjects) insert.run(purpose, subject, at);
        return subjects.map((): BatchTry => 'counted');
      })
      .immediate();
  }

  /** finish() of several subjects, in the caller's transaction when there is one. */
  finishAll(purpose: string, subjects: readonly string[]): void {
    const remove = this.sqlite.query('DELETE FROM unfinished_attempts WHERE purpose = ? AND subject = ?');
    for (const subject of subjects) remove.run(purpose, subject);
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
