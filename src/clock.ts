import type { Logger } from './log.ts';

/** Time source injected everywhere so tests can move time without sleeping. */
export interface Clock {
  /** The wall clock: what the host says the time is, which NTP or an administrator may set forward or back. */
  now(): number;
  /** Milliseconds of real time from an arbitrary start: it never moves when the wall clock is set. */
  elapsed(): number;
}

export const systemClock: Clock = { now: () => Date.now(), elapsed: () => performance.now() };

/** A clock tests can set and advance. */
export class ManualClock implements Clock {
  private passed = 0;
  constructor(private ms = Date.now()) {}
  now(): number {
    return this.ms;
  }
  elapsed(): number {
    return this.passed;
  }
  /** Time passes up to `ms`; an earlier `ms` is the wall clock set back. */
  set(ms: number): void {
    this.passed += Math.max(0, ms - this.ms);
    this.ms = ms;
  }
  advance(ms: number): void {
    this.ms += ms;
    this.passed += ms;
  }
  /** The wall clock is set by `ms` (NTP, a wrong real-time clock) while no time passes. */
  jump(ms: number): void {
    this.ms += ms;
  }
}

/** A step of the wall clock ahead of real time beyond this is a jump, not drift. */
const JUMP_MS = 60_000;

/**
 * The time retention reads (trash, versions, expired links, sessions, the audit log and the change log):
 * the wall clock, except that a jump forward while the server runs is not followed, so a clock set a year
 * ahead by mistake deletes nothing before it comes back. A jump back is followed at once (it deletes less),
 * and so is a jump forward from a time before the newest one the database had recorded at start: that is
 * a clock without a battery being set right after boot.
 */
export class RetentionClock {
  private wall: number;
  private at: number;
  private warned = false;

  constructor(
    private readonly clock: Clock,
    /** The newest time the database recorded before this start (null when it has none). */
    private readonly recordedUpTo: number | null,
    private readonly log: Pick<Logger, 'warn'>,
  ) {
    this.wall = clock.now();
    this.at = clock.elapsed();
  }

  now(): number {
    const wall = this.clock.now();
    const elapsed = this.clock.elapsed();
    const steady = this.wall + (elapsed - this.at);
    if (wall - steady <= JUMP_MS || (this.recordedUpTo !== null && this.wall < this.recordedUpTo)) {
      this.wall = wall;
      this.at = elapsed;
      this.warned = false;
      return wall;
    }
    if (!this.warned) {
      this.warned = true;
      this.log.warn(
        'the clock jumped forward: retention counts from the time before the jump until the clock comes back or the server restarts',
        {
          jumpedMs: wall - steady,
          retentionTime: new Date(steady).toISOString(),
        },
      );
    }
    return steady;
  }
}
