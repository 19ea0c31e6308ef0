import { test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';

/** Where skipped tests are written, one JSON line each, for `scripts/run-tests.ts` to list at the end of `npm test`. */
export const SKIP_LOG = path.join(import.meta.dir, '..', '..', '.test-skips');

const inCi = () => process.env.CI === 'true';

function failure(what: string, missing: string): Error {
  return new Error(`${what} cannot run here: ${missing}. In CI a skipped test is a failure: .ci/run must install it.`);
}

function record(what: string, missing: string): void {
  fs.appendFileSync(SKIP_LOG, `${JSON.stringify({ test: what, reason: missing })}\n`);
  console.warn(`skipping ${what}: ${missing}`);
}

/**
 * Whether the tests named `what` must be skipped because this machine lacks something (`missing` says
 * what, and how to install it; null when nothing is missing). A skip is recorded for the closing list of
 * `npm test`; in CI it is not a skip but a failing test, so a green run never hides a missing install step.
 */
export function skipWithout(missing: string | null, what: string): boolean {
  if (missing === null) return false;
  if (inCi()) {
    test(`${what} (its prerequisite)`, () => {
      throw failure(what, missing);
    });
  } else {
    record(what, missing);
  }
  return true;
}

/** The same for a check that learns only while running that it cannot be made: outside CI it records the skip (the caller then returns), in CI it throws. */
export function skipHere(what: string, missing: string): void {
  if (inCi()) throw failure(what, missing);
  record(what, missing);
}
