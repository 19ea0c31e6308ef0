import { Elysia } from 'elysia';
import type { AppContext } from '../context.ts';
import { sessionPlugin } from './guard.ts';
import { requestMeta } from './request-meta.ts';

/** Session list, presence heartbeats and revocation. */
export function sessionRoutes(ctx: AppContext) {
  const { sessions } = ctx.services;
  return new Elysia({ name: 'http/sessions', seed: ctx.instanceId })
    .use(sessionPlugin(ctx))
    .get('/api/sessions', ({ principal, query }) => sessions.list(principal, { refresh: query.refreshIp === 'true' }), { session: true })
    .post(
      '/api/sessions/heartbeat',
      ({ principal, request }) => {
        sessions.heartbeat(principal, { ip: requestMeta(request).ip });
        return { ok: true };
      },
      { session: true },
    )
    .post(
      '/api/sessions/offline',
      ({ principal }) => {
        sessions.offline(principal);
        return { ok: true };
      },
      { session: true },
    )
    .post(
      '/api/sessions/revoke-others',
      ({ principal }) => ({ message: 'Other sessions revoked', deletedCount: sessions.revokeOthers(principal) }),
      { session: true },
    )
    .delete(
      '/api/sessions/:sessionId',
      ({ principal, params }) => {
        sessions.revoke(principal, params.sessionId);
        return { message: 'Session revoked' };
      },
      { session: true },
    );
}
