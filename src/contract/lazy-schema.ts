const BUILT = Symbol('built');

/**
 * A schema built at its first use, typed and behaving as the one `build` returns. Building every contract schema at
 * start held heap an idle server never reads (docs/performance.md, the sixth pass: idle memory).
 */
export function lazySchema<T extends object>(build: () => T): T {
  let schema: T | undefined;
  const real = () => (schema ??= build());
  // Bound once per method: validation calls `safeParse` through the stand-in on every request.
  const bound = new WeakMap<object, unknown>();
  return new Proxy({} as T, {
    get: (_, key) => {
      const target = real();
      if (key === BUILT) return target;
      const value = Reflect.get(target, key, target);
      if (typeof value !== 'function') return value;
      let method = bound.get(value);
      if (method === undefined) bound.set(value, (method = value.bind(target)));
      return method;
    },
    has: (_, key) => Reflect.has(real(), key),
    ownKeys: () => Reflect.ownKeys(real()),
    getOwnPropertyDescriptor: (_, key) => {
      const found = Reflect.getOwnPropertyDescriptor(real(), key);
      return found && { ...found, configurable: true };
    },
    getPrototypeOf: () => Reflect.getPrototypeOf(real()),
  });
}

/**
 * The schema a lazy one stands for, to place inside another schema or hand to `z.toJSONSchema`: zod's JSON Schema
 * output tracks schemas by identity, and a schema's own parts refer to it, not to its stand-in.
 */
export function built<T>(schema: T): T {
  return (schema as { [BUILT]?: T })[BUILT] ?? schema;
}
