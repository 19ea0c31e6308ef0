import { Elysia } from 'elysia';
import type { AppContext } from '../context.ts';
import type { Limits } from './limits.ts';
import { authPlugin } from './plugins/auth.ts';
import { requestMeta } from './request-meta.ts';

/** Session list, presence heartbeats and revocation. */
export function sessionRoutes(ctx: AppContext, limits: Limits) {
  const { sessions } = ctx.services;
  return new Elysia({ name: 'http/sessions', seed: ctx.instanceId })
    .use(authPlugin(ctx, limits))
    .get('/api/sessions', ({ principal, query }) => sessions.list(principal, { refresh: query.refreshIp === 'true' }), { auth: true })
    .post(
      '/api/sessions/heartbeat',
      ({ principal, request }) => {
        sessions.heartbeat(principal, { ip: requestMeta(request).ip });
        return { ok: true };
      },
      { auth: true },
    )
    .post(
      '/api/sessions/offline',
      ({ principal }) => {
        sessions.offline(principal);
        return { ok: true };
      },
      { auth: true },
    )
    .post(
      '/api/sessions/revoke-others',
      ({ principal }) => ({ message: 'Other sessions revoked', deletedCount: sessions.revokeOthers(principal) }),
      { auth: true },
    )
    .delete(
      '/api/sessions/:sessionId',
      ({ principal, params }) => {
        sessions.revoke(principal, params.sessionId);
        return { message: 'Session revoked' };
      },
      { auth: true },
    );
}
