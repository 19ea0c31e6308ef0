/**
 * Holds every call of `target[method]` until `release`: `held` resolves when the first call is held, and `release`
 * lets the held calls go on and puts the method back.
 */
export function holdCalls<T extends object, K extends keyof T>(target: T, method: K): { held: Promise<void>; release: () => void } {
  const real = target[method] as (...args: unknown[]) => Promise<unknown>;
  let reached!: () => void;
  let open!: () => void;
  const held = new Promise<void>((r) => (reached = r));
  const gate = new Promise<void>((r) => (open = r));
  target[method] = (async (...args: unknown[]) => {
    reached();
    await gate;
    return real.apply(target, args);
  }) as T[K];
  return {
    held,
    release: () => {
      open();
      target[method] = real as T[K];
    },
  };
}
