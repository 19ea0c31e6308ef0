interface EventuallyOptions {
  timeoutMs?: number;
  intervalMs?: number;
  /** The error when the check still answers `false` at the deadline ("… within N ms" is added). */
  message?: string;
}

/**
 * Runs `check` until it neither throws nor returns `false` (an assertion that holds, a condition that is
 * met, a value that is ready) and returns what it returned; at the deadline rethrows its last failure.
 * The default deadline is generous: the suite runs files side by side, so background work can lag.
 */
export async function eventually<T>(
  check: () => T | Promise<T>,
  { timeoutMs = 20_000, intervalMs = 50, message = 'the condition did not hold' }: EventuallyOptions = {},
): Promise<Exclude<T, false>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let failure: unknown;
    try {
      const value = await check();
      if (value !== false) return value as Exclude<T, false>;
      failure = new Error(`${message} within ${timeoutMs} ms`);
    } catch (err) {
      failure = err;
    }
    if (Date.now() > deadline) throw failure;
    await Bun.sleep(intervalMs);
  }
}
