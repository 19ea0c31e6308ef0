import { signal } from '@preact/signals';
import type { Api, ApiKey, PathParams } from '../../src/contract/api.ts';
import type { Item } from '../../src/contract/files.ts';
import { formatDuration, formatSize } from './format.ts';

/** A refused or failed call, carrying the server's own message for the user. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly body: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

export const OFFLINE_MESSAGE = 'Coffer cannot be reached. Check your connection; nothing was changed.';

/** False while the browser or the server is unreachable; the shell says so. */
export const online = signal(navigator.onLine);
addEventListener('online', () => (online.value = true));
addEventListener('offline', () => (online.value = false));

type Hook = (err: ApiError) => void;
const hooks: { unauthorized?: Hook; desktopOnly?: Hook; forbidden?: Hook } = {};
/** The session module reacts to an expired session or desktop-only mode seen by any call. */
export const onApiError = (h: typeof hooks) => Object.assign(hooks, h);

export interface CallOptions {
  method?: string;
  body?: unknown;
  headers?: Record<string, string>;
  signal?: AbortSignal;
  /** Sign-in calls expect 401 and must not be treated as an expired session. */
  anonymous?: boolean;
}

const QUOTA_REFUSAL = /^Storage limit exceeded\. Required: (\d+), available: (\d+)\.$/;

/** What a refusal says to the user: the server's message, and for a rate limit how long to wait. */
export function refusalMessage(status: number, body: Record<string, unknown>, retryAfter: string | null, fallback: string): string {
  const seconds = Number(retryAfter);
  // A rate limit's answer says only "later"; its Retry-After header says how much later.
  if (status === 429 && body.retryAfterMs === undefined && seconds > 0)
    return `Too many requests. Try again in ${formatDuration(seconds)}.`;
  // The storage limit's refusal counts bytes (its form is the API's); a person reads them in the app's units.
  const quota = status === 413 ? QUOTA_REFUSAL.exec(String(body.message ?? '')) : null;
  if (quota) return `Storage limit exceeded. This needs ${formatSize(Number(quota[1]))}; ${formatSize(Number(quota[2]))} is free.`;
  // A validation failure's message ("Validation failed") says neither which field nor what to change; its details do.
  const details = Array.isArray(body.details)
    ? (body.details as { message?: unknown }[]).map((d) => d?.message).filter((m) => typeof m === 'string' && m)
    : [];
  if (details.length) return details.join(' ');
  return String(body.message ?? body.error ?? fallback);
}

async function errorFrom(res: Response): Promise<ApiError> {
  let body: Record<string, unknown> = {};
  try {
    body = (await res.json()) as Record<string, unknown>;
  } catch {
    // A non-JSON error (a proxy's page): the status text below says enough.
  }
  const message = refusalMessage(res.status, body, res.headers.get('Retry-After'), `${res.status} ${res.statusText || 'Request failed'}`);
  return new ApiError(res.status, message, body);
}

export async function request(path: string, opts: CallOptions = {}): Promise<Response> {
  const headers: Record<string, string> = { Accept: 'application/json', ...opts.headers };
  let body: BodyInit | undefined;
  if (opts.body !== undefined) {
    headers['Content-Type'] = 'application/json';
    body = JSON.stringify(opts.body);
  }
  let res: Response;
  try {
    res = await fetch(path, {
      method: opts.method ?? (body ? 'POST' : 'GET'),
      headers,
      body,
      signal: opts.signal,
      credentials: 'same-origin',
    });
  } catch (err) {
    if ((err as Error).name === 'AbortError') throw err;
    online.value = false;
    throw new ApiError(0, OFFLINE_MESSAGE);
  }
  online.value = true;
  if (res.ok) return res;
  const err = await errorFrom(res);
  if (res.status === 401 && !opts.anonymous) hooks.unauthorized?.(err);
  if (res.status === 403 && err.body.error === 'DESKTOP_ONLY_ACCESS') hooks.desktopOnly?.(err);
  else if (res.status === 403) hooks.forbidden?.(err);
  throw err;
}

type Fields<K extends ApiKey> = (Api[K] extends { body: infer B } ? { body: B } : unknown) &
  (Api[K] extends { query: infer Q } ? { query?: Q } : unknown) &
  (keyof PathParams<K> extends never ? unknown : { params: PathParams<K> });
/** What a call sends: the contract's body, query and path parameters for its route key. */
type CallInput<K extends ApiKey> = Fields<K> & Omit<CallOptions, 'method' | 'body'>;
type Args<K extends ApiKey> = object extends Fields<K> ? [input?: CallInput<K>] : [input: CallInput<K>];

/** A route key's URL: `GET /x/:id` with `{id}` is `/x/<id>`, the parameter encoded; the query is appended. */
export function urlOf(key: string, params: Record<string, string> = {}, query: object = {}): string {
  const path = key.slice(key.indexOf(' ') + 1).replace(/:([^/]+)/g, (_, name: string) => encodeURIComponent(params[name] ?? ''));
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== null) q.set(k, String(v));
  const search = q.toString();
  return search ? `${path}?${search}` : path;
}

/** Calls a route of the contract; the answer as the raw response (status, headers, streams). */
export function send<K extends ApiKey>(key: K, ...[input]: Args<K>): Promise<Response> {
  const { params, query, body, ...opts } = (input ?? {}) as { params?: Record<string, string>; query?: object; body?: unknown };
  return request(urlOf(key, params, query), { ...opts, method: key.slice(0, key.indexOf(' ')), body });
}

/** Calls a route of the contract; its JSON answer, typed as the server declares it. */
export async function call<K extends ApiKey>(key: K, ...args: Args<K>): Promise<Api[K]['response']> {
  return (await (await send(key, ...args)).json()) as Api[K]['response'];
}

type ListKey = { [K in ApiKey]: Api[K]['response'] extends Item[] ? (Api[K] extends { query: unknown } ? K : never) : never }[ApiKey];

export interface ItemPage {
  items: Item[];
  nextCursor: string | null;
}

/** One page of a list route: its items, and the cursor of the next page (`X-Next-Cursor`). */
export async function page<K extends ListKey>(key: K, ...args: Args<K>): Promise<ItemPage> {
  const res = await send(key, ...args);
  return { items: (await res.json()) as Item[], nextCursor: res.headers.get('X-Next-Cursor') };
}
