import { Elysia } from 'elysia';
import { AppError, Messages } from '../../errors.ts';
import type { Logger } from '../../log.ts';
import type { ClientIpResolver } from '../client-ip.ts';
import { requestMeta, setRequestMeta } from '../request-meta.ts';

export const JSON_BODY_LIMIT = 1024 * 1024;

const SECURITY_HEADERS: Record<string, string> = {
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  'Content-Security-Policy':
    "default-src 'self'; img-src 'self' data: blob:; style-src 'self' 'unsafe-inline'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'",
};

const REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;

async function readLimited(request: Request, limit: number): Promise<string> {
  const declared = Number(request.headers.get('content-length') ?? NaN);
  if (declared > limit) throw new AppError(413, Messages.bodyTooLarge);
  if (!request.body) return '';
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limit) {
      await reader.cancel();
      throw new AppError(413, Messages.bodyTooLarge);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * Conventions every route shares: request id, client IP, security headers, JSON body limit,
 * error mapping and the access log. Registered first, globally.
 */
export function corePlugin(deps: { log: Logger; ipResolver: ClientIpResolver }) {
  const { log, ipResolver } = deps;
  return new Elysia({ name: 'http/core' })
    .error({ APP: AppError })
    .onRequest(({ request, set, server }) => {
      const incoming = request.headers.get('x-request-id');
      const id = incoming && REQUEST_ID.test(incoming) ? incoming : crypto.randomUUID();
      const peer = server?.requestIP(request)?.address ?? null;
      setRequestMeta(request, {
        id,
        start: performance.now(),
        ip: ipResolver.resolve(peer, request.headers.get('x-forwarded-for')),
      });
      Object.assign(set.headers, SECURITY_HEADERS);
      set.headers['X-Request-Id'] = id;
    })
    .onParse({ as: 'global' }, async ({ request, contentType }) => {
      if (!contentType.startsWith('application/json')) return;
      const text = await readLimited(request, JSON_BODY_LIMIT);
      if (text.trim() === '') return {};
      try {
        return JSON.parse(text);
      } catch {
        throw new AppError(400, Messages.invalidJson);
      }
    })
    .onError({ as: 'global' }, ({ code, error, request, set }) => {
      if (error instanceof AppError) {
        set.status = error.status;
        return { message: error.message, ...error.extra };
      }
      switch (code) {
        case 'NOT_FOUND':
          set.status = 404;
          return { message: Messages.notFoundRoute };
        case 'PARSE':
          set.status = 400;
          return { message: Messages.invalidJson };
        case 'VALIDATION':
          set.status = 422;
          return { message: Messages.validationFailed, details: [{ field: 'request', message: error.message }] };
      }
      const meta = requestMeta(request);
      log.error('unhandled error', {
        requestId: meta.id,
        method: request.method,
        path: new URL(request.url).pathname,
        err: error instanceof Error ? (error.stack ?? error.message) : String(error),
      });
      set.status = 500;
      return { message: Messages.internal };
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
