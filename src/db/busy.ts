import { isDatabaseBusy } from '../errors.ts';
import type { Logger } from '../log.ts';

/** How long a background write that found the database busy waits before it is tried again. */
export const BUSY_RETRY_MS = 1000;

/**
 * The rounds of one background loop (the audit batch, the webhook dispatcher, the read marks written behind, the
 * content indexer, the job worker's polls and its job states): a round that found the database busy has rolled back
 * whole and is simply run again later, so it is neither an error nor the work's failure. One warning when a spell
 * of busy rounds begins, one line when it ends.
 */
export class BusyRounds {
  private busySince: number | null = null;

  constructor(
    private readonly log: Logger,
    private readonly what: string,
  ) {}

  /** `round`'s result, or `whenBusy` when it found the database busy; any other error is thrown as before. */
  run<T>(round: () => T, whenBusy: T): T {
    let result: T;
    try {
      result = round();
    } catch (err) {
      if (!this.failed(err)) throw err;
      return whenBusy;
    }
    this.succeeded();
    return result;
  }

  /** Tries `write` until it is done, BUSY_RETRY_MS apart while the database is busy; false when `stopped` first. */
  async until(write: () => void, stopped: () => boolean): Promise<boolean> {
    for (;;) {
      if (this.run(() => (write(), true), false)) return true;
      await new Promise((resolve) => setTimeout(resolve, BUSY_RETRY_MS));
      if (stopped()) return false;
    }
  }

  /** For a round run elsewhere (an asynchronous one): whether `err` is the database being busy, logged as `run` logs it. */
  failed(err: unknown): boolean {
    if (!isDatabaseBusy(err)) return false;
    if (this.busySince !== null) return true;
    this.busySince = performance.now();
    this.log.warn('database busy', {
      what: this.what,
      err: err instanceof Error ? err.message : String(err),
      note: 'another connection holds the write lock past the busy timeout; the work is kept and tried again',
    });
    return true;
  }

  /** A round that went through: ends a busy spell. */
  succeeded(): void {
    if (this.busySince === null) return;
    this.log.info('database free again', { what: this.what, busyMs: Math.round(performance.now() - this.busySince) });
    this.busySince = null;
  }
}
