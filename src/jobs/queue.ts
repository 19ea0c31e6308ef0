import type { Clock } from '../clock.ts';
import type { JobStatus } from '../db/schema/jobs.ts';
import type { ClaimKinds, JobsRepo } from '../db/repos/jobs.ts';
import { AppError, Messages } from '../errors.ts';
import type { JobSpec, PayloadOf } from './catalog.ts';

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
}

/** The queue table: enqueue, claim, finish. The worker (worker.ts) decides when to claim and runs handlers. */
export class JobQueue {
  /** False while no worker serves this queue: enqueue then refuses (503) instead of parking work silently. */
  available: boolean;
  private readonly listeners = new Set<(runAt: number) => void>();

  constructor(
    private readonly repo: JobsRepo,
    private readonly clock: Clock,
    opts: { available: boolean },
  ) {
    this.available = opts.available;
  }

  /** Called after every enqueue with when the job is due (the worker wakes up then instead of at its next poll). */
  onEnqueue(listener: (runAt: number) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  enqueue<J extends JobSpec>(job: J, payload: PayloadOf<J>, opts: EnqueueOptions = {}): string {
    if (!this.available) throw new AppError(503, Messages.queueUnavailable);
    return this.insert(job, payload, opts);
  }

  /** Enqueue without the availability check: for work queued inside a transaction, and for schedules. */
  insert<J extends JobSpec>(job: J, payload: PayloadOf<J>, opts: EnqueueOptions = {}): string {
    return this.insertRaw(job.name, payload, { ...opts, maxAttempts: job.maxAttempts });
  }

  /** A job whose kind and payload were stored earlier (a schedule row). */
  insertRaw(kind: string, payload: unknown, opts: EnqueueOptions & { maxAttempts?: number } = {}): string {
    const now = this.clock.now();
    const runAt = opts.runAt ?? now;
    const id = this.repo.insert({
      id: crypto.randomUUID(),
      kind,
      accountId: opts.accountId ?? null,
      payload: JSON.stringify(payload ?? null),
      maxAttempts: opts.maxAttempts ?? 5,
      runAt,
      idempotencyKey: opts.idempotencyKey ?? null,
      at: now,
    });
    for (const listener of this.listeners) listener(runAt);
    return id;
  }

  hasWaiting(job: JobSpec): boolean {
    return this.repo.hasWaiting(job.name);
  }

  /** The id of a waiting or running job of `job` with the same payload, if any. */
  pendingWith<J extends JobSpec>(job: J, payload: PayloadOf<J>): string | null {
    return this.repo.pendingWith(job.name, JSON.stringify(payload ?? null));
  }

  get(id: string): Job | null {
    const row = this.repo.get(id);
    return row ? parse(row) : null;
  }

  /**
   * Claims the next due job (one account's jobs run in order); null when none is due. `kinds`: only a job of
   * `only`, or of none of `except` (the worker's slots of their own, JobSpec.ownSlots).
   */
  claim(kinds: ClaimKinds = { except: [] }): Job | null {
    const row = this.repo.claim(this.clock.now(), kinds);
    return row ? parse(row) : null;
  }

  addProgress(id: string, n: number): void {
    this.repo.addProgress(id, n);
  }

  progress(id: string): number {
    return this.repo.progress(id);
  }

  complete(id: string, result: unknown): void {
    this.repo.complete(id, JSON.stringify(result ?? null), this.clock.now());
  }

  /** Records a failure: back to `created` at `retryAt`, or `failed` for good when retryAt is null. */
  fail(id: string, error: string, retryAt: number | null): void {
    if (retryAt === null) this.repo.failForGood(id, error, this.clock.now());
    else this.repo.retryAt(id, error, retryAt, this.clock.now());
  }

  /** Puts a job back without spending an attempt (the handler asked to run later). */
  defer(id: string, runAt: number): void {
    this.repo.defer(id, runAt, this.clock.now());
  }

  /** The waiting jobs of `job` run now: at boot, those held back while the process that queued them lived; deletions the replica caught up with. */
  release(job: JobSpec): void {
    this.repo.release(job.name, this.clock.now());
  }

  cancel(id: string): boolean {
    return this.repo.cancel(id, this.clock.now());
  }

  /**
   * At boot: jobs left `active` by a crash run again (handlers are idempotent); one that has already
   * used its attempts (it may be what crashed the process) is failed instead.
   */
  recoverInterrupted(): { requeued: number; failed: number } {
    return this.repo.recoverInterrupted(this.clock.now());
  }

  /** When the earliest waiting job of `job` is due; null when none waits. */
  nextRunAtOf(job: JobSpec): number | null {
    return this.repo.nextRunAtOf(job.name);
  }

  /** Earliest run_at of a pending job, for the worker's next wake-up. */
  nextRunAt(): number | null {
    return this.repo.nextRunAt();
  }

  countByStatus(): Record<JobStatus, number> {
    return this.repo.countByStatus();
  }

  /** Deletes finished jobs older than the cutoff, in batches; returns how many went. */
  purgeFinished(before: number, batch = 500): number {
    return this.repo.purgeFinishedBefore(before, batch);
  }
}

function parse(r: NonNullable<ReturnType<JobsRepo['get']>>): Job {
  return { ...r, payload: JSON.parse(r.payload), result: r.result === null ? null : JSON.parse(r.result) };
}
