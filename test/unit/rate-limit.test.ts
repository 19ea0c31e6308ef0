import { describe, expect, test } from 'bun:test';
import { ManualClock } from '../../src/clock.ts';
import { FixedWindowLimiter, rateLimitHeaders } from '../../src/lib/rate-limit.ts';
import { RateLimitedError } from '../../src/errors.ts';

describe('FixedWindowLimiter', () => {
  test('allows the limit per window and per key, then refuses until the window ends', () => {
    const clock = new ManualClock(1_000_000);
    const limiter = new FixedWindowLimiter(3, 60_000, clock);
    expect([1, 2, 3].map(() => limiter.hit('a').allowed)).toEqual([true, true, true]);
    const refused = limiter.hit('a');
    expect(refused.allowed).toBe(false);
    expect(refused.remaining).toBe(0);
    expect(limiter.hit('b').allowed).toBe(true);
    clock.set(refused.resetAt);
    expect(limiter.hit('a').allowed).toBe(true);
  });

  test('after the clock is set back (a year ahead by mistake, then right), the keys counted meanwhile go at the next window, not a year later', () => {
    const clock = new ManualClock(Date.parse('2030-03-01T12:00:00Z'));
    const limiter = new FixedWindowLimiter(10, 60_000, clock);
    clock.jump(365 * 24 * 3_600_000);
    for (let i = 0; i < 1000; i++) limiter.hit(`ahead-${i}`);
    clock.jump(-365 * 24 * 3_600_000);
    limiter.hit('back');
    clock.advance(2 * 60_000);
    limiter.hit('later');
    expect(limiter.size).toBe(1);
  });

  test('a flood of new keys within one window (emails, IPv6 addresses) holds at most maxKeys, the oldest going first; the newest still count', () => {
    const clock = new ManualClock(1_000_000);
    const limiter = new FixedWindowLimiter(2, 60_000, clock, 100);
    for (let i = 0; i < 10_000; i++) limiter.hit(`flood-${i}`);
    expect(limiter.size).toBe(100);
    limiter.hit('flood-9999');
    expect(limiter.hit('flood-9999').allowed).toBe(false);
    // The first ones were let go: counted afresh.
    expect(limiter.hit('flood-0').remaining).toBe(1);
    expect(limiter.size).toBe(100);
    // The default bound: a sign-in flood with a new email each time stays at 50,000 keys.
    const auth = new FixedWindowLimiter(25, 15 * 60_000, clock);
    for (let i = 0; i < 60_000; i++) auth.hit(`203.0.113.7|guess-${i}@example.test`);
    expect(auth.size).toBe(50_000);
  });

  test('release gives a hit back within its window only', () => {
    const clock = new ManualClock(1_000_000);
    const limiter = new FixedWindowLimiter(1, 60_000, clock);
    limiter.release('a', limiter.hit('a'));
    const kept = limiter.hit('a');
    expect(kept.allowed).toBe(true);
    clock.set(kept.resetAt);
    limiter.hit('a');
    limiter.release('a', kept);
    expect(limiter.hit('a').allowed).toBe(false);
  });

  test('429 error carries the body and the four headers', () => {
    const clock = new ManualClock(90_500);
    const limiter = new FixedWindowLimiter(1, 60_000, clock);
    limiter.hit('k');
    const result = limiter.hit('k');
    const err = new RateLimitedError(rateLimitHeaders(result, clock.now()));
    expect(err.status).toBe(429);
    expect(err.body()).toEqual({ error: 'Too many requests, please try again later' });
    expect(err.headers!['RateLimit-Limit']).toBe('1');
    expect(err.headers!['RateLimit-Remaining']).toBe('0');
    expect(err.headers!['RateLimit-Reset']).toBe('120');
    expect(err.headers!['Retry-After']).toBe('30');
    expect(rateLimitHeaders(result, clock.now())['Retry-After']).toBe('30');
  });
});
