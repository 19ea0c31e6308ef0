import type { Clock } from '../clock.ts';
import type { RateLimits } from '../config.ts';
import { RateLimitedError } from '../errors.ts';
import { limitAddress } from '../lib/ip.ts';
import { FixedWindowLimiter, type LimitResult, rateLimitHeaders } from '../lib/rate-limit.ts';

const MINUTE = 60_000;
/** Login flows a client address may start per 15 minutes, and polls it may make (one a second). */
const LOGIN_FLOW_STARTS = 30;
const LOGIN_FLOW_POLLS = 900;

/** The limiters of docs/api.md › Limits, one instance per app; how many each allows is configured (that table's by default). */
export interface Limits {
  general: FixedWindowLimiter;
  auth: FixedWindowLimiter;
  upload: FixedWindowLimiter;
  mfa: FixedWindowLimiter;
  backupCodes: FixedWindowLimiter;
  /** Password hashes (argon2, real or dummy) per client address, whichever email they are for. */
  passwordHashes: FixedWindowLimiter;
  /** Members added (each looks an email up) per account, its sub-users included. */
  memberLookup: FixedWindowLimiter;
  /** Nextcloud login flows started per client address. */
  loginFlowStart: FixedWindowLimiter;
  /** Polls of Nextcloud login flows per client address. */
  loginFlowPoll: FixedWindowLimiter;
  /** WebDAV Basic secrets refused this window, per address and email, refused again unchecked (a set: one hit is enough). */
  wrongSecrets: FixedWindowLimiter;
}

export type LimiterName = keyof Limits;

export function createLimits(clock: Clock, counts: RateLimits): Limits {
  return {
    general: new FixedWindowLimiter(counts.general, 15 * MINUTE, clock),
    auth: new FixedWindowLimiter(counts.auth, 15 * MINUTE, clock),
    upload: new FixedWindowLimiter(counts.upload, 30 * MINUTE, clock),
    mfa: new FixedWindowLimiter(counts.mfa, MINUTE, clock),
    backupCodes: new FixedWindowLimiter(counts.backupCodes, 10 * MINUTE, clock),
    passwordHashes: new FixedWindowLimiter(counts.passwordHashes, MINUTE, clock),
    memberLookup: new FixedWindowLimiter(counts.memberLookups, 15 * MINUTE, clock),
    loginFlowStart: new FixedWindowLimiter(LOGIN_FLOW_STARTS, 15 * MINUTE, clock),
    loginFlowPoll: new FixedWindowLimiter(LOGIN_FLOW_POLLS, 15 * MINUTE, clock),
    wrongSecrets: new FixedWindowLimiter(1, 15 * MINUTE, clock),
  };
}

/** Counts a hit; over the limit throws the 429 of docs/api.md › Errors (body `{error}` and the RateLimit headers). */
export function enforceLimit(limiter: FixedWindowLimiter, key: string, clock: Clock): LimitResult {
  const result = limiter.hit(key);
  if (!result.allowed) throw new RateLimitedError(rateLimitHeaders(result, clock.now()));
  return result;
}

/** One password hash from the client address's budget, spent before the hash; 429 once it is used up. */
export function spendPasswordHash(limits: Limits, ip: string, clock: Clock): void {
  enforceLimit(limits.passwordHashes, limitAddress(ip), clock);
}
