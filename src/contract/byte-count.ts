import { z } from 'zod';

/** A positive whole number of bytes, `field` in its messages; `typeError` for a value that is not a number. */
export function byteCount(field: string, typeError?: string) {
  return z
    .number(typeError === undefined ? undefined : { error: typeError })
    .int(`${field} must be a whole number of bytes`)
    .positive(`${field} must be positive`)
    .max(Number.MAX_SAFE_INTEGER);
}
