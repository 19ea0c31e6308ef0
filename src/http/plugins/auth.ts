import { Elysia } from 'elysia';
import type { AppContext } from '../../context.ts';
import { AppError, forbidden, Messages, unauthorized } from '../../errors.ts';
import { AuditActions } from '../../services/audit.ts';
import { requireAdmin, requireOwner, requirePermission, type Permission, type Principal } from '../../services/principal.ts';
import { credentialsOf, tokenCookie } from '../cookies.ts';
import { enforceLimit, type LimiterName, type Limits } from '../limits.ts';
import { requestMeta } from '../request-meta.ts';

/** What a route demands of its caller; every check runs before the handler reads the request body. */
export interface AuthRule {
  permission?: Permission;
  role?: 'owner' | 'admin';
  /** Message of the admin refusal, where SPEC gives one of its own (orphans). */
  adminMessage?: string;
  /** Rate limiter keyed by the login (default `general`); false for none. */
  limit?: LimiterName | false;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

const routeOf = (request: Request) => `${request.method} ${requestMeta(request).path}`;

/**
 * The guard of every authenticated route: `{ auth: true }` or `{ auth: { permission: 'files.upload' } }`.
 * It resolves the principal from the database (token, session, token version, permissions), refuses
 * cookie-authenticated state changes from another origin, applies the login's rate limit, then the
 * role or permission, and re-issues the cookie when the token is past half its life.
 */
export function authPlugin(ctx: AppContext, limits: Limits) {
  return new Elysia({ name: 'http/auth', seed: ctx.instanceId }).macro({
    auth: (rule: true | AuthRule) => ({
      async resolve({ request, set }): Promise<{ principal: Principal }> {
        const r: AuthRule = rule === true ? {} : rule;
        const meta = requestMeta(request);
        const credentials = credentialsOf(request);
        if (!credentials) throw unauthorized(Messages.noToken);
        if (credentials.fromCookie && !SAFE_METHODS.has(request.method)) {
          const origin = request.headers.get('origin');
          if (origin && origin !== meta.origin) {
            ctx.services.audit.record({
              action: AuditActions.accessDenied,
              status: 'denied',
              ip: meta.ip,
              targetType: 'route',
              targetId: routeOf(request),
              details: { reason: Messages.crossOrigin, origin },
            });
            throw forbidden(Messages.crossOrigin);
          }
        }
        const { principal, refreshedToken } = await ctx.services.sessions.authenticate(credentials.token, { ip: meta.ip });
        meta.loginId = principal.loginId;
        if (r.limit !== false) enforceLimit(limits[r.limit ?? 'general'], `login:${principal.loginId}`, ctx.clock);
        try {
          if (r.role === 'owner') requireOwner(principal);
          if (r.role === 'admin') requireAdmin(principal, r.adminMessage);
          if (r.permission) requirePermission(principal, r.permission);
        } catch (err) {
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
          throw err;
        }
        if (refreshedToken && credentials.fromCookie) set.headers['set-cookie'] = tokenCookie(refreshedToken, meta.secure);
        return { principal };
      },
    }),
    /** Unauthenticated routes: the given limiter keyed by client IP. */
    publicLimit: (name: LimiterName) => ({
      beforeHandle({ request }) {
        enforceLimit(limits[name], `ip:${requestMeta(request).ip}`, ctx.clock);
      },
    }),
  });
}
