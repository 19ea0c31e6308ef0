import { Elysia } from 'elysia';
import { z } from 'zod';
import type { AppContext } from '../context.ts';
import { PERMISSION_CATALOG, type Permission } from '../services/accounts/principal.ts';
import { EMAIL } from '../services/accounts/email.ts';
import { readJson } from './body.ts';
import { sessionPlugin } from './guard.ts';
import { requestMeta } from './request-meta.ts';
import { validate } from './validate.ts';
import { describeInput } from './openapi.ts';

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
  return new Elysia({ name: 'http/users', seed: ctx.instanceId })
    .use(sessionPlugin(ctx))
    .get('/api/user/sub-users', ({ principal }) => subUsers.list(principal), { session: true })
    .post(
      '/api/user/sub-users',
      async ({ principal, request, set }) => {
        const result = await subUsers.create(principal, validate(createSubUserBody, await readJson(request)));
        set.status = 201;
        return result;
      },
      { session: true, detail: describeInput({ body: createSubUserBody }) },
    )
    .put(
      '/api/user/sub-users/:id',
      async ({ principal, params, request }) =>
        subUsers.setPermissions(principal, params.id, validate(permissionsBody, await readJson(request)).permissions),
      { session: true, detail: describeInput({ body: permissionsBody }) },
    )
    .delete('/api/user/sub-users/:id', ({ principal, params }) => subUsers.remove(principal, params.id), { session: true })
    .get('/api/user/all', ({ query }) => users.list(validate(listQuery, query)), {
      session: true,
      detail: describeInput({ query: listQuery }),
    })
    .patch(
      '/api/user/:id',
      async ({ principal, params, request }) =>
        users.setDisabled(params.id, validate(accountStateBody, await readJson(request)).disabled, principal),
      { session: true, detail: describeInput({ body: accountStateBody }) },
    )
    .delete(
      '/api/user/:id',
      ({ principal, params, set }) => {
        set.status = 202;
        return users.requestDeletion(params.id, principal);
      },
      { session: true },
    )
    .get('/api/user/storage', ({ principal }) => quota.storage(principal.accountId), { session: true })
    .put(
      '/api/user/storage-limit',
      async ({ principal, request }) => {
        const body = validate(storageLimitBody, await readJson(request));
        return users.setStorageLimit(body.targetUserId, body.storageLimit ?? null, principal);
      },
      { session: true, detail: describeInput({ body: storageLimitBody }) },
    )
    .get('/api/user/active-clients', () => clients.active(), { session: true })
    .post(
      '/api/user/client-heartbeat',
      async ({ principal, request }) => {
        clients.heartbeat(principal, validate(heartbeatBody, await readJson(request)), requestMeta(request).ip);
        return { ok: true };
      },
      { session: true, detail: describeInput({ body: heartbeatBody }) },
    );
}
