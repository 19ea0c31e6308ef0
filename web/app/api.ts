import { signal } from '@preact/signals';
import type { Item, JobStatus, ProgressLine, QueuedJob } from './api-types.ts';

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

async function errorFrom(res: Response): Promise<ApiError> {
  let body: Record<string, unknown> = {};
  try {
    body = (await res.json()) as Record<string, unknown>;
  } catch {
    // A non-JSON error (a proxy's page): the status text below says enough.
  }
  const message = String(body.message ?? body.error ?? `${res.status} ${res.statusText || 'Request failed'}`);
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

export async function api<T>(path: string, opts: CallOptions = {}): Promise<T> {
  const res = await request(path, opts);
  return (await res.json()) as T;
}

export const post = <T>(path: string, body?: unknown) => api<T>(path, { method: 'POST', body: body ?? {} });

export interface ItemPage {
  items: Item[];
  nextCursor: string | null;
}

export async function listPage(path: string, params: Record<string, string | undefined>, signal?: AbortSignal): Promise<ItemPage> {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined) q.set(k, v);
  const res = await request(`${path}?${q}`, { signal });
  return { items: (await res.json()) as Item[], nextCursor: res.headers.get('X-Next-Cursor') };
}

/** Polls a background job until it is done; failures carry the server's message. */
export async function waitForJob(jobId: string, signal?: AbortSignal): Promise<JobStatus> {
  for (let delay = 250; ; delay = Math.min(delay * 1.5, 2000)) {
    const res = await request(`/api/files/jobs/${encodeURIComponent(jobId)}`, { signal });
    const status = (await res.json()) as JobStatus;
    if (res.status === 200) return status;
    await new Promise((r) => setTimeout(r, delay));
  }
}

/**
 * Trash or restore with the server's NDJSON progress (SPEC "Progress streaming"); a tree too big for
 * the web process comes back as a queued job, which is then awaited.
 */
export async function runWithProgress(path: string, ids: string[], onProgress: (done: number, total: number) => void): Promise<string> {
  const res = await request(path, { method: 'POST', body: { ids }, headers: { Accept: 'application/x-ndjson' } });
  if (res.status === 202) {
    const queued = (await res.json()) as QueuedJob;
    const done = await waitForJob(queued.jobId);
    return `${done.result?.count ?? ids.length} items`;
  }
  if (!(res.headers.get('content-type') ?? '').includes('ndjson'))
    return String(((await res.json()) as { message?: string }).message ?? '');
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { done, value } = await reader.read();
    if (value) buffer += value;
    let nl: number;
    while ((nl = buffer.indexOf('\n')) >= 0) {
      const line = JSON.parse(buffer.slice(0, nl)) as ProgressLine;
      buffer = buffer.slice(nl + 1);
      if (line.type === 'progress') onProgress(line.done, line.total);
      else if (line.type === 'error') throw new ApiError(500, line.message);
      else return line.message;
    }
    if (done) throw new ApiError(500, 'The server stopped answering part-way; reload to see what was done.');
  }
}
