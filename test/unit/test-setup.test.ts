import { describe, expect, test } from 'bun:test';
import { hashPassword, verifyPassword } from '../../src/services/identity/passwords.ts';

// test/setup.ts, the suite's preload: argon2 paid once for what every test file repeats, the answers unchanged.
describe('the suite preload’s password hashes', () => {
  test('the seed password is hashed once per process; other passwords get a hash of their own; every check answers as argon2 does', async () => {
    const seed = 'correct horse battery';
    const first = await hashPassword(seed);
    expect(first).toStartWith('$argon2id$v=19$m=19456,t=4,');
    expect(await hashPassword(seed)).toBe(first);
    const other = await hashPassword('another password');
    expect(other).not.toBe(await hashPassword('another password'));
    for (let i = 0; i < 2; i++) {
      expect(await verifyPassword(seed, first)).toBe(true);
      expect(await verifyPassword('correct horse batter', first)).toBe(false);
      expect(await verifyPassword('another password', other)).toBe(true);
      expect(await verifyPassword(seed, other)).toBe(false);
    }
  });
});
