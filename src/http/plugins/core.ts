import { Elysia } from 'elysia';
import { AppError, Messages } from '../../errors.ts';
import type { Logger } from '../../log.ts';
import { ObjectIntegrityError, StorageNotFoundError } from '../../storage/driver.ts';
import { KeyUnavailableError } from '../../storage/keyring.ts';
import { DEFERRED_BODY } from '../body.ts';
import type { ClientIpResolver } from '../client-ip.ts';
import { requestMeta, setRequestMeta } from '../request-meta.ts';

export const SECURITY_HEADERS: Record<string, string> = {
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  'Content-Security-Policy':
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; media-src 'self' blob:; frame-src 'self' blob:; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'",
};

const REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;

function firstForwarded(value: string | null): string | null {
  const first = value?.split(',')[0]?.trim();
  return first ? first : null;
}

/** Maps an error to status and body; anything unexpected is a logged 500 with a generic message. */
function describeError(error: unknown, code: unknown): { status: number; body: Record<string, unknown>; headers?: Record<string, string> } | null {
  if (error instanceof AppError) return { status: error.status, body: error.body(), headers: error.headers };
  if (error instanceof StorageNotFoundError) return { status: 500, body: { message: Messages.storedObjectMissing } };
  if (error instanceof ObjectIntegrityError || error instanceof KeyUnavailableError) return null;
  switch (code) {
    case 'NOT_FOUND':
      return { status: 404, body: { message: Messages.notFoundRoute } };
    case 'PARSE':
      return { status: 400, body: { message: Messages.invalidJson } };
    case 'VALIDATION':
      return { status: 422, body: { message: Messages.validationFailed, details: [{ field: 'request', message: String((error as Error).message) }] } };
  }
  return null;
}

/**
 * Conventions every route shares: request id, client IP and origin, security headers, deferred body
 * reading, error mapping and the access log. Registered first, globally.
 */
export function corePlugin(deps: { log: Logger; ipResolver: ClientIpResolver; seed: string }) {
  const { log, ipResolver } = deps;
  return new Elysia({ name: 'http/core', seed: deps.seed })
    .error({ APP: AppError })
    .onRequest(({ request, set, server }) => {
      const incoming = request.headers.get('x-request-id');
      const id = incoming && REQUEST_ID.test(incoming) ? incoming : crypto.randomUUID();
      const peer = server?.requestIP(request)?.address ?? null;
      const url = new URL(request.url);
      const trusted = ipResolver.isTrustedPeer(peer);
      const proto = (trusted && firstForwarded(request.headers.get('x-forwarded-proto'))) || url.protocol.replace(':', '');
      const host = (trusted && firstForwarded(request.headers.get('x-forwarded-host'))) || request.headers.get('host') || url.host;
      setRequestMeta(request, {
        id,
        start: performance.now(),
        ip: ipResolver.resolve(peer, request.headers.get('x-forwarded-for')),
        origin: `${proto}://${host}`,
        secure: proto === 'https',
      });
      Object.assign(set.headers, SECURITY_HEADERS);
      set.headers['X-Request-Id'] = id;
    })
    // Nothing is read here: handlers read bodies after their guards (body.ts, uploads).
    .onParse({ as: 'global' }, () => DEFERRED_BODY)
    .onError({ as: 'global' }, ({ code, error, request, set }) => {
      const known = describeError(error, code);
      if (known) {
        set.status = known.status;
        if (known.headers) Object.assign(set.headers, known.headers);
        return known.body;
      }
      const meta = requestMeta(request);
      log.error('unhandled error', {
        requestId: meta.id,
        method: request.method,
        path: new URL(request.url).pathname,
        err: error instanceof Error ? (error.stack ?? error.message) : String(error),
      });
      set.status = 500;
      const damaged = error instanceof ObjectIntegrityError || error instanceof KeyUnavailableError;
      return { message: damaged ? Messages.storedObjectDamaged : Messages.internal };
    })
    .onAfterResponse({ as: 'global' }, ({ request, set }) => {
      const meta = requestMeta(request);
      log.info('request', {
        requestId: meta.id,
        method: request.method,
        path: new URL(request.url).pathname,
        status: typeof set.status === 'number' ? set.status : 200,
        ms: Math.round((performance.now() - meta.start) * 100) / 100,
        ip: meta.ip,
        login: meta.loginId,
      });
    });
}
