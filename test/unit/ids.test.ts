import { expect, test } from 'bun:test';
import { newId } from '../../src/lib/ids.ts';

test('an id never starts with "-" (the CLI would read it as an option), and stays 22 base64url characters', () => {
  // A leading "-" came in 1 id of 64: 20,000 ids miss it by chance with odds of about e^-312.
  const ids = Array.from({ length: 20_000 }, newId);
  expect(ids.filter((id) => id.startsWith('-'))).toEqual([]);
  expect(ids.every((id) => /^[A-Za-z0-9_-]{22}$/.test(id))).toBe(true);
  expect(new Set(ids).size).toBe(ids.length);
});
