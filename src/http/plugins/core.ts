import { ocsResponse } from '../nextcloud.ts';
import { sabreErrorXml, XML_TYPE } from '../dav/xml.ts';
import { Elysia } from 'elysia';
import { AppError, badRequest, isDatabaseBusy, Messages, RateLimitedError } from '../../errors.ts';
import type { Logger } from '../../log.ts';
import { ObjectIntegrityError, StorageNotFoundError, StorageUnavailableError } from '../../storage/driver.ts';
import { KeyUnavailableError } from '../../storage/keyring.ts';
import { diskRefusal, isDiskFailingError } from '../../services/files/disk-space.ts';
import { bodyLeftUnread, DEFERRED_BODY } from '../body.ts';
import type { KeyedCap } from '../../lib/keyed-cap.ts';
import { limitAddress } from '../../lib/ip.ts';
import type { ClientIpResolver } from '../client-ip.ts';
import { isValidHost, loggedPath, pathOf, requestMeta, setRequestMeta, type RequestMeta } from '../request-meta.ts';
import { policyOfPath } from '../policy.ts';
import { renderErrorPage } from '../../web/error-page.ts';

/** The headers every answer carries; `images` adds origins pages may show pictures from (a map tile server). */
function securityHeaders(images: string[] = []): Record<string, string> {
  return {
    'X-Content-Type-Options': 'nosniff',
    'X-Frame-Options': 'DENY',
    // Other sites' pages cannot load the API's answers or a signed-in login's files as images or scripts; share links opt out (RoutePolicy.embeddable).
    'Cross-Origin-Resource-Policy': 'same-origin',
    'Referrer-Policy': 'no-referrer',
    'Content-Security-Policy': [
      "default-src 'self'",
      "script-src 'self'",
      "style-src 'self'",
      ["img-src 'self' data: blob:", ...images].join(' '),
      "media-src 'self' blob:",
      "frame-src 'self' blob:",
      "connect-src 'self'",
      "object-src 'none'",
      "base-uri 'none'",
      "frame-ancestors 'none'",
      "form-action 'self'",
    ].join('; '),
  };
}

export const SECURITY_HEADERS = securityHeaders();

const REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;

type Fetch = (request: Request) => Promise<Response>;

function firstForwarded(value: string | null): string | null {
  const first = value?.split(',')[0]?.trim();
  return first ? first : null;
}

/** Whether a request target is a path or an absolute http(s) URL, not `CONNECT host:port`, `OPTIONS *` or the like. */
function isPathTarget(url: string): boolean {
  return url.charCodeAt(0) === 47 || url.startsWith('http://') || url.startsWith('https://');
}

/** The access log's line for one request. */
function accessLine(log: Logger, request: Request, meta: RequestMeta, status: number, transfer: 'complete' | 'aborted' | undefined): void {
  // Liveness probes every few seconds would drown the log: they are debug lines.
  (meta.path === '/health' ? log.debug : log.info)('request', {
    requestId: meta.id,
    method: request.method,
    path: loggedPath(meta.path),
    status,
    ms: Math.round((performance.now() - meta.start) * 100) / 100,
    ip: meta.ip,
    login: meta.loginId,
    userAgent: request.headers.get('user-agent') ?? undefined,
    bytesIn: meta.bytesIn,
    bytesOut: meta.bytesOut,
    transfer,
  });
}

