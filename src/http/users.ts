import type { AppContext } from '../context.ts';
import { permissionsBody, subUserBody } from '../contract/accounts.ts';
import { accountStateBody, clientHeartbeatBody, storageLimitBody, userListQuery } from '../contract/admin.ts';
import { requestMeta } from './request-meta.ts';
import { route, routes } from './route.ts';

/** Sub-users, the admin's user list and storage limits, storage usage, desktop clients. */
export function userRoutes(ctx: AppContext) {
  const { subUsers, users, quota, clients } = ctx.services;
  return routes(ctx, 'http/users', [
    route('GET /api/user/sub-users', { handler: ({ principal }) => subUsers.list(principal) }),
    route('POST /api/user/sub-users', {
      body: subUserBody,
      handler: async ({ principal, body, set }) => {
        const result = await subUsers.create(principal, body);
        set.status = 201;
        return result;
      },
    }),
    route('PUT /api/user/sub-users/:id', {
      body: permissionsBody,
      handler: ({ principal, params, body }) => subUsers.setPermissions(principal, params.id, body.permissions),
    }),
    route('DELETE /api/user/sub-users/:id', { handler: ({ principal, params }) => subUsers.remove(principal, params.id) }),
    route('GET /api/user/all', { query: userListQuery, handler: ({ query }) => users.list(query) }),
    route('PATCH /api/user/:id', {
      body: accountStateBody,
      handler: ({ principal, params, body }) => users.setDisabled(params.id, body.disabled, principal),
    }),
    route('DELETE /api/user/:id', {
      handler: ({ principal, params, set }) => {
        set.status = 202;
        return users.requestDeletion(params.id, principal);
      },
    }),
    route('GET /api/user/storage', { handler: ({ principal }) => quota.storage(principal.accountId) }),
    route('PUT /api/user/storage-limit', {
      body: storageLimitBody,
      handler: ({ principal, body }) => users.setStorageLimit(body.targetUserId, body.storageLimit ?? null, principal),
    }),
    route('GET /api/user/active-clients', { handler: () => clients.active() }),
    route('POST /api/user/client-heartbeat', {
      body: clientHeartbeatBody,
      handler: ({ principal, body, request }) => {
        clients.heartbeat(principal, body, requestMeta(request).ip);
        return { ok: true };
      },
    }),
  ]);
}
