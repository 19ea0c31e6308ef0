import type { Database } from 'bun:sqlite';
import { type JobStatus, jobs, schedules } from '../schema/jobs.ts';
import { deleteInBatches, selectList } from '../select.ts';

export type JobRow = Omit<typeof jobs.$inferSelect, 'seq' | 'idempotencyKey' | 'updatedAt' | 'progress'>;
export type ScheduleRow = typeof schedules.$inferSelect;
export interface NewJob {
  id: string;
  kind: string;
  accountId: string | null;
  payload: string;
  maxAttempts: number;
  runAt: number;
  idempotencyKey: string | null;
  at: number;
}
/** Which kinds a claim may take: only `only`, or any but those in `except`. */
export type ClaimKinds = { only: string } | { except: readonly string[] };

const JOB_KEYS = [
  'id',
  'kind',
  'accountId',
  'payload',
  'status',
  'attempts',
  'maxAttempts',
  'runAt',
  'result',
  'lastError',
  'createdAt',
  'finishedAt',
] as const satisfies ReadonlyArray<keyof JobRow>;
const JOB = selectList(jobs, JOB_KEYS);
const JOB_J = selectList(jobs, JOB_KEYS, 'j.');
const SCHEDULE = selectList(schedules, ['name', 'kind', 'payload', 'accountId', 'intervalMs', 'nextRunAt', 'createdAt']);

/** The SQL of the job queue (`jobs`) and of recurring work (`schedules`). */
export class JobsRepo {
  constructor(private readonly sqlite: Database) {}

  /** Inserts a job; with an idempotency key already used by this kind, answers that job's id instead. */
  insert(job: NewJob): string {
    return this.sqlite
      .query<{ id: string }, [string, string, string | null, string, number, number, string | null, number, number]>(
        `INSERT INTO jobs (id, kind, account_id, payload, max_attempts, run_at, idempotency_key, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (kind, idempotency_key) DO UPDATE SET updated_at = updated_at
         RETURNING id`,
      )
      .get(job.id, job.kind, job.accountId, job.payload, job.maxAttempts, job.runAt, job.idempotencyKey, job.at, job.at)!.id;
  }

  /** Whether a job of `kind` waits to be claimed (one running does not count: it may have looked already). */
  hasWaiting(kind: string): boolean {
    return this.sqlite.query("SELECT 1 FROM jobs WHERE kind = ? AND status = 'created' LIMIT 1").get(kind) !== null;
  }

  /** The newest job of `kind` with exactly `payload` that waits or runs: one to join rather than queue the same work again. */
  pendingWith(kind: string, payload: string): string | null {
    return (
      this.sqlite
        .query<{ id: string }, [string, string]>(
          "SELECT id FROM jobs WHERE status IN ('created', 'active') AND kind = ? AND payload = ? ORDER BY seq DESC LIMIT 1",
        )
        .get(kind, payload)?.id ?? null
    );
  }

  get(id: string): JobRow | null {
    return this.sqlite.query<JobRow, [string]>(`SELECT ${JOB} FROM jobs WHERE id = ?`).get(id);
  }

  /**
   * Claims the next due job and marks it active, in one immediate transaction. A job waits while an
   * earlier job of the same account is still pending or running: one account's jobs run in order.
   */
  claim(now: number, kinds: ClaimKinds): JobRow | null {
    const ofKind = 'only' in kinds ? 'j.kind = ?2' : 'j.kind NOT IN (SELECT value FROM json_each(?2))';
    const kindArg = 'only' in kinds ? kinds.only : JSON.stringify(kinds.except);
    // A read first: a poll with no job due does not wait for a write lock another thread holds (the index writer's).
    const due = this.sqlite.query(`SELECT 1 FROM jobs j WHERE j.status = 'created' AND j.run_at <= ?1 AND ${ofKind} LIMIT 1`);
    if (due.get(now, kindArg) === null) return null;
    return this.sqlite
      .transaction(() => {
        const row = this.sqlite
          .query<JobRow, [number, string]>(
            `SELECT ${JOB_J} FROM jobs j
             WHERE j.status = 'created' AND j.run_at <= ?1 AND ${ofKind}
               AND (j.account_id IS NULL OR NOT EXISTS (
                 SELECT 1 FROM jobs k
                 WHERE k.account_id = j.account_id AND k.status IN ('created', 'active') AND k.seq < j.seq))
             ORDER BY j.run_at, j.seq
             LIMIT 1`,
          )
          .get(now, kindArg);
        if (!row) return null;
        this.sqlite.query(`UPDATE jobs SET status = 'active', attempts = attempts + 1, updated_at = ? WHERE id = ?`).run(now, row.id);
        return { ...row, status: 'active' as const, attempts: row.attempts + 1 };
      })
      .immediate();
  }

