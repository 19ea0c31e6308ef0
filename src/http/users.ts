import { z } from 'zod';
import type { AppContext } from '../context.ts';
import { PERMISSION_CATALOG, type Permission } from '../services/principal.ts';
import { EMAIL } from '../services/accounts.ts';
import { requestMeta } from './request-meta.ts';
import { route, routes } from './route.ts';

const permissionKeys = PERMISSION_CATALOG.map((p) => p.key) as [Permission, ...Permission[]];
const permissionsField = z.array(z.enum(permissionKeys, { message: `Unknown permission; valid keys: ${permissionKeys.join(', ')}` }), {
  message: 'permissions must be an array of permission keys',
});

const createSubUserBody = z.object({
  email: EMAIL,
  password: z.string({ error: 'password is required' }),
  name: z.string({ error: 'Name is required' }),
  permissions: permissionsField,
});

const listQuery = z.object({
  limit: z.coerce
    .number()
    .int('limit must be a whole number')
    .min(1, 'limit must be at least 1')
    .max(100, 'limit must be at most 100')
    .default(50),
  cursor: z.string().optional(),
});

const permissionsBody = z.object({ permissions: permissionsField });
const storageLimitBody = z.object({
  targetUserId: z.string().min(1, 'targetUserId is required'),
  storageLimit: z
    .number()
    .int('storageLimit must be a whole number of bytes')
    .positive('storageLimit must be positive')
    .max(Number.MAX_SAFE_INTEGER)
    .nullish(),
});

const accountStateBody = z.object({ disabled: z.boolean({ message: 'disabled must be true or false' }) });

const heartbeatBody = z.object({
  appVersion: z.string().trim().min(1, 'appVersion is required').max(64),
  platform: z.string().trim().max(64).optional(),
  clientId: z.string().trim().max(128).optional(),
});

/** Sub-users, the admin's user list and storage limits, storage usage, desktop clients. */
export function userRoutes(ctx: AppContext) {
  const { subUsers, users, quota, clients } = ctx.services;
  return routes(ctx, 'http/users', [
    route('GET /api/user/sub-users', { handler: ({ principal }) => subUsers.list(principal) }),
    route('POST /api/user/sub-users', {
      body: createSubUserBody,
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
    route('GET /api/user/all', { query: listQuery, handler: ({ query }) => users.list(query) }),
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
    route('GET /api/user/storage', { handler: ({ principal }) => quota.usage(principal.accountId) }),
    route('PUT /api/user/storage-limit', {
      body: storageLimitBody,
      handler: ({ principal, body }) => users.setStorageLimit(body.targetUserId, body.storageLimit ?? null, principal),
    }),
    route('GET /api/user/active-clients', { handler: () => clients.active() }),
    route('POST /api/user/client-heartbeat', {
      body: heartbeatBody,
      handler: ({ principal, body, request }) => {
        clients.heartbeat(principal, body, requestMeta(request).ip);
        return { ok: true };
      },
    }),
  ]);
}
