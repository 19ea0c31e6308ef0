import { Elysia } from 'elysia';
import { z } from 'zod';
import type { AppContext } from '../context.ts';
import { readJson } from './body.ts';
import { idsBody } from './fields.ts';
import { sessionPlugin } from './guard.ts';
import { requestMeta } from './request-meta.ts';
import { validate } from './validate.ts';
import { describeInput } from './openapi.ts';

const shareBody = idsBody.extend({
  shared: z.boolean({ error: 'shared must be true or false' }),
  expiry: z.enum(['7d', '30d', 'never'], { error: 'expiry must be 7d, 30d or never' }).default('7d'),
});

/** Creating and removing share links (SPEC "Files": share, share/links, link-parent-share). */
export function shareRoutes(ctx: AppContext) {
  const { shares } = ctx.services;
  // The shares service decides a link's origin: the share base URL, else the one the client used.
  const origin = (request: Request) => requestMeta(request).origin;
  return new Elysia({ name: 'http/shares', seed: ctx.instanceId })
    .use(sessionPlugin(ctx))
    .post(
      '/api/files/share',
      async ({ principal, request }) => {
        const body = validate(shareBody, await readJson(request));
        return body.shared ? shares.share(principal, body.ids, body.expiry, origin(request)) : shares.unshare(principal, body.ids);
      },
      { session: true, detail: describeInput({ body: shareBody }) },
    )
    .post(
      '/api/files/share/links',
      async ({ principal, request }) => shares.links(principal, validate(idsBody, await readJson(request)).ids, origin(request)),
      { session: true, detail: describeInput({ body: idsBody }) },
    )
    .post(
      '/api/files/link-parent-share',
      async ({ principal, request }) => shares.linkParentShare(principal, validate(idsBody, await readJson(request)).ids, origin(request)),
      { session: true, detail: describeInput({ body: idsBody }) },
    );
}
