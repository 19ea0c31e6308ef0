import { Elysia } from 'elysia';
import { z } from 'zod';
import type { AppContext } from '../context.ts';
import { EMAIL } from '../services/accounts/email.ts';
import { readJson } from './body.ts';
import { sessionPlugin } from './guard.ts';
import { describeInput } from './openapi.ts';
import { validate } from './validate.ts';

const role = z.enum(['viewer', 'editor'], { error: 'role must be viewer or editor' });
const addBody = z.object({ email: EMAIL, role });
const roleBody = z.object({ role });
const pageQuery = z.object({
  limit: z.coerce
    .number()
    .int('limit must be a whole number')
    .min(1, 'limit must be at least 1')
    .max(200, 'limit must be at most 200')
    .optional(),
  cursor: z.string().min(1).optional(),
});
const readBody = z
  .object({
    ids: z
      .array(z.string().min(1), { error: 'ids must be an array of notification ids' })
      .max(500, 'At most 500 ids per request')
      .optional(),
    all: z.literal(true, { error: 'all must be true' }).optional(),
  })
  .refine((b) => b.all || (b.ids?.length ?? 0) > 0, 'Send ids (a list of notification ids) or all: true');

/** Sharing with people: an item's members, what is shared with the caller, and notifications. */
export function memberRoutes(ctx: AppContext) {
  const { members, notifications } = ctx.services;
  return new Elysia({ name: 'http/members', seed: ctx.instanceId })
    .use(sessionPlugin(ctx))
    .get('/api/files/shared-with-me', ({ principal, query }) => members.sharedWithMe(principal, validate(pageQuery, query)), {
      session: true,
      detail: describeInput({ query: pageQuery }),
    })
    .get('/api/files/:id/members', ({ principal, params }) => members.list(principal, params.id), { session: true })
    .post(
      '/api/files/:id/members',
      async ({ principal, params, request, set }) => {
        const result = members.add(principal, params.id, validate(addBody, await readJson(request)));
        set.status = 201;
        return result;
      },
      { session: true, detail: describeInput({ body: addBody }) },
    )
    .patch(
      '/api/files/:id/members/:accountId',
      async ({ principal, params, request }) =>
        members.setRole(principal, params.id, params.accountId, validate(roleBody, await readJson(request)).role),
      { session: true, detail: describeInput({ body: roleBody }) },
    )
    .delete('/api/files/:id/members/:accountId', ({ principal, params }) => members.remove(principal, params.id, params.accountId), {
      session: true,
    })
    .get('/api/notifications', ({ principal, query }) => notifications.list(principal, validate(pageQuery, query)), {
      session: true,
      detail: describeInput({ query: pageQuery }),
    })
    .post(
      '/api/notifications/read',
      async ({ principal, request }) => notifications.markRead(principal, validate(readBody, await readJson(request))),
      { session: true, detail: describeInput({ body: readBody }) },
    );
}
