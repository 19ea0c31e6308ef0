import type { AppContext } from '../context.ts';
import { idpMfaBody } from '../contract/accounts.ts';
import { route, routes } from './route.ts';
import { IdpFailure, PENDING_MFA_TTL_S, STATE_TTL_S } from '../services/sign-on/sign-on.ts';
import { clearedIdpCookie, IDP_PENDING_COOKIE, IDP_STATE_COOKIE, idpCookie, readCookie, tokenCookie } from './cookies.ts';
import { requestMeta } from './request-meta.ts';

type Set = { status?: number | string; headers: Record<string, unknown> };

/** A 302 to `location`, with the cookies to set; the body is empty. */
function redirect(set: Set, location: string, cookies: string[]): string {
  set.status = 302;
  set.headers.location = location;
  set.headers['cache-control'] = 'no-store';
  if (cookies.length) set.headers['set-cookie'] = cookies;
  return '';
}

/** The sign-in page with a short error code the web app explains; never an email or a provider message. */
const loginError = (failure: IdpFailure) => `/login?error=${failure.code}`;

/** Single sign-on through an OpenID Connect provider: start, callback, the second step, and whether it is on. */
export function idpRoutes(ctx: AppContext) {
  const { idp } = ctx.services;
  const info = (request: Request) => ({ ip: requestMeta(request).ip, userAgent: request.headers.get('user-agent') ?? '' });
  return routes([
    route('GET /api/idp/enabled', { handler: () => ({ enabled: idp.enabled }) }),
    route('GET /api/idp/login', {
      handler: async ({ request, set }) => {
        const { origin, secure } = requestMeta(request);
        try {
          const next = new URL(request.url, origin).searchParams.get('next');
          // The default redirect URL: COFFER_PUBLIC_URL when set, not the Host header a client writes (a provider that matches loosely would send the code there).
          const { url, state } = await idp.begin({ origin: ctx.config.publicUrl ?? origin, next });
          return redirect(set, url, [idpCookie(IDP_STATE_COOKIE, state, STATE_TTL_S, secure)]);
        } catch (err) {
          if (err instanceof IdpFailure) return redirect(set, loginError(err), []);
          throw err;
        }
      },
    }),
    route('GET /api/idp/callback', {
      handler: async ({ request, set }) => {
        const { origin, secure } = requestMeta(request);
        // The state is single-use: cleared whatever happens next.
        const cookies = [clearedIdpCookie(IDP_STATE_COOKIE, secure)];
        try {
          const outcome = await idp.complete({
            state: readCookie(request, IDP_STATE_COOKIE),
            params: new URL(request.url, origin).searchParams,
            info: info(request),
          });
          if (outcome.kind === 'mfa') {
            cookies.push(idpCookie(IDP_PENDING_COOKIE, outcome.pendingId, PENDING_MFA_TTL_S, secure));
            const next = outcome.next === '/' ? '' : `&next=${encodeURIComponent(outcome.next)}`;
            return redirect(set, `/login?mfa=1${next}`, cookies);
          }
          cookies.push(tokenCookie(outcome.token, secure));
          return redirect(set, outcome.next, cookies);
        } catch (err) {
          if (err instanceof IdpFailure) return redirect(set, loginError(err), cookies);
          throw err;
        }
      },
    }),
    route('POST /api/idp/mfa-verify', {
      body: idpMfaBody,
      handler: async ({ body, request, set }) => {
        const { secure } = requestMeta(request);
        const result = await idp.verifyMfa(readCookie(request, IDP_PENDING_COOKIE), body.code, info(request));
        set.headers['set-cookie'] = [clearedIdpCookie(IDP_PENDING_COOKIE, secure), tokenCookie(result.token, secure)];
        return { user: result.user };
      },
    }),
  ]);
}
