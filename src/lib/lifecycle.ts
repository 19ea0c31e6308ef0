/** Something the server starts in order and stops in reverse order: a check, a sweep, a timer loop, a listener. */
export interface Lifecycle {
  name: string;
  start?(): void | Promise<void>;
  /** `graceMs` bounds how long work in flight may take to finish. */
  stop?(graceMs: number): void | Promise<void>;
}

/** Starts each in order; when one fails, those already started are stopped (in reverse) and its error is thrown. */
export async function startAll(lifecycles: readonly Lifecycle[]): Promise<void> {
  for (const [i, lifecycle] of lifecycles.entries()) {
    try {
      await lifecycle.start?.();
    } catch (err) {
      await stopAll(lifecycles.slice(0, i), 0);
      throw err;
    }
  }
}

/** Stops each in reverse order of starting. */
export async function stopAll(lifecycles: readonly Lifecycle[], graceMs: number): Promise<void> {
  for (const lifecycle of lifecycles.toReversed()) await lifecycle.stop?.(graceMs);
}
