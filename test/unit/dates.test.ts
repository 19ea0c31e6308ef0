import { describe, expect, test } from 'bun:test';
import { isoString, longUtcDay, utcString } from '../../src/lib/dates.ts';

describe('utcString and isoString', () => {
  test('match toUTCString and toISOString for edges and 200,000 random times', () => {
    const edges = [
      0,
      1,
      999,
      1000,
      86_399_999,
      86_400_000,
      951_782_400_000,
      951_868_799_999,
      4_107_542_399_999,
      4_107_542_400_000,
      1_704_067_200_000,
      253_402_300_799_999,
      253_402_300_800_000,
      -1,
      -86_400_001,
      8.64e15,
      -8.64e15,
      1.5,
      Number.NaN,
    ];
    const times = [...edges];
    for (let i = 0; i < 200_000; i++) times.push(Math.floor(Math.random() * 253_402_300_800_000));
    for (let i = 0; i < 10_000; i++) times.push(Math.floor((Math.random() - 0.5) * 8e15));
    for (const t of times) {
      const date = new Date(t);
      expect(utcString(t)).toBe(date.toUTCString());
      if (Number.isNaN(date.getTime())) expect(() => isoString(t)).toThrow(RangeError);
      else expect(isoString(t)).toBe(date.toISOString());
    }
  });

  test('match them for times in the day formatted just before, a day later and back again', () => {
    const start = 1_704_067_200_000 - 3_600_000;
    const times: number[] = [];
    // Seconds apart across a midnight, then days apart, then back to the first day (each reuses or replaces the last day's text).
    for (let i = 0; i < 10_000; i++) times.push(start + i * 997);
    for (let i = 0; i < 1_000; i++) times.push(start + i * 86_399_999);
    times.push(start, start + 1, 0, start);
    for (const t of times) {
      expect(utcString(t)).toBe(new Date(t).toUTCString());
      expect(isoString(t)).toBe(new Date(t).toISOString());
    }
  });
});

describe('longUtcDay', () => {
  test("matches Intl's en-GB long UTC day for edges, every day of 2024–2027 and 50,000 random times", () => {
    const intl = new Intl.DateTimeFormat('en-GB', { day: 'numeric', month: 'long', year: 'numeric', timeZone: 'UTC' });
    const times = [
      0, 1, 86_399_999, 86_400_000, 951_782_400_000, 4_107_542_399_999, 253_402_300_799_999, 253_402_300_800_000, -1, 8.64e15, -8.64e15,
      1.5,
    ];
    for (let day = 0; day < 4 * 366; day++) times.push(1_704_067_200_000 + day * 86_400_000 + 43_200_000);
    for (let i = 0; i < 50_000; i++) times.push(Math.floor(Math.random() * 253_402_300_800_000));
    for (const t of times) expect(longUtcDay(t)).toBe(intl.format(t));
    expect(() => longUtcDay(Number.NaN)).toThrow(RangeError);
  });
});
