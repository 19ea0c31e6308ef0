const native = globalThis.structuredClone;
// Deeper than any message pdf.js posts; past it (or in a cycle) the runtime's clone takes the rest.
const MAX_DEPTH = 32;

function copy(value: unknown, depth: number): unknown {
  if (typeof value !== 'object' || value === null) return typeof value === 'function' || typeof value === 'symbol' ? native(value) : value;
  if (depth > MAX_DEPTH) return native(value);
  if (Array.isArray(value)) {
    if (Object.getPrototypeOf(value) !== Array.prototype) return native(value);
    const out = new Array(value.length);
    for (let i = 0; i < value.length; i++) out[i] = copy(value[i], depth + 1);
    return out;
  }
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return native(value);
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const item = copy((value as Record<string, unknown>)[key], depth + 1);
    // An own "__proto__" (from JSON, say) stays a property, as the runtime's clone keeps it, not the copy's prototype.
    if (key === '__proto__') Object.defineProperty(out, key, { value: item, enumerable: true, writable: true, configurable: true });
    else out[key] = item;
  }
  return out;
}

/**
 * `structuredClone` for the messages pdf.js posts between its two halves in one thread: arrays and plain objects are
 * copied here, everything else (typed arrays, maps, dates, class instances, a transfer list, what lies deeper than
 * 32 levels) by the runtime's clone. Unlike it, an object reached twice is copied twice (a cycle 32 levels deep
 * before the runtime's clone keeps the rest) and an array's holes become `undefined`.
 */
export function plainClone<T>(value: T, options?: Parameters<typeof structuredClone>[1]): T {
  return (options?.transfer?.length ? native(value, options) : copy(value, 0)) as T;
}
