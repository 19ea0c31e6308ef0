import type { Page } from '../services/files/items.ts';
import type { JsonBytes } from './route.ts';

// Cached pages come back as the same object: serialize and encode each once.
const pageJson = new WeakMap<Page, Uint8Array>();

// A kept answer comes back as the same object: serialized and encoded once.
const answerJson = new WeakMap<object, Uint8Array>();

/** A JSON answer the service gives again as the same object while it stands, with the header `Response.json` sets. */
export function keptJson<T extends object>(answer: T, set: { headers: Record<string, string | number> }): JsonBytes<T> {
  let body = answerJson.get(answer);
  if (body === undefined) answerJson.set(answer, (body = new TextEncoder().encode(JSON.stringify(answer))));
  set.headers['Content-Type'] = 'application/json;charset=utf-8';
  return body as JsonBytes<T>;
}

/** A list page: the items as the JSON body, the cursor of the next page in `X-Next-Cursor`. */
export function pageResponse(page: Page, set: { headers: Record<string, string | number> }): JsonBytes<Page['items']> {
  let body = pageJson.get(page);
  if (body === undefined) pageJson.set(page, (body = new TextEncoder().encode(JSON.stringify(page.items))));
  set.headers['Content-Type'] = 'application/json';
  if (page.nextCursor) set.headers['X-Next-Cursor'] = page.nextCursor;
  return body as JsonBytes<Page['items']>;
}
