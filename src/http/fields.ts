import type { Page } from '../services/files/items.ts';
import type { JsonBytes } from './route.ts';

// Cached pages and kept answers come back as the same object: serialize and encode each once.
const encoded = new WeakMap<object, Uint8Array>();

function encodedOnce(kept: object, value: unknown): Uint8Array {
  let body = encoded.get(kept);
  if (body === undefined) encoded.set(kept, (body = new TextEncoder().encode(JSON.stringify(value))));
  return body;
}

/** A JSON answer the service gives again as the same object while it stands, with the header `Response.json` sets. */
export function keptJson<T extends object>(answer: T, set: { headers: Record<string, string | number> }): JsonBytes<T> {
  set.headers['Content-Type'] = 'application/json;charset=utf-8';
  return encodedOnce(answer, answer) as JsonBytes<T>;
}

/** A list page: the items as the JSON body, the cursor of the next page in `X-Next-Cursor`. */
export function pageResponse(page: Page, set: { headers: Record<string, string | number> }): JsonBytes<Page['items']> {
  set.headers['Content-Type'] = 'application/json';
  if (page.nextCursor) set.headers['X-Next-Cursor'] = page.nextCursor;
  return encodedOnce(page, page.items) as JsonBytes<Page['items']>;
}