  addProgress(id: string, n: number): void {
    this.sqlite.query('UPDATE jobs SET progress = progress + ? WHERE id = ?').run(n, id);
  }

  progress(id: string): number {
    return this.sqlite.query<{ progress: number }, [string]>('SELECT progress FROM jobs WHERE id = ?').get(id)?.progress ?? 0;
  }

  complete(id: string, result: string, at: number): void {
    this.sqlite
      .query(
        `UPDATE jobs SET status = 'completed', result = ?, last_error = NULL, updated_at = ?, finished_at = ?
          WHERE id = ? AND status = 'active'`,
      )
      .run(result, at, at, id);
  }

  failForGood(id: string, error: string, at: number): void {
    this.sqlite
      .query(`UPDATE jobs SET status = 'failed', last_error = ?, updated_at = ?, finished_at = ? WHERE id = ? AND status = 'active'`)
      .run(error, at, at, id);
  }

  retryAt(id: string, error: string, runAt: number, at: number): void {
    this.sqlite
      .query(`UPDATE jobs SET status = 'created', last_error = ?, run_at = ?, updated_at = ? WHERE id = ? AND status = 'active'`)
      .run(error, runAt, at, id);
  }

  /** Waiting jobs due after `now` are due `by` earlier (not before now). */
  bringBackWaiting(now: number, by: number): void {
    this.sqlite.query(`UPDATE jobs SET run_at = MAX(?1, run_at - ?2) WHERE status = 'created' AND run_at > ?1`).run(now, by);
  }

  /** Waiting jobs of `kind` become due at `now`. */
  release(kind: string, now: number): void {
    this.sqlite.query(`UPDATE jobs SET run_at = ? WHERE kind = ? AND status = 'created'`).run(now, kind);
  }

  /** Back to `created` without spending the attempt. */
  defer(id: string, runAt: number, at: number): void {
    this.sqlite
      .query(`UPDATE jobs SET status = 'created', attempts = attempts - 1, run_at = ?, updated_at = ? WHERE id = ? AND status = 'active'`)
      .run(runAt, at, id);
  }

  cancel(id: string, at: number): boolean {
    return (
      this.sqlite
        .query(`UPDATE jobs SET status = 'cancelled', updated_at = ?, finished_at = ? WHERE id = ? AND status = 'created'`)
        .run(at, at, id).changes > 0
    );
  }

  /** Jobs left `active` by a crash: those out of attempts fail, the others run again. */
  recoverInterrupted(at: number): { requeued: number; failed: number } {
    return this.sqlite
      .transaction(() => {
        const failed = this.sqlite
          .query(`UPDATE jobs SET status = 'failed', last_error = 'interrupted too many times', updated_at = ?1, finished_at = ?1
                  WHERE status = 'active' AND attempts >= max_attempts`)
          .run(at).changes;
        const requeued = this.sqlite
          .query(`UPDATE jobs SET status = 'created', run_at = ?1, updated_at = ?1 WHERE status = 'active'`)
          .run(at).changes;
        return { requeued, failed };
      })
      .immediate();
  }