/** Maps an error to status and body; anything unexpected is a logged 500 with a generic message. */
function describeError(
  error: unknown,
  code: unknown,
): { status: number; body: Record<string, unknown>; headers?: Record<string, string> } | null {
  if (error instanceof AppError) return { status: error.status, body: error.body(), headers: error.headers };
  if (error instanceof StorageNotFoundError) return { status: 500, body: { message: Messages.storedObjectMissing } };
  const refused = diskRefusal(error);
  if (refused) return { status: refused.status, body: refused.body(), headers: refused.headers };
  if (error instanceof StorageUnavailableError) {
    return { status: 503, body: { message: Messages.storageUnavailable }, headers: { 'Retry-After': '30' } };
  }
  // Another connection held the write lock past the busy timeout: nothing of the request was committed, and the same request succeeds later.
  if (isDatabaseBusy(error)) return { status: 503, body: { message: Messages.databaseBusy }, headers: { 'Retry-After': '5' } };
  if (error instanceof ObjectIntegrityError || error instanceof KeyUnavailableError) return null;
  switch (code) {
    case 'NOT_FOUND':
      return { status: 404, body: { message: Messages.notFoundRoute } };
    case 'PARSE':
      return { status: 400, body: { message: Messages.invalidJson } };
    case 'VALIDATION':
      return {
        status: 422,
        body: { message: Messages.validationFailed, details: [{ field: 'request', message: String((error as Error).message) }] },
      };
  }
  return null;
}

/**
 * The runtime's own error handler, for an error that escapes every hook above (or is thrown by one):
 * a logged 500 in our shape, never the runtime's page with paths and source lines.
 */
export function lastResortErrorHandler(log: Logger) {
  return (error: Error): Response => {
    log.error('unhandled error', { err: error?.stack ?? String(error), where: 'runtime' });
    return Response.json({ message: Messages.internal }, { status: 500, headers: SECURITY_HEADERS });
  };
}

/**
 * Conventions every route shares: request id, client IP and origin, security headers, deferred body
 * reading, error mapping and the access log. Registered first, globally.
 */
