import { Elysia } from 'elysia';
import { z } from 'zod';
import type { AppContext } from '../context.ts';
import { readJson } from './body.ts';
import { sessionPlugin } from './guard.ts';
import { validate } from './validate.ts';

const createBody = z.object({ name: z.string({ error: 'name is required' }) });

/** App passwords (issue 22): per-device passwords for WebDAV, made and revoked by their own login. */
export function appPasswordRoutes(ctx: AppContext) {
  const { appPasswords } = ctx.services;
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
    .delete('/api/user/app-passwords/:id', ({ principal, params }) => appPasswords.revoke(principal, params.id), { session: true });
}
