import { createHash } from 'node:crypto';
import { Elysia } from 'elysia';
import type { AppContext } from '../context.ts';
import { AppError, forbidden, Messages, unauthorized } from '../errors.ts';
import { davUnauthorized, WRONG_DAV_SECRET } from '../services/accounts/app-passwords.ts';
import { AuditActions } from '../services/admin/audit.ts';
import { permissionFor } from '../services/identity/permissions.ts';
import { type Principal, requireAdmin, requireOwner, requirePermission } from '../services/identity/principal.ts';
import { emailKey } from '../services/accounts/email.ts';
import { readJson } from './body.ts';
import { credentialsOf, IDP_PENDING_COOKIE, readCookie, tokenCookie } from './cookies.ts';
import { enforceLimit, type Limits, spendPasswordHash } from './limits.ts';
import { policyOf, type RoutePolicy } from './policy.ts';
import { loggedPath, type RequestMeta, requestMeta } from './request-meta.ts';
import { limitAddress } from '../lib/ip.ts';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * The rate-limit counter a request counts against, from its route's policy; a promise only where the key
 * needs the body (sign-ins), so the other routes count without waiting a turn.
 */
function limitKey(
  policy: RoutePolicy,
  request: Request,
  meta: RequestMeta,
  principal: Principal | null,
  pendingEmail: (pendingId: string | null) => string | null,
  passkeyEmail: (credentialId: string) => string | null,
): string | Promise<string> {
  const key = policy.limit ? policy.limit.key : principal ? 'login' : 'ip';
  if (key === 'login') return `login:${principal!.loginId}`;
  if (key === 'account') return `account:${principal!.accountId}`;
  const ip = limitAddress(meta.ip);
  if (key === 'ip') return `ip:${ip}`;
  if (key === 'ip+login') return `${ip}|${principal!.loginId}`;
  // The code step after single sign-on has no session yet: its pending sign-in names the account, whose
  // password sign-in attempts it shares (the same key as below), so two ways in do not double the tries.
  if (key === 'ip+idp-pending') {
    const email = pendingEmail(readCookie(request, IDP_PENDING_COOKIE));
    return `${ip}|${email === null ? '' : emailKey(email)}`;
  }
  if (key === 'ip+passkey') {
    return readJson(request).then((json) => {
      const body = json as { id?: unknown } | null;
      const email = typeof body?.id === 'string' ? passkeyEmail(body.id) : null;
      return `${ip}|${email === null ? '' : emailKey(email)}`;
    });
  }
  // Sign-in attempts count per address and email, so one address cannot try many passwords on one account.
  if (principal) return `${ip}|${emailKey(principal.email)}`;
  return readJson(request).then((json) => {
    const body = json as { email?: unknown } | null;
    return `${ip}|${typeof body?.email === 'string' ? emailKey(body.email) : ''}`;
  });
}

/**
 * The one guard of every route, run before its handler reads the body: it looks the route up in
 * http/policy.ts, resolves the principal from the database for non-public routes (token, session,
 * token version, permissions), refuses cookie-authenticated state changes from another origin, applies
 * the route's rate limit, then its role or permission, and re-issues the cookie past half its life.
 * Registered once, before every area; each route gets the principal from its declaration (http/route.ts).
 */
