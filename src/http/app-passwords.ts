import { Elysia } from 'elysia';
import { z } from 'zod';
import type { AppContext } from '../context.ts';
import { readJson } from './body.ts';
import { sessionPlugin } from './guard.ts';
import { describeInput } from './openapi.ts';
import { validate } from './validate.ts';

const createBody = z.object({ name: z.string({ error: 'name is required' }) });

/**
 * App passwords (issue 22): per-device passwords for WebDAV, made and revoked by their own login; and
 * the account's WebDAV locks, which its owner sees and removes (a sub-user's lock included).
 */
export function appPasswordRoutes(ctx: AppContext) {
  const { appPasswords, dav } = ctx.services;
  return new Elysia({ name: 'http/app-passwords', seed: ctx.instanceId })
    .use(sessionPlugin(ctx))
    .get('/api/user/app-passwords', ({ principal }) => appPasswords.list(principal), { session: true })
    .post(
      '/api/user/app-passwords',
      async ({ principal, request, set }) => {
        set.status = 201;
        return appPasswords.create(principal, validate(createBody, await readJson(request)));
      },
      { session: true },
    )
    .delete('/api/user/app-passwords/:id', ({ principal, params }) => appPasswords.revoke(principal, params.id), { session: true })
    .get('/api/user/dav-locks', ({ principal }) => dav.lockViews(principal), {
      session: true,
      detail: describeInput({
        summary: "The account's WebDAV locks: {locks: [{token, path, login: {id, name, email}, scope, depth, expiresAt}]}",
      }),
    })
    .delete('/api/user/dav-locks/:token', ({ principal, params }) => dav.removeLock(principal, params.token), {
      session: true,
      detail: describeInput({ summary: "Removes one of the account's WebDAV locks, whichever login took it" }),
    });
}
