import { describe, expect, test } from 'bun:test';
import { retentionDrops } from '../../src/services/versions/versions.ts';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
const NOW = Date.UTC(2026, 10, 27, 12, 0, 0);
const retention = { retentionDays: 30, maxPerFile: 100 };

/** Versions made every `every` ms back from `NOW`, newest first. */
const every = (every: number, count: number) => Array.from({ length: count }, (_, i) => ({ createdAt: NOW - (i + 1) * every }));
const kept = <T>(all: T[], dropped: T[]) => all.filter((v) => !dropped.includes(v));

describe('retentionDrops', () => {
  test('keeps every version of the last hour', () => {
    const versions = every(5 * MINUTE, 11);
    expect(retentionDrops(versions, NOW, retention)).toEqual([]);
  });

  test('keeps the newest of each hour for a day, then the newest of each day up to the retention days, then none', () => {
    const versions = every(10 * MINUTE, 6 * 24 * 40);
    const left = kept(versions, retentionDrops(versions, NOW, retention));
    const ages = left.map((v) => NOW - v.createdAt);
    expect(ages.filter((a) => a < HOUR)).toHaveLength(5);
    const hourly = left.filter((v) => NOW - v.createdAt >= HOUR && NOW - v.createdAt < DAY);
    expect(new Set(hourly.map((v) => Math.floor(v.createdAt / HOUR))).size).toBe(hourly.length);
    expect(hourly.length).toBe(24);
    // The newest of its hour: nothing kept has a newer sibling in the same hour.
    for (const v of hourly)
      expect(
        versions.some(
          (w) =>
            w.createdAt > v.createdAt && Math.floor(w.createdAt / HOUR) === Math.floor(v.createdAt / HOUR) && NOW - w.createdAt >= HOUR,
        ),
      ).toBe(false);
    const daily = left.filter((v) => NOW - v.createdAt >= DAY);
    expect(new Set(daily.map((v) => Math.floor(v.createdAt / DAY))).size).toBe(daily.length);
    expect(daily.every((v) => NOW - v.createdAt < 30 * DAY)).toBe(true);
    expect(daily.length).toBeGreaterThanOrEqual(28);
  });

  test('never more than maxPerFile: the oldest go', () => {
    const versions = every(MINUTE, 50);
    const dropped = retentionDrops(versions, NOW, { retentionDays: 30, maxPerFile: 10 });
    expect(kept(versions, dropped)).toEqual(versions.slice(0, 10));
  });
});
