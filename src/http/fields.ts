import { z } from 'zod';
import type { Page } from '../services/files/items.ts';
import type { SortField } from '../services/files/tree.ts';

/** Shapes the file routes share; the rules behind them are the services'. */
const SORT_FIELDS = ['name', 'size', 'modified', 'accessedAt', 'deletedAt'] as const;

export const listQuery = (defaultSort: SortField) =>
  z.object({
    sortBy: z.enum(SORT_FIELDS).catch(defaultSort),
    order: z.enum(['asc', 'desc']).catch('desc'),
    limit: z.coerce
      .number()
      .int('limit must be a whole number')
      .min(1, 'limit must be at least 1')
      .max(500, 'limit must be at most 500')
      .default(200),
    cursor: z.string().min(1).optional(),
  });

const idsField = z
  .array(z.string().min(1), { error: 'ids must be an array of item ids' })
  .min(1, 'Select at least one item')
  .max(500, 'At most 500 ids per request');

export const idsBody = z.object({ ids: idsField });
/** A selection and the folder it goes to (move, copy): null or absent is the root. */
export const placeBody = idsBody.extend({ parentId: z.string().min(1).nullable().optional() });

// Cached pages come back as the same object: serialize and encode each once.
const pageJson = new WeakMap<Page, Uint8Array>();

/** A list page: the items as the JSON body, the cursor of the next page in `X-Next-Cursor`. */
export function pageResponse(page: Page, set: { headers: Record<string, string | number> }): Uint8Array {
  let body = pageJson.get(page);
  if (body === undefined) pageJson.set(page, (body = new TextEncoder().encode(JSON.stringify(page.items))));
  set.headers['Content-Type'] = 'application/json';
  if (page.nextCursor) set.headers['X-Next-Cursor'] = page.nextCursor;
  return body;
}
