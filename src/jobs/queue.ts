import type { Database } from 'bun:sqlite';
import type { Clock } from '../clock.ts';
import type { Db } from '../db/client.ts';
import type { JobStatus } from '../db/schema/jobs.ts';
import { AppError, Messages } from '../errors.ts';

export interface Job {
  id: string;
  kind: string;
  accountId: string | null;
  payload: unknown;
  status: JobStatus;
  attempts: number;
  maxAttempts: number;
  runAt: number;
  result: unknown;
  lastError: string | null;
  createdAt: number;
  finishedAt: number | null;
}

export interface EnqueueOptions {
  accountId?: string | null;
  /** A second enqueue with the same kind and key returns the first job's id and adds nothing. */
  idempotencyKey?: string;
  runAt?: number;
  maxAttempts?: number;
}

interface JobRow {
  id: string;
  kind: string;
  account_id: string | null;
  payload: string;
  status: JobStatus;
  attempts: number;
  max_attempts: number;
  run_at: number;
  result: string | null;
  last_error: string | null;
  created_at: number;
  finished_at: number | null;
}

const toJob = (r: JobRow): Job => ({
  id: r.id,
  kind: r.kind,
  accountId: r.account_id,
  payload: JSON.parse(r.payload),
  status: r.status,
  attempts: r.attempts,
  maxAttempts: r.max_attempts,
  runAt: r.run_at,
  result: r.result === null ? null : JSON.parse(r.result),
  lastError: r.last_error,
  createdAt: r.created_at,
  finishedAt: r.finished_at,
});

/** The queue table: enqueue, claim, finish. The worker (worker.ts) decides when to claim and runs handlers. */
export class JobQueue {
  /** False while no worker serves this queue: enqueue then refuses (503) instead of parking work silently. */
  available: boolean;
  private readonly sqlite: Database;
  private readonly listeners = new Set<() => void>();

  constructor(
    db: Db,
    private readonly clock: Clock,
    opts: { available: boolean },
  ) {
    this.sqlite = db.$client;
    this.available = opts.available;
  }

