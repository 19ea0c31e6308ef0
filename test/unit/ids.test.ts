import { expect, test } from 'bun:test';
import { newId, newItemId } from '../../src/lib/ids.ts';

test('an id never starts with "-" (the CLI would read it as an option), and stays 22 base64url characters', () => {
  // A leading "-" came in 1 id of 64: 20,000 ids miss it by chance with odds of about e^-312.
  const ids = Array.from({ length: 20_000 }, newId);
  expect(ids.filter((id) => id.startsWith('-'))).toEqual([]);
  expect(ids.every((id) => /^[A-Za-z0-9_-]{22}$/.test(id))).toBe(true);
  expect(new Set(ids).size).toBe(ids.length);
});

test('item ids are 22 base64url characters, never start with "-", and each sorts after the one before', () => {
  const ids = Array.from({ length: 20_000 }, () => newItemId());
  expect(ids.filter((id) => !/^[A-Za-z0-9_-]{22}$/.test(id))).toEqual([]);
  expect(ids.filter((id) => id.startsWith('-'))).toEqual([]);
  expect(new Set(ids).size).toBe(ids.length);
  // Thousands a millisecond: most share their millisecond with the one before, and still sort after it.
  expect(ids.filter((id, i) => i > 0 && !(Buffer.from(id) > Buffer.from(ids[i - 1] ?? '')))).toEqual([]);
  expect(ids.filter((id, i) => i > 0 && id.slice(0, 9) === ids[i - 1]?.slice(0, 9)).length).toBeGreaterThan(0);
});

test('an item id sorts by the millisecond it was made, and keeps increasing when the clock steps back', () => {
  const later = Date.now() + 1_000;
  const a = newItemId(later);
  const b = newItemId(later + 1);
  const c = newItemId(later - 60_000);
  const d = newItemId(later - 60_000);
  expect([a, b, c, d]).toEqual([a, b, c, d].sort());
  expect(new Set([a, b, c, d]).size).toBe(4);
  // The first 9 characters are the fixed bits and the millisecond: equal for the same one, ordered across ones.
  expect(c.slice(0, 9)).toBe(b.slice(0, 9));
  expect(a.slice(0, 9) < b.slice(0, 9)).toBe(true);
  // The fixed bits 0001 and the millisecond are the first 52 of the 132 bits the 22 characters hold.
  const alphabet = '-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz';
  const bits = [...b].reduce((n, ch) => (n << 6n) | BigInt(alphabet.indexOf(ch)), 0n);
  expect(bits >> 128n).toBe(1n);
  expect(Number((bits >> 80n) & ((1n << 48n) - 1n))).toBe(later + 1);
});
