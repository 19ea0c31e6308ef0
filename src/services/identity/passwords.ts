import { Semaphore } from '../../lib/semaphore.ts';

// argon2id at OWASP's memory floor (19 MiB) with 4 passes: ~60-90 ms a check on a 2-core box, and
// concurrent sign-ins cost 19 MiB each rather than the 64 MiB of Bun's default.
const HASH_OPTIONS = { algorithm: 'argon2id', memoryCost: 19456, timeCost: 4 } as const;

// One hash at a time: each holds its 19 MiB while it runs, so a burst of sign-ins queues instead of adding up.
const hashing = new Semaphore(1);

/** Account passwords and link passwords alike. */
export function hashPassword(password: string): Promise<string> {
  return hashing.run(() => Bun.password.hash(password, HASH_OPTIONS));
}

export function verifyPassword(password: string, hash: string): Promise<boolean> {
  return hashing.run(() => Bun.password.verify(password, hash));
}

let dummyHash: Promise<string> | null = null;

/** Spends the same work as a real check, so an unknown email cannot be told apart by timing. */
export async function verifyAgainstDummy(password: string): Promise<false> {
  dummyHash ??= hashPassword('coffer-dummy-password-for-timing');
  await verifyPassword(password, await dummyHash);
  return false;
}
