import type { Clock } from '../../clock.ts';
import { BusyRounds } from '../../db/busy.ts';
import type { ItemsRepo } from '../../db/repos/items.ts';
import type { Logger } from '../../log.ts';
import { FailureSpell } from '../../lib/failure-spell.ts';

const ACCESS_WRITE_INTERVAL_MS = 3600_000;
const FLUSH_EVERY_MS = 5_000;
const FLUSH_AT = 500;

/**
 * accessedAt, written behind (docs/compatibility.md › Files): a read marks an item only when its stored value is an hour old
 * or more, and marks are written in one transaction per batch, not one write per request.
 */
export class AccessTracker {
  private readonly pending = new Map<string, number>();
  private timer: ReturnType<typeof setInterval> | null = null;
  private stopped = false;
  private readonly busy: BusyRounds;
  private readonly failures: FailureSpell;

  constructor(
    private readonly items: ItemsRepo,
    private readonly clock: Clock,
    log: Logger,
  ) {
    this.busy = new BusyRounds(log, 'access times');
    this.failures = new FailureSpell(log, 'writing access times', () => clock.elapsed());
  }

  touch(rows: Iterable<{ id: string; accessedAt: number }>): void {
    const now = this.clock.now();
    for (const row of rows) {
      if (now - row.accessedAt >= ACCESS_WRITE_INTERVAL_MS) this.pending.set(row.id, now);
    }
    if (this.pending.size >= FLUSH_AT) this.flush();
    else if (this.pending.size > 0) this.flushLater();
  }

  private flushLater(): void {
    if (this.timer || this.stopped) return;
    this.timer = setInterval(() => this.flushInBackground(), FLUSH_EVERY_MS);
    this.timer.unref?.();
  }

  /** Writes pending marks; called by the timer, before reads that order by access, and on shutdown. */
  flush(): void {
    if (this.timer && this.pending.size === 0) {
      clearInterval(this.timer);
      this.timer = null;
    }
    if (this.pending.size === 0) return;
    const batch = [...this.pending];
    this.pending.clear();
    if (this.busy.run(() => (this.items.markAccessed(batch), true), false)) {
      this.failures.succeeded();
      return;
    }
    // Nothing was written: the marks wait for the next flush (the timer runs on), a newer mark of an item kept over its older one.
    for (const [id, at] of batch) if (!this.pending.has(id)) this.pending.set(id, at);
    this.flushLater();
  }

  /**
   * The timer's flush: an error other than a busy database (a full disk) drops the marks, as a throw here would end the
   * process, with a line when such failures begin and then at most every five minutes.
   */
  private flushInBackground(): void {
    try {
      this.flush();
    } catch (err) {
      this.failures.failed('access times not written', { err: err instanceof Error ? err.message : String(err) });
    }
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.flush();
  }
}
