import type { AppContext } from '../context.ts';
import { requestMeta } from './request-meta.ts';
import { route, routes } from './route.ts';

/** Session list, presence heartbeats and revocation. */
export function sessionRoutes(ctx: AppContext) {
  const { sessions } = ctx.services;
  return routes([
    route('GET /api/sessions', { handler: ({ principal, query }) => sessions.list(principal, { refresh: query.refreshIp === 'true' }) }),
    route('POST /api/sessions/heartbeat', {
      handler: ({ principal, request }) => {
        sessions.heartbeat(principal, { ip: requestMeta(request).ip });
        return { ok: true };
      },
    }),
    route('POST /api/sessions/offline', {
      handler: ({ principal }) => {
        sessions.offline(principal);
        return { ok: true };
      },
    }),
    route('POST /api/sessions/revoke-others', {
      handler: ({ principal }) => ({ message: 'Other sessions revoked', deletedCount: sessions.revokeOthers(principal) }),
    }),
    route('DELETE /api/sessions/:sessionId', {
      handler: ({ principal, params }) => {
        sessions.revoke(principal, params.sessionId);
        return { message: 'Session revoked' };
      },
    }),
  ]);
}
