import type { Clock } from '../clock.ts';
import { RateLimitedError } from '../errors.ts';
import { FixedWindowLimiter, rateLimitHeaders } from './rate-limit.ts';

const MINUTE = 60_000;

/** The limiters of SPEC "Limits", one instance per app. */
export interface Limits {
  general: FixedWindowLimiter;
  auth: FixedWindowLimiter;
  upload: FixedWindowLimiter;
  mfa: FixedWindowLimiter;
  backupCodes: FixedWindowLimiter;
}

export type LimiterName = keyof Limits;

export function createLimits(clock: Clock, generalLimit = 10_000): Limits {
  return {
    general: new FixedWindowLimiter(generalLimit, 15 * MINUTE, clock),
    auth: new FixedWindowLimiter(25, 15 * MINUTE, clock),
    upload: new FixedWindowLimiter(20_000, 30 * MINUTE, clock),
    mfa: new FixedWindowLimiter(5, MINUTE, clock),
    backupCodes: new FixedWindowLimiter(3, 10 * MINUTE, clock),
  };
}

/** Counts a hit; over the limit throws the 429 of SPEC (body `{error}` and the RateLimit headers). */
export function enforceLimit(limiter: FixedWindowLimiter, key: string, clock: Clock): void {
  const result = limiter.hit(key);
  if (!result.allowed) throw new RateLimitedError(rateLimitHeaders(result, clock.now()));
}
