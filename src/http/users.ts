import type { AppContext } from '../context.ts';
import { permissionsBody, subUserBody } from '../contract/accounts.ts';
import {
  accountStateBody,
  addUserBody,
  deleteAccountBody,
  clientHeartbeatBody,
  storageLimitBody,
  userListQuery,
} from '../contract/admin.ts';
import { invitationUrl } from '../services/accounts/invitations.ts';
import { badRequest } from '../errors.ts';
import { requestMeta } from './request-meta.ts';
import { route, routes } from './route.ts';

/** Sub-users, the admin's user list, invitations and storage limits, storage usage, desktop clients. */
export function userRoutes(ctx: AppContext) {
  const { subUsers, users, quota, clients, invitations } = ctx.services;
  return routes([
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
    route('POST /api/user/accounts', {
      body: addUserBody,
      handler: async ({ principal, body, set }) => {
        const { password, currentPassword, code, ...rest } = body;
        if (password === undefined) throw badRequest('password is required: without one, send an invitation instead');
        const result = await invitations.addWithPassword({ ...rest, password }, { principal, proof: { password: currentPassword, code } });
        set.status = 201;
        return result;
      },
    }),
    route('GET /api/user/invitations', { handler: () => invitations.pending() }),
    route('POST /api/user/invitations', {
      body: addUserBody,
      handler: async ({ principal, body, request, set }) => {
        const { password, currentPassword, code, ...rest } = body;
        if (password !== undefined) throw badRequest('An invitation carries no password: the invitee chooses one');
        const { invitation, token } = await invitations.invite(rest, { principal, proof: { password: currentPassword, code } });
        set.status = 201;
        return { invitation, url: invitationUrl(ctx.config.publicUrl ?? requestMeta(request).origin, token) };
      },
    }),
    route('DELETE /api/user/invitations/:id', { handler: ({ principal, params }) => invitations.revoke(params.id, principal) }),
    route('PATCH /api/user/:id', {
      body: accountStateBody,
      handler: ({ principal, params, body }) => users.setDisabled(params.id, body.disabled, principal),
    }),
    route('POST /api/user/:id/confirm-email', { handler: ({ principal, params }) => users.confirmEmail(params.id, principal) }),
    route('DELETE /api/user/:id', {
      body: deleteAccountBody,
      handler: async ({ principal, params, body, set }) => {
        const result = await users.requestDeletion(params.id, { principal, proof: { password: body.currentPassword, code: body.code } });
        set.status = 202;
        return result;
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
