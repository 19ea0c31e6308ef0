// OWASP's argon2id minimum (19 MiB, 2 passes): ~45 ms on the target box instead of Bun's ~160 ms default.
const HASH_OPTIONS = { algorithm: 'argon2id', memoryCost: 19456, timeCost: 2 } as const;

export function hashPassword(password: string): Promise<string> {
  return Bun.password.hash(password, HASH_OPTIONS);
}

export function verifyPassword(password: string, hash: string): Promise<boolean> {
  return Bun.password.verify(password, hash);
}

let dummyHash: Promise<string> | null = null;

/** Spends the same work as a real check, so an unknown email cannot be told apart by timing. */
export async function verifyAgainstDummy(password: string): Promise<false> {
  dummyHash ??= hashPassword('coffer-dummy-password-for-timing');
  await Bun.password.verify(password, await dummyHash);
  return false;
}
