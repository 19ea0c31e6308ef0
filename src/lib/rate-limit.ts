import type { Clock } from '../clock.ts';
import { RateLimitedError } from '../errors.ts';

export interface LimitResult {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Epoch ms when the current window ends. */
  resetAt: number;
}

/**
 * Keys a limiter holds at most. A key costs nothing to make (an email in a sign-in, a WebDAV user name, an IPv6
 * address), so a flood of new ones would otherwise grow the map for a whole window.
 */
const MAX_KEYS = 50_000;

/** In-memory fixed-window counter per key; windows are aligned to multiples of the window length. */
export class FixedWindowLimiter {
  private readonly counts = new Map<string, { windowStart: number; count: number }>();
  private lastSweep = 0;

  constructor(
    readonly limit: number,
    readonly windowMs: number,
    private readonly clock: Clock,
    private readonly maxKeys = MAX_KEYS,
  ) {}

  hit(key: string): LimitResult {
    const now = this.clock.now();
    const windowStart = now - (now % this.windowMs);
    // Also after the clock went back: a sweep waiting for it to pass the last one kept every key until then (a year set back, a year).
    if (now - this.lastSweep > this.windowMs || now < this.lastSweep) this.sweep(windowStart);
    let entry = this.counts.get(key);
    if (!entry || entry.windowStart !== windowStart) {
      // Full: the key counted first goes (a Map iterates in insertion order), so memory stays bounded at O(1) a hit.
      if (!entry && this.counts.size >= this.maxKeys) this.counts.delete(this.counts.keys().next().value!);
      entry = { windowStart, count: 0 };
      this.counts.set(key, entry);
    }
    entry.count++;
    return {
      allowed: entry.count <= this.limit,
      limit: this.limit,
      remaining: Math.max(0, this.limit - entry.count),
      resetAt: windowStart + this.windowMs,
    };
  }

  /** Whether `key` was hit in the current window. */
  seen(key: string): boolean {
    const now = this.clock.now();
    return this.counts.get(key)?.windowStart === now - (now % this.windowMs);
  }

  /** Gives back the hit `counted` (a success that is not to count), if its window is still the current one. */
  release(key: string, counted: LimitResult): void {
    const entry = this.counts.get(key);
    if (entry && entry.windowStart + this.windowMs === counted.resetAt && entry.count > 0) entry.count--;
  }

  /**
   * Runs `check` (is a guess right?) with one try of `key` spent before it, so concurrent guesses cannot all pass a
   * limit none has reached yet: past the limit every guess, the right one too, is 429 until the window ends. A right
   * guess gives its try back; `lockedOut` runs once per window, when the last try is spent on a wrong one.
   */
  async attempt(key: string, check: () => Promise<boolean> | boolean, lockedOut: (counted: LimitResult) => void): Promise<boolean> {
    const counted = this.hit(key);
    if (!counted.allowed) throw new RateLimitedError(rateLimitHeaders(counted, this.clock.now()));
    const ok = await check();
    if (ok) this.release(key, counted);
    else if (counted.remaining === 0) lockedOut(counted);
    return ok;
  }

  reset(key?: string): void {
    if (key === undefined) this.counts.clear();
    else this.counts.delete(key);
  }

  /** Keeps the keys of the current window only: older ones, and any counted while the clock was ahead, go. */
  private sweep(currentWindow: number): void {
    this.lastSweep = currentWindow;
    for (const [key, entry] of this.counts) if (entry.windowStart !== currentWindow) this.counts.delete(key);
  }

  /** Keys held in memory. */
  get size(): number {
    return this.counts.size;
  }
}

export function rateLimitHeaders(result: LimitResult, now: number): Record<string, string> {
  return {
    'RateLimit-Limit': String(result.limit),
    'RateLimit-Remaining': String(result.remaining),
    'RateLimit-Reset': String(Math.ceil(result.resetAt / 1000)),
    'Retry-After': String(Math.max(1, Math.ceil((result.resetAt - now) / 1000))),
  };
}