export function guardPlugin(ctx: AppContext, limits: Limits) {
  const routeOf = (request: Request) => `${request.method} ${loggedPath(requestMeta(request).path)}`;
  const deny = (err: unknown, request: Request, principal: Principal) => {
    if (err instanceof AppError) {
      ctx.services.audit.record({
        action: AuditActions.accessDenied,
        status: 'denied',
        principal,
        targetType: 'route',
        targetId: routeOf(request),
        details: { reason: err.message },
      });
    }
    return err;
  };
  const pendingEmail = (id: string | null) => ctx.services.idp.pendingEmail(id);
  const passkeyEmail = (id: string) => ctx.services.passkeys.emailOf(id);
  const count = (policy: RoutePolicy, meta: RequestMeta, key: string) => {
    enforceLimit(limits[policy.limit ? policy.limit.limiter : 'general'], key, ctx.clock);
    if (policy.hashesPassword) spendPasswordHash(limits, meta.ip, ctx.clock);
  };
  /** Counts the request against its route's limit; a promise only when the key needs the body. */
  const limit = (policy: RoutePolicy, request: Request, meta: RequestMeta, principal: Principal | null): Promise<void> | undefined => {
    if (policy.limit === false) return;
    const key = limitKey(policy, request, meta, principal, pendingEmail, passkeyEmail);
    if (typeof key !== 'string') return key.then((k) => count(policy, meta, k));
    count(policy, meta, key);
  };
  return new Elysia({ name: 'http/guard', seed: ctx.instanceId }).onBeforeHandle({ as: 'global' }, async ({ request, route, set }) => {
    const policy = policyOf(request.method, route);
    if (!policy) throw new Error(`${request.method} ${route} has no entry in http/policy.ts`);
    const meta = requestMeta(request);
    if (policy.access === 'public') return void (await limit(policy, request, meta, null));
    if (policy.access === 'dav') return void (await davAuthenticate(ctx, limits, request));

    const credentials = credentialsOf(request);
    if (!credentials) throw unauthorized(Messages.noToken);
    if (credentials.fromCookie && !SAFE_METHODS.has(request.method)) {
      const origin = request.headers.get('origin');
      // Browsers name a cross-site request even where they send no Origin; scripts and the desktop client send neither.
      const site = request.headers.get('sec-fetch-site');
      if ((origin && origin !== meta.origin) || site === 'cross-site') {
        ctx.services.audit.record({
          action: AuditActions.accessDenied,
          status: 'denied',
          ip: meta.ip,
          requestId: meta.id,
          targetType: 'route',
          targetId: routeOf(request),
          details: { reason: Messages.crossOrigin, origin, secFetchSite: site },
        });
        throw forbidden(Messages.crossOrigin);
      }
    }
    const { principal, renewal } = ctx.services.sessions.authenticate(credentials.token, { ip: meta.ip, requestId: meta.id });
    meta.loginId = principal.loginId;
    meta.principal = principal;
    if (principal.isAdmin && meta.host !== null) ctx.services.adminOrigins.note(meta.origin);
    const limited = limit(policy, request, meta, principal);
    if (limited) await limited;
    try {
      if (policy.access === 'owner') requireOwner(principal);
      else if (policy.access === 'admin') requireAdmin(principal, policy.adminMessage);
      else if (typeof policy.access === 'object') requirePermission(principal, permissionFor(policy.access.operation));
    } catch (err) {
      throw deny(err, request, principal);
    }
    // Bearer clients keep the token they were given: only a cookie slides.
    if (renewal && credentials.fromCookie)
      set.headers['set-cookie'] = tokenCookie(await ctx.services.sessions.reissue(renewal), meta.secure);
  });
}

/**
 * The guard of WebDAV requests: HTTP Basic with an app password (anonymous OPTIONS excepted: clients
 * probe with it before they ask for a password), then the general limit per login. Sets the request's
 * principal; the WebDAV service checks each operation's permission once it knows what the request does.
 */
export async function davAuthenticate(ctx: AppContext, limits: Limits, request: Request): Promise<void> {
  if (request.method === 'OPTIONS' && !request.headers.has('authorization')) return;
  const meta = requestMeta(request);
  const principal = await davPrincipal(ctx, limits, request, meta);
  meta.loginId = principal.loginId;
  meta.principal = principal;
  enforceLimit(limits.general, `login:${principal.loginId}`, ctx.clock);
  ctx.services.clients.seen(principal, request.headers.get('user-agent'), meta.ip);
}

/**
 * HTTP Basic on WebDAV: an app password (or the account's, where allowed). Failures count against the
 * sign-in limiter per address and email, as sign-ins do; every attempt is counted before its password is
 * checked (so concurrent guesses cannot all pass a limit none has reached yet) and a success gives it back.
 * Where only app passwords sign in (the default), a secret refused before in this window is no new guess: refused
 * again unchecked and uncounted, so a device still sending a revoked app password, retrying, does not keep the
 * login's other devices at that address out. Where account passwords also do, each refusal counts as before: an old
 * password retried unchecked would never stop at the address's limit and would use up the email's wrong passwords
 * (services/accounts/password-tries.ts), locking its every way in.
 */
async function davPrincipal(ctx: AppContext, limits: Limits, request: Request, meta: RequestMeta): Promise<Principal> {
  const m = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(request.headers.get('authorization') ?? '');
  const decoded = m ? Buffer.from(m[1]!, 'base64').toString('utf8') : '';
  const colon = decoded.indexOf(':');
  if (colon < 0) throw davUnauthorized('Sign in with your email and an app password (Settings → App passwords)');
  return passwordPrincipal(ctx, limits, meta.ip, decoded.slice(0, colon), decoded.slice(colon + 1));
}

/** An email and an app password (or the account's, where allowed) from `ip`, counted against the sign-in limiter as davPrincipal says. */
export async function passwordPrincipal(ctx: AppContext, limits: Limits, ip: string, email: string, password: string): Promise<Principal> {
  const key = `${limitAddress(ip)}|${emailKey(email)}`;
  const guess = `${key}|${createHash('sha256').update(password).digest('base64url')}`;
  const remember = !ctx.services.settings.get('davAccountPasswords');
  if (remember && limits.wrongSecrets.seen(guess)) throw davUnauthorized(WRONG_DAV_SECRET);
  const counted = enforceLimit(limits.auth, key, ctx.clock);
  let principal: Principal;
  try {
    principal = await ctx.services.appPasswords.authenticate(email, password, ip, () => spendPasswordHash(limits, ip, ctx.clock));
  } catch (err) {
    // Only a wrong secret: a disabled account's device must get in again as soon as the account is enabled.
    if (remember && err instanceof AppError && err.message === WRONG_DAV_SECRET) limits.wrongSecrets.hit(guess);
    throw err;
  }
  limits.auth.release(key, counted);
  return principal;
}
