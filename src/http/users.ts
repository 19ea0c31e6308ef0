import { Elysia } from 'elysia';
import { z } from 'zod';
import type { AppContext } from '../context.ts';
import { PERMISSION_CATALOG, type Permission } from '../services/principal.ts';
import { emailField } from './auth.ts';
import { readJson } from './body.ts';
import type { Limits } from './limits.ts';
import { authPlugin } from './plugins/auth.ts';
import { requestMeta } from './request-meta.ts';
import { validate } from './validate.ts';

const permissionKeys = PERMISSION_CATALOG.map((p) => p.key) as [Permission, ...Permission[]];
const permissionsField = z.array(z.enum(permissionKeys, { message: `Unknown permission; valid keys: ${permissionKeys.join(', ')}` }), {
  message: 'permissions must be an array of permission keys',
});

const createSubUserBody = z.object({
  email: emailField,
  password: z.string().min(8, 'Password must be at least 8 characters').max(128, 'Password must be at most 128 characters'),
  name: z.string().trim().min(1, 'Name is required').max(100, 'Name must be at most 100 characters'),
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

const storageLimitBody = z.object({
  targetUserId: z.string().min(1, 'targetUserId is required'),
  storageLimit: z
    .number()
    .int('storageLimit must be a whole number of bytes')
    .positive('storageLimit must be positive')
    .max(Number.MAX_SAFE_INTEGER)
    .nullish(),
});

const heartbeatBody = z.object({
  appVersion: z.string().trim().min(1, 'appVersion is required').max(64),
  platform: z.string().trim().max(64).optional(),
  clientId: z.string().trim().max(128).optional(),
});

/** Sub-users, the admin's user list and storage limits, storage usage, desktop clients. */
export function userRoutes(ctx: AppContext, limits: Limits) {
  const { subUsers, users, quota, clients } = ctx.services;
  // Fresh objects per route: Elysia rewrites a route's hook object when it applies macros.
  const owner = () => ({ auth: { role: 'owner' } }) as const;
  const admin = () => ({ auth: { role: 'admin' } }) as const;
  return new Elysia({ name: 'http/users', seed: ctx.instanceId })
    .use(authPlugin(ctx, limits))
    .get('/api/user/sub-users', ({ principal }) => subUsers.list(principal), owner())
    .post(
      '/api/user/sub-users',
      async ({ principal, request, set }) => {
        const result = await subUsers.create(principal, validate(createSubUserBody, await readJson(request)));
        set.status = 201;
        return result;
      },
      owner(),
    )
    .put(
      '/api/user/sub-users/:id',
      async ({ principal, params, request }) =>
        subUsers.setPermissions(
          principal,
          params.id,
          validate(z.object({ permissions: permissionsField }), await readJson(request)).permissions,
        ),
      owner(),
    )
    .delete('/api/user/sub-users/:id', ({ principal, params }) => subUsers.remove(principal, params.id), owner())
    .get('/api/user/all', ({ query }) => users.list(validate(listQuery, query)), admin())
    .get('/api/user/storage', ({ principal }) => quota.usage(principal.accountId), { auth: true })
    .put(
      '/api/user/storage-limit',
      async ({ principal, request }) => {
        const body = validate(storageLimitBody, await readJson(request));
        return users.setStorageLimit(body.targetUserId, body.storageLimit ?? null, principal);
      },
      admin(),
    )
    .get('/api/user/active-clients', () => clients.active(), admin())
    .post(
      '/api/user/client-heartbeat',
      async ({ principal, request }) => {
        clients.heartbeat(principal, validate(heartbeatBody, await readJson(request)), requestMeta(request).ip);
        return { ok: true };
      },
      { auth: true },
    );
}
