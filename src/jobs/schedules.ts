import type { Database } from 'bun:sqlite';
import type { Clock } from '../clock.ts';
import type { Db } from '../db/client.ts';
import type { JobQueue } from './queue.ts';

export interface ScheduleSpec {
  kind: string;
  intervalMs: number;
  payload?: unknown;
  accountId?: string | null;
  /** First run; defaults to one interval from now. */
  firstRunAt?: number;
}

/**
 * Durable recurring work. A due row enqueues one job keyed `<name>:<window start>`, so a double tick
 * or a restart in the middle cannot run a window twice; missed windows collapse into one run.
 */
export class Schedules {
  private readonly sqlite: Database;

  constructor(
    db: Db,
    private readonly queue: JobQueue,
    private readonly clock: Clock,
  ) {
    this.sqlite = db.$client;
  }

  /** Creates the schedule, or updates its interval and payload keeping its next run time. */
  ensure(name: string, spec: ScheduleSpec): void {
    const now = this.clock.now();
    this.sqlite
      .query(
        `INSERT INTO schedules (name, kind, payload, account_id, interval_ms, next_run_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (name) DO UPDATE SET kind = excluded.kind, payload = excluded.payload, account_id = excluded.account_id,
           interval_ms = excluded.interval_ms, next_run_at = MIN(next_run_at, excluded.next_run_at)`,
      )
      .run(
        name,
        spec.kind,
        JSON.stringify(spec.payload ?? null),
        spec.accountId ?? null,
        spec.intervalMs,
        spec.firstRunAt ?? now + spec.intervalMs,
        now,
      );
  }

  remove(name: string): boolean {
    return this.sqlite.query('DELETE FROM schedules WHERE name = ?').run(name).changes > 0;
  }

  get(name: string): { name: string; kind: string; intervalMs: number; nextRunAt: number } | null {
    return (
      this.sqlite
        .query<{ name: string; kind: string; intervalMs: number; nextRunAt: number }, [string]>(
          'SELECT name, kind, interval_ms AS intervalMs, next_run_at AS nextRunAt FROM schedules WHERE name = ?',
        )
        .get(name) ?? null
    );
  }

  /** Enqueues a job for every due schedule and moves each to its next window. Returns how many fired. */
  runDue(): number {
    const now = this.clock.now();
    return this.sqlite
      .transaction(() => {
        const due = this.sqlite
          .query<
            { name: string; kind: string; payload: string; account_id: string | null; interval_ms: number; next_run_at: number },
            [number]
          >('SELECT * FROM schedules WHERE next_run_at <= ?')
          .all(now);
        for (const s of due) {
          this.queue.insert(s.kind, JSON.parse(s.payload), { accountId: s.account_id, idempotencyKey: `${s.name}:${s.next_run_at}` });
          const missed = Math.floor((now - s.next_run_at) / s.interval_ms) + 1;
          this.sqlite.query('UPDATE schedules SET next_run_at = ? WHERE name = ?').run(s.next_run_at + missed * s.interval_ms, s.name);
        }
        return due.length;
      })
      .immediate();
  }

  nextDueAt(): number | null {
    return this.sqlite.query<{ t: number | null }, []>('SELECT MIN(next_run_at) AS t FROM schedules').get()?.t ?? null;
  }
}
