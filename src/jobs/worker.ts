import type { Clock } from '../clock.ts';
import { BUSY_RETRY_MS, BusyRounds } from '../db/busy.ts';
import { isDatabaseBusy } from '../errors.ts';
import type { Logger } from '../log.ts';
import { PermanentJobError, RetryLaterError, type JobRegistry } from './registry.ts';
import type { ClaimKinds } from '../db/repos/jobs.ts';
import type { Job, JobQueue } from './queue.ts';
import type { Schedules } from './schedules.ts';

export interface WorkerOptions {
  queue: JobQueue;
  registry: JobRegistry;
  schedules: Schedules;
  clock: Clock;
  log: Logger;
  /**
   * Jobs run at once (jobs of one account still run one at a time, in order); a kind with slots of its own
   * (JobSpec.ownSlots) runs beside these, up to that many.
   */
  concurrency: number;
  /** How often due schedules and delayed retries are looked for; enqueues wake the worker at once. */
  pollMs?: number;
}

const MAX_BACKOFF_MS = 5 * 60_000;
const DEFAULT_POLL_MS = 1000;

export function retryDelay(attempt: number): number {
  return Math.min(1000 * 2 ** Math.max(0, attempt - 1), MAX_BACKOFF_MS);
}

/** The in-process worker loop: claims due jobs up to the concurrency limit and runs their handlers. */
export class Worker {
  private readonly running = new Map<string, Promise<void>>();
  /** Jobs running in each group of slots: the shared ones (key '') and each kind with its own. */
  private readonly inSlots = new Map<string, number>();
  private readonly abort = new AbortController();
  private timer: ReturnType<typeof setInterval> | null = null;
  /** Wake-ups set for jobs queued to run before the next poll. */
  private readonly dueTimers = new Set<ReturnType<typeof setTimeout>>();
  private unsubscribe: (() => void) | null = null;
  private wakeScheduled = false;
  private stopped = false;
  private readonly busy: BusyRounds;
  // Apart from the polls': a poll that claims nothing can succeed while a job's state still waits for the lock.
  private readonly busyStates: BusyRounds;

  private readonly pollMs: number;

  constructor(private readonly opts: WorkerOptions) {
    this.pollMs = opts.pollMs ?? DEFAULT_POLL_MS;
    this.busy = new BusyRounds(opts.log, 'job worker');
    this.busyStates = new BusyRounds(opts.log, 'job states');
  }

  get activeCount(): number {
    return this.running.size;
  }

  start(): void {
    if (this.timer || this.stopped) return;
    this.opts.queue.available = true;
    this.unsubscribe = this.opts.queue.onEnqueue((runAt) => this.wakeAt(runAt));
    this.timer = setInterval(() => this.wake(), this.pollMs);
    this.wake();
  }

  /** Runs everything due now (including jobs that due ones enqueue) and resolves when nothing is left. For tests and the CLI. */
  async drain(): Promise<void> {
    for (;;) {
      // A stopped worker claims nothing more: what a shutdown deferred runs after the restart.
      if (!this.stopped) this.fill();
      if (this.running.size === 0) return;
      await Promise.race(this.running.values());
    }
  }

