import type { Clock } from '../clock.ts';
import type { JobsRepo } from '../db/repos/jobs.ts';
import type { JobSpec, PayloadOf } from './catalog.ts';
import type { JobQueue } from './queue.ts';

export interface ScheduleSpec<J extends JobSpec> {
  job: J;
  intervalMs: number;
  payload?: PayloadOf<J>;
  accountId?: string | null;
  /** First run; defaults to one interval from now. */
  firstRunAt?: number;
}

/**
 * Durable recurring work. A due row enqueues one job keyed `<name>:<window start>`, so a double tick
 * or a restart in the middle cannot run a window twice; missed windows collapse into one run.
 */
export class Schedules {
  private lastNow = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly repo: JobsRepo,
    private readonly queue: JobQueue,
    private readonly clock: Clock,
    private readonly inTransaction: <T>(fn: () => T) => T,
  ) {}

  /** Creates the schedule, or updates its interval and payload keeping its next run time. */
  ensure<J extends JobSpec>(name: string, spec: ScheduleSpec<J>): void {
    const now = this.clock.now();
    this.repo.upsertSchedule({
      name,
      kind: spec.job.name,
      payload: JSON.stringify(spec.payload ?? null),
      accountId: spec.accountId ?? null,
      intervalMs: spec.intervalMs,
      nextRunAt: spec.firstRunAt ?? now + spec.intervalMs,
      createdAt: now,
    });
  }

  remove(name: string): boolean {
    return this.repo.removeSchedule(name);
  }

  get(name: string): { name: string; kind: string; intervalMs: number; nextRunAt: number } | null {
    const row = this.repo.schedule(name);
    return row ? { name: row.name, kind: row.kind, intervalMs: row.intervalMs, nextRunAt: row.nextRunAt } : null;
  }

  /** Enqueues a job for every due schedule and moves each to its next window. Returns how many fired. */
  runDue(): number {
    const now = this.clock.now();
    if (now < this.lastNow) this.clockWentBack(now, this.lastNow - now);
    this.lastNow = now;
    // A read first: a poll with nothing due does not wait for a write lock another thread holds (the index writer's).
    const next = this.repo.nextDueAt();
    if (next === null || next > now) return 0;
    return this.inTransaction(() => {
      const due = this.repo.dueSchedules(now);
      for (const s of due) {
        this.queue.insertRaw(s.kind, JSON.parse(s.payload), { accountId: s.accountId, idempotencyKey: `${s.name}:${s.nextRunAt}` });
        const missed = Math.floor((now - s.nextRunAt) / s.intervalMs) + 1;
        this.repo.setNextRun(s.name, s.nextRunAt + missed * s.intervalMs);
      }
      return due.length;
    });
  }

  /**
   * The wall clock went back (NTP undoing a jump ahead): windows and retries set from the later time
   * would wait that much longer (a daily backup a year), so each comes back with it.
   */
  private clockWentBack(now: number, by: number): void {
    this.inTransaction(() => {
      this.repo.realignSchedules(now);
      this.repo.forgetWindowsRunAhead(now);
      this.repo.bringBackWaiting(now, by);
    });
  }

  nextDueAt(): number | null {
    return this.repo.nextDueAt();
  }
}
