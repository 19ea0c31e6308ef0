import { z } from 'zod';

/** A page's `limit` query field: a whole number from 1 to `max`, each refusal saying which bound it broke. */
export function pageLimit(max: number) {
  return z.coerce.number().int('limit must be a whole number').min(1, 'limit must be at least 1').max(max, `limit must be at most ${max}`);
}