  /** Stops claiming, lets running jobs finish within `graceMs`, then aborts them. */
  async stop(graceMs = 10_000): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.opts.queue.available = false;
    if (this.timer) clearInterval(this.timer);
    for (const t of this.dueTimers) clearTimeout(t);
    this.dueTimers.clear();
    this.unsubscribe?.();
    const settled = Promise.allSettled(this.running.values());
    let timeout: ReturnType<typeof setTimeout> | undefined;
    const graceOver = new Promise<'timeout'>((resolve) => (timeout = setTimeout(() => resolve('timeout'), graceMs)));
    if ((await Promise.race([settled, graceOver])) === 'timeout') {
      this.abort.abort(new Error('worker stopping'));
      // A handler that ignores the signal is left behind; its job is re-run after the restart.
      await Promise.race([settled, new Promise((r) => setTimeout(r, 1000))]);
    }
    clearTimeout(timeout);
  }

  /** Wakes the worker when a job queued for `runAt` is due: at once, or then if that is before the next poll. */
  private wakeAt(runAt: number): void {
    const delay = runAt - this.opts.clock.now();
    if (delay <= 0) return this.wake();
    if (delay >= this.pollMs) return;
    const timer = setTimeout(() => {
      this.dueTimers.delete(timer);
      this.wake();
    }, delay);
    this.dueTimers.add(timer);
  }

  private wake(): void {
    // Not started (tests driving drain()): nothing runs behind the caller's back.
    if (this.wakeScheduled || this.stopped || !this.timer) return;
    this.wakeScheduled = true;
    // Deferred: enqueue may be called inside a database transaction.
    setTimeout(() => {
      this.wakeScheduled = false;
      if (!this.stopped) this.fill();
    }, 0);
  }

  private fill(): void {
    try {
      // A poll that found the database busy claimed nothing: the next poll or wake-up claims it.
      this.busy.run(() => {
        this.opts.schedules.runDue();
        const own = this.opts.registry.kinds().flatMap((kind) => {
          const slots = this.opts.registry.get(kind)!.spec.ownSlots;
          return slots ? [{ kind, slots }] : [];
        });
        this.claimInto('', this.opts.concurrency, { except: own.map((o) => o.kind) });
        for (const { kind, slots } of own) this.claimInto(kind, slots, { only: kind });
      }, undefined);
    } catch (err) {
      this.opts.log.error('job queue error', { err: err instanceof Error ? (err.stack ?? err.message) : String(err) });
    }
  }

  /** Claims and starts jobs of `kinds` while the group `group` has fewer than `slots` running. */
  private claimInto(group: string, slots: number, kinds: ClaimKinds): void {
    while ((this.inSlots.get(group) ?? 0) < slots) {
      const job = this.opts.queue.claim(kinds);
      if (!job) break;
      this.inSlots.set(group, (this.inSlots.get(group) ?? 0) + 1);
      const run = this.execute(job)
        // A state that could not be written for another reason (a full disk, an I/O error) leaves the job `active`,
        // requeued at the next start; the error must not end the process.
        .catch((err) =>
          this.opts.log.error('job state not written', {
            jobId: job.id,
            kind: job.kind,
            err: err instanceof Error ? (err.stack ?? err.message) : String(err),
          }),
        )
        .finally(() => {
          this.running.delete(job.id);
          this.inSlots.set(group, this.inSlots.get(group)! - 1);
          this.wake();
        });
      this.running.set(job.id, run);
    }
  }

  private async execute(job: Job): Promise<void> {
    const { queue, registry, clock, log } = this.opts;
    const def = registry.get(job.kind);
    const started = performance.now();
    // The job's state is written once the database lets it: a job left `active` would hold back its account's later jobs, and one marked failed would run twice.
    const settle = (write: () => void) => this.busyStates.until(write, () => this.abort.signal.aborted);
    try {
      if (!def) throw new PermanentJobError(`no handler for job kind ${job.kind}`);
      const parsed = def.spec.payload.safeParse(job.payload);
      if (!parsed.success) throw new PermanentJobError(`invalid payload for ${job.kind}: ${parsed.error.message}`);
      const result = await def.handle(parsed.data, {
        job,
        signal: this.abort.signal,
        addProgress: (n) => queue.addProgress(job.id, n),
        totalProgress: () => queue.progress(job.id),
      });
      await settle(() => queue.complete(job.id, result ?? null));
      log.debug('job completed', { jobId: job.id, kind: job.kind, ms: Math.round(performance.now() - started) });
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      if (err instanceof RetryLaterError) {
        await settle(() => queue.defer(job.id, clock.now() + err.delayMs));
        return;
      }
      if (this.abort.signal.aborted) {
        // Interrupted by shutdown: leave it to run again after the restart, without spending the attempt (still `active`
        // when the database is busy: the restart requeues it all the same).
        this.busyStates.run(() => queue.defer(job.id, clock.now()), undefined);
        return;
      }
      if (isDatabaseBusy(err)) {
        // Not the job's failure: what it wrote rolled back, and it runs again without spending the attempt.
        log.warn('job found the database busy, will run again', { jobId: job.id, kind: job.kind, attempt: job.attempts });
        await settle(() => queue.defer(job.id, clock.now() + BUSY_RETRY_MS));
        return;
      }
      const final = err instanceof PermanentJobError || job.attempts >= job.maxAttempts;
      await settle(() => queue.fail(job.id, message, final ? null : clock.now() + retryDelay(job.attempts)));
      log[final ? 'error' : 'warn'](final ? 'job failed' : 'job failed, will retry', {
        jobId: job.id,
        kind: job.kind,
        attempt: job.attempts,
        err: err instanceof Error ? (err.stack ?? message) : message,
      });
    }
  }
}
