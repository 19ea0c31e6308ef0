import { afterAll } from 'bun:test';
import { removeRunRoot } from './helpers/run-root.ts';

process.env.LOG_LEVEL ??= 'silent';
process.on('unhandledRejection', (reason) => {
  throw reason instanceof Error ? reason : new Error(String(reason));
});

/**
 * argon2 costs ~90 ms of CPU a call, most of what seeding an account costs. The seed password
 * (test/helpers/seed.ts) is hashed once per options per process and reused; a check is computed once per
 * password and hash and then answered from memory: a real hash and a real answer, without paying for them again.
 */
const SEED_PASSWORD = 'correct horse battery';
const hash = Bun.password.hash.bind(Bun.password);
const verify = Bun.password.verify.bind(Bun.password);
const seedHashes = new Map<string, Promise<string>>();
const checks = new Map<string, boolean>();
Bun.password.hash = (password, options) => {
  if (password !== SEED_PASSWORD) return hash(password, options);
  const key = JSON.stringify(options ?? null);
  let made = seedHashes.get(key);
  if (!made) {
    made = hash(password, options);
    seedHashes.set(key, made);
    made.catch(() => seedHashes.delete(key));
  }
  return made;
};
Bun.password.verify = async (password, digest, algorithm) => {
  if (typeof password !== 'string' || typeof digest !== 'string') return verify(password, digest, algorithm);
  const key = `${algorithm ?? ''}\0${password}\0${digest}`;
  const known = checks.get(key);
  if (known !== undefined) return known;
  const ok = await verify(password, digest, algorithm);
  checks.set(key, ok);
  return ok;
};

// Every test file's temp dirs are under one root for the run (test/helpers/run-root.ts): it goes once all have run.
afterAll(removeRunRoot);
