/** Work between two turns of the event loop. */
const TURN_MS = 10;

/** A long operation in batches: each `yield` ends one, its transaction committed. */
export type Steps<T> = Generator<void, T, undefined>;

/** Every batch at once: for callers inside a request, whose trees are small or who hold the request anyway. */
export function runAll<T>(steps: Steps<T>): T {
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
  }
}

/** The batches with a turn of the event loop between two, so a job over a big tree does not hold every request meanwhile. */
export async function runInTurns<T>(steps: Steps<T>): Promise<T> {
  let turned = performance.now();
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
    // Not after every small step: a turn costs about a millisecond, and an account of 50,000 top-level files is 50,000 steps.
    if (performance.now() - turned >= TURN_MS) {
      await nextTurn();
      turned = performance.now();
    }
  }
}

/** Resolves after a turn of the event loop: timers and other requests' I/O run first (Bun runs immediates queued meanwhile in the same turn, so timers waited 2-4 batches). */
export const nextTurn = (): Promise<void> => new Promise<void>((resolve) => setTimeout(resolve, 0));
