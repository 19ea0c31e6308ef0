import type { Fields, Logger } from '../log.ts';

/** While a background loop keeps failing, how often its error line is written again. */
const REMIND_EVERY_MS = 5 * 60_000;

/**
 * The failures of a background loop that runs every few seconds and fails each time while its cause lasts (a full
 * disk wrote the audit batch's error every second, some 3,600 lines an hour): its error line is written when a spell
 * of failures begins, then at most every five minutes with how many failed meanwhile, and one line says when the
 * loop works again. `elapsed` is real time in milliseconds (Clock.elapsed), which setting the wall clock does not move.
 */
export class FailureSpell {
  private since: number | null = null;
  private remindedAt = 0;
  private failures = 0;

  constructor(
    private readonly log: Pick<Logger, 'info' | 'error'>,
    /** What works again, for the line that ends a spell ("the audit batch"). */
    private readonly what: string,
    private readonly elapsed: () => number,
  ) {}

  failed(msg: string, fields: Fields): void {
    const now = this.elapsed();
    this.failures++;
    if (this.since === null) {
      this.since = now;
      this.remindedAt = now;
      this.failures = 1;
      this.log.error(msg, fields);
      return;
    }
    if (now - this.remindedAt < REMIND_EVERY_MS) return;
    this.remindedAt = now;
    this.log.error(msg, { ...fields, failures: this.failures, failingForMinutes: Math.round((now - this.since) / 60_000) });
  }

  /** A round that went through: ends a spell of failures, saying so. */
  succeeded(): void {
    if (this.since === null) return;
    this.log.info(`${this.what} works again`, {
      failures: this.failures,
      failedForSeconds: Math.round((this.elapsed() - this.since) / 1000),
    });
    this.since = null;
  }
}
