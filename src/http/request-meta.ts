/** Per-request facts computed once in onRequest and read by guards, limiters and the access log. */
export interface RequestMeta {
  id: string;
  start: number;
  ip: string;
  /** The origin clients use (scheme and host; forwarded ones only from known proxies). */
  origin: string;
  /** HTTPS directly or behind a known proxy that says so: cookies get `Secure`. */
  secure: boolean;
  /** Set by the auth guard: the login that made the request, for logs and rate-limit keys. */
  loginId?: string;
}

const metas = new WeakMap<Request, RequestMeta>();

export function setRequestMeta(request: Request, meta: RequestMeta): void {
  metas.set(request, meta);
}

export function requestMeta(request: Request): RequestMeta {
  const meta = metas.get(request);
  if (meta) return meta;
  const url = new URL(request.url);
  const fallback = { id: crypto.randomUUID(), start: performance.now(), ip: 'unknown', origin: url.origin, secure: url.protocol === 'https:' };
  metas.set(request, fallback);
  return fallback;
}