  /** Called after every enqueue (the worker wakes up instead of waiting for its next poll). */
  onEnqueue(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  enqueue(kind: string, payload: unknown, opts: EnqueueOptions = {}): string {
    if (!this.available) throw new AppError(503, Messages.queueUnavailable);
    return this.insert(kind, payload, opts);
  }

  /** Enqueue without the availability check: for schedules, which only the running worker ticks. */
  insert(kind: string, payload: unknown, opts: EnqueueOptions = {}): string {
    const now = this.clock.now();
    const id = crypto.randomUUID();
    const row = this.sqlite
      .query<{ id: string }, [string, string, string | null, string, number, number, string | null, number, number]>(
        `INSERT INTO jobs (id, kind, account_id, payload, max_attempts, run_at, idempotency_key, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (kind, idempotency_key) DO UPDATE SET updated_at = updated_at
         RETURNING id`,
      )
      .get(
        id,
        kind,
        opts.accountId ?? null,
        JSON.stringify(payload ?? null),
        opts.maxAttempts ?? 5,
        opts.runAt ?? now,
        opts.idempotencyKey ?? null,
        now,
        now,
      );
    for (const listener of this.listeners) listener();
    return row!.id;
  }

  get(id: string): Job | null {
    const row = this.sqlite.query<JobRow, [string]>('SELECT * FROM jobs WHERE id = ?').get(id);
    return row ? toJob(row) : null;
  }

  /**
   * Claims the next due job and marks it active, in one immediate transaction. A job waits while an
   * earlier job of the same account is still pending or running: one account's jobs run in order.
   */
  claim(): Job | null {
    const now = this.clock.now();
    return this.sqlite
      .transaction(() => {
        const row = this.sqlite
          .query<JobRow, [number]>(
            `SELECT j.* FROM jobs j
             WHERE j.status = 'created' AND j.run_at <= ?1
               AND (j.account_id IS NULL OR NOT EXISTS (
                 SELECT 1 FROM jobs k
                 WHERE k.account_id = j.account_id AND k.status IN ('created', 'active') AND k.seq < j.seq))
             ORDER BY j.run_at, j.seq
             LIMIT 1`,
          )
          .get(now);
        if (!row) return null;
        this.sqlite.query(`UPDATE jobs SET status = 'active', attempts = attempts + 1, updated_at = ? WHERE id = ?`).run(now, row.id);
        return toJob({ ...row, status: 'active', attempts: row.attempts + 1 });
      })
      .immediate();
  }

  /** Adds to a job's progress; inside the caller's transaction when there is one. */
  addProgress(id: string, n: number): void {
    this.sqlite.query('UPDATE jobs SET progress = progress + ? WHERE id = ?').run(n, id);
  }

  progress(id: string): number {
    return this.sqlite.query<{ progress: number }, [string]>('SELECT progress FROM jobs WHERE id = ?').get(id)?.progress ?? 0;
  }

  complete(id: string, result: unknown): void {
    const now = this.clock.now();
    this.sqlite
      .query(
        `UPDATE jobs SET status = 'completed', result = ?, last_error = NULL, updated_at = ?, finished_at = ? WHERE id = ? AND status = 'active'`,
      )
      .run(JSON.stringify(result ?? null), now, now, id);
  }

  /** Records a failure: back to `created` at `retryAt`, or `failed` for good when retryAt is null. */
  fail(id: string, error: string, retryAt: number | null): void {
    const now = this.clock.now();
    if (retryAt === null) {
      this.sqlite
        .query(`UPDATE jobs SET status = 'failed', last_error = ?, updated_at = ?, finished_at = ? WHERE id = ? AND status = 'active'`)
        .run(error, now, now, id);
    } else {
      this.sqlite
        .query(`UPDATE jobs SET status = 'created', last_error = ?, run_at = ?, updated_at = ? WHERE id = ? AND status = 'active'`)
        .run(error, retryAt, now, id);
    }
  }

  /** Puts a job back without spending an attempt (the handler asked to run later). */
  defer(id: string, runAt: number): void {
    this.sqlite
      .query(`UPDATE jobs SET status = 'created', attempts = attempts - 1, run_at = ?, updated_at = ? WHERE id = ? AND status = 'active'`)
      .run(runAt, this.clock.now(), id);
  }

  cancel(id: string): boolean {
    const now = this.clock.now();
    const changes = this.sqlite
      .query(`UPDATE jobs SET status = 'cancelled', updated_at = ?, finished_at = ? WHERE id = ? AND status = 'created'`)
      .run(now, now, id).changes;
    return changes > 0;
  }

  /**
   * At boot: jobs left `active` by a crash run again (handlers are idempotent); one that has already
   * used its attempts (it may be what crashed the process) is failed instead.
   */
  recoverInterrupted(): { requeued: number; failed: number } {
    const now = this.clock.now();
    return this.sqlite
      .transaction(() => {
        const failed = this.sqlite
          .query(`UPDATE jobs SET status = 'failed', last_error = 'interrupted too many times', updated_at = ?1, finished_at = ?1
                  WHERE status = 'active' AND attempts >= max_attempts`)
          .run(now).changes;
        const requeued = this.sqlite
          .query(`UPDATE jobs SET status = 'created', run_at = ?1, updated_at = ?1 WHERE status = 'active'`)
          .run(now).changes;
        return { requeued, failed };
      })
      .immediate();
  }

  /** Earliest run_at of a pending job, for the worker's next wake-up. */
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

  /** Deletes finished jobs older than the cutoff, in batches; returns how many went. */
  purgeFinished(before: number, batch = 500): number {
    let total = 0;
    for (;;) {
      const n = this.sqlite
        .query(`DELETE FROM jobs WHERE seq IN (SELECT seq FROM jobs WHERE finished_at IS NOT NULL AND finished_at < ? LIMIT ?)`)
        .run(before, batch).changes;
      total += n;
      if (n < batch) return total;
    }
  }
}