  /** When the earliest waiting job of `kind` is due; null when none waits. */
  nextRunAtOf(kind: string): number | null {
    return (
      this.sqlite.query<{ t: number | null }, [string]>(`SELECT MIN(run_at) AS t FROM jobs WHERE status = 'created' AND kind = ?`).get(kind)
        ?.t ?? null
    );
  }

  nextRunAt(): number | null {
    return this.sqlite.query<{ t: number | null }, []>(`SELECT MIN(run_at) AS t FROM jobs WHERE status = 'created'`).get()?.t ?? null;
  }

  countByStatus(): Record<JobStatus, number> {
    const counts: Record<JobStatus, number> = { created: 0, active: 0, completed: 0, failed: 0, cancelled: 0 };
    for (const r of this.sqlite
      .query<{ status: JobStatus; n: number }, []>('SELECT status, COUNT(*) AS n FROM jobs GROUP BY status')
      .all()) {
      counts[r.status] = r.n;
    }
    return counts;
  }

  /** When the last job finished: the newest time the database recorded (the index on finished_at answers it). */
  lastFinishedAt(): number | null {
    return this.sqlite.query<{ t: number | null }, []>('SELECT MAX(finished_at) AS t FROM jobs').get()?.t ?? null;
  }

  /** Deletes finished jobs older than the cutoff, in batches. */
  purgeFinishedBefore(cutoff: number, batch = 500): number {
    return deleteInBatches(
      batch,
      (limit) =>
        this.sqlite
          .query(`DELETE FROM jobs WHERE seq IN (SELECT seq FROM jobs WHERE finished_at IS NOT NULL AND finished_at < ? LIMIT ?)`)
          .run(cutoff, limit).changes,
    );
  }

  // ---- schedules ----

  /** Creates the schedule, or updates its interval and payload keeping its next run time. */
  upsertSchedule(row: ScheduleRow): void {
    this.sqlite
      .query(
        `INSERT INTO schedules (name, kind, payload, account_id, interval_ms, next_run_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (name) DO UPDATE SET kind = excluded.kind, payload = excluded.payload, account_id = excluded.account_id,
           interval_ms = excluded.interval_ms, next_run_at = MIN(next_run_at, excluded.next_run_at)`,
      )
      .run(row.name, row.kind, row.payload, row.accountId, row.intervalMs, row.nextRunAt, row.createdAt);
  }

  removeSchedule(name: string): boolean {
    return this.sqlite.query('DELETE FROM schedules WHERE name = ?').run(name).changes > 0;
  }

  schedule(name: string): ScheduleRow | null {
    return this.sqlite.query<ScheduleRow, [string]>(`SELECT ${SCHEDULE} FROM schedules WHERE name = ?`).get(name);
  }

  dueSchedules(now: number): ScheduleRow[] {
    return this.sqlite.query<ScheduleRow, [number]>(`SELECT ${SCHEDULE} FROM schedules WHERE next_run_at <= ?`).all(now);
  }

  setNextRun(name: string, at: number): void {
    this.sqlite.query('UPDATE schedules SET next_run_at = ? WHERE name = ?').run(at, name);
  }

  /** Every schedule more than one interval ahead of `now` moves back by whole intervals into the next one (its time of day kept). */
  realignSchedules(now: number): void {
    this.sqlite
      .query(
        `UPDATE schedules SET next_run_at = next_run_at - ((next_run_at - ?1 - 1) / interval_ms) * interval_ms
         WHERE next_run_at > ?1 + interval_ms`,
      )
      .run(now);
  }

  /** Finished jobs created after `now` (the clock was ahead) give up their windows' keys: those windows come round again. */
  forgetWindowsRunAhead(now: number): void {
    this.sqlite
      .query(
        `UPDATE jobs SET idempotency_key = NULL WHERE idempotency_key IS NOT NULL AND created_at > ? AND status NOT IN ('created', 'active')`,
      )
      .run(now);
  }

  nextDueAt(): number | null {
    return this.sqlite.query<{ t: number | null }, []>('SELECT MIN(next_run_at) AS t FROM schedules').get()?.t ?? null;
  }
}