export function corePlugin(deps: {
  log: Logger;
  ipResolver: ClientIpResolver;
  seed: string;
  addressCap: KeyedCap;
  /** MAP_TILE_URL's origin, which the photo details load their map tile from. */
  mapTileOrigin?: string | null;
}) {
  const { log, ipResolver, addressCap } = deps;
  const headers = deps.mapTileOrigin ? securityHeaders([deps.mapTileOrigin]) : SECURITY_HEADERS;
  /** The request's answer is out: counted out of its address's cap, its access line written (a stream's at its end). */
  const finish = (request: Request, status: number) => {
    const meta = requestMeta(request);
    if (meta.counted) {
      meta.counted = false;
      addressCap.release(limitAddress(meta.ip));
    }
    if (meta.transfer) void meta.transfer.then((transfer) => accessLine(log, request, meta, status, transfer));
    else accessLine(log, request, meta, status, undefined);
  };
  // Elysia asks for the wrapper on every request: it is made once per router it wraps.
  let router: Fetch | undefined;
  let wrapped: Fetch | undefined;
  const answered = (fetch: Fetch): Fetch => {
    if (fetch === router && wrapped) return wrapped;
    router = fetch;
    wrapped = async (request) => {
      let response: Response;
      try {
        response = await fetch(request);
      } catch (err) {
        // Escaped every hook: the runtime's last-resort handler answers it with a 500.
        finish(request, 500);
        throw err;
      }
      finish(request, response.status);
      return response;
    };
    return wrapped;
  };
  return (
    new Elysia({ name: 'http/core', seed: deps.seed })
      // Elysia starts each request's headers as a copy of these: nothing to copy into them per request.
      .headers(headers)
      .error({ APP: AppError })
      .onRequest(({ request, set, server }) => {
        const url = request.url;
        const incoming = request.headers.get('x-request-id');
        const id = incoming && REQUEST_ID.test(incoming) ? incoming : crypto.randomUUID();
        const peer = server?.requestIP(request)?.address ?? null;
        const trusted = ipResolver.isTrustedPeer(peer);
        const forwardedProto = trusted ? firstForwarded(request.headers.get('x-forwarded-proto'))?.toLowerCase() : null;
        const proto =
          forwardedProto === 'https' || forwardedProto === 'http' ? forwardedProto : url.startsWith('https:') ? 'https' : 'http';
        const claimed = (trusted && firstForwarded(request.headers.get('x-forwarded-host'))) || request.headers.get('host');
        const host = isValidHost(claimed) ? claimed : null;
        const meta: RequestMeta = {
          id,
          start: performance.now(),
          // The resolver believes X-Forwarded-For only from a known proxy: from anyone else it is not read.
          ip: ipResolver.resolve(peer, trusted ? request.headers.get('x-forwarded-for') : null),
          path: pathOf(url),
          host,
          origin: `${proto}://${host}`,
          secure: proto === 'https',
        };
        setRequestMeta(request, meta);
        set.headers['X-Request-Id'] = id;
        // Links, cookies and origin checks are built on the host: a request without a usable one stops here.
        if (host === null) throw badRequest(Messages.invalidHost);
        // `CONNECT host:port`, `OPTIONS *` and other non-path targets name nothing served here.
        if (!isPathTarget(url)) throw badRequest(Messages.invalidTarget);
        // Counted per client as every per-address limit is: an IPv6 one by its /64.
        if (!addressCap.acquire(limitAddress(meta.ip))) {
          throw new RateLimitedError({
            'RateLimit-Limit': String(addressCap.max),
            'RateLimit-Remaining': '0',
            'RateLimit-Reset': String(Math.ceil(Date.now() / 1000) + 1),
            'Retry-After': '1',
            Connection: 'close',
          });
        }
        meta.counted = true;
      })
      // Nothing is read here: handlers read bodies after their guards (body.ts, uploads).
      .onParse({ as: 'global' }, () => DEFERRED_BODY)
      .onError({ as: 'global' }, ({ code, error, request, set }) => {
        if (bodyLeftUnread(request)) set.headers.Connection = 'close';
        const known = describeError(error, code);
        const status = known?.status ?? 500;
        // The bucket failed, not the request: one line for the admin, a 503 the client may retry.
        if (error instanceof StorageUnavailableError) {
          const meta = requestMeta(request);
          log.warn('storage unavailable', { requestId: meta.id, method: request.method, path: loggedPath(meta.path), err: error.message });
        }
        if (isDiskFailingError(error)) {
          const meta = requestMeta(request);
          log.error('the data disk refused a write', {
            requestId: meta.id,
            method: request.method,
            path: meta.path,
            err: (error as Error).message,
          });
        }
        if (isDatabaseBusy(error)) {
          const meta = requestMeta(request);
          log.warn('database busy', {
            requestId: meta.id,
            method: request.method,
            path: loggedPath(meta.path),
            err: (error as Error).message,
          });
        }
        // Every 500 is a bug or a damaged store: one line with the request id, whatever mapped it.
        if (status === 500) {
          const meta = requestMeta(request);
          log.error(known ? 'server error' : 'unhandled error', {
            requestId: meta.id,
            method: request.method,
            path: loggedPath(meta.path),
            err: error instanceof Error ? (error.stack ?? error.message) : String(error),
          });
        }
        set.status = status;
        if (known) {
          if (known.headers) Object.assign(set.headers, known.headers);
          const policy = error instanceof AppError ? policyOfPath(request.method, requestMeta(request).path) : undefined;
          if (error instanceof AppError && policy?.ocs) {
            const ocs = ocsResponse(request, status, error.message, []);
            set.headers['Content-Type'] = ocs.contentType;
            return ocs.body;
          }
          if (error instanceof AppError && policy?.sabreErrors) {
            set.headers['Content-Type'] = XML_TYPE;
            return sabreErrorXml(error.message);
          }
          if (error instanceof AppError && policy?.htmlErrors) {
            const page = renderErrorPage(status, error.message);
            Object.assign(set.headers, { 'Content-Type': 'text/html; charset=utf-8', 'Content-Security-Policy': page.csp });
            return page.html;
          }
          return known.body;
        }
        const damaged = error instanceof ObjectIntegrityError || error instanceof KeyUnavailableError;
        return { message: damaged ? Messages.storedObjectDamaged : Messages.internal };
      })
      // Every answer passes here, the ones an onRequest hook gives (WebDAV's HEAD, the share domain's and
      // desktop-only refusals) included, which Elysia's after-response hook never saw; and a request is counted
      // out as its answer goes to the runtime, where that hook's `setImmediate` left it counted a turn longer.
      .wrap((fetch) => answered(fetch as unknown as Fetch))
  );
}
