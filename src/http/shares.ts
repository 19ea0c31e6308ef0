import { Elysia } from 'elysia';
import { z } from 'zod';
import type { AppContext } from '../context.ts';
import { readJson } from './body.ts';
import { idsBody } from './fields.ts';
import { sessionPlugin } from './guard.ts';
import { requestMeta } from './request-meta.ts';
import { validate } from './validate.ts';
import { describeInput } from './openapi.ts';

const linkOptions = z.object({
  password: z
    .string({ error: 'password must be a string of 6 to 128 characters, or null to remove it' })
    .min(6, 'password must be at least 6 characters')
    .max(128, 'password must be at most 128 characters')
    .nullable()
    .optional(),
  mode: z.enum(['view', 'upload', 'view_upload'], { error: 'mode must be view, upload or view_upload' }).optional(),
  maxDownloads: z
    .number({ error: 'maxDownloads must be a whole number from 1 to 100000, or null for no limit' })
    .int('maxDownloads must be a whole number')
    .min(1, 'maxDownloads must be at least 1')
    .max(100_000, 'maxDownloads must be at most 100000')
    .nullable()
    .optional(),
});

const shareBody = idsBody.extend({
  shared: z.boolean({ error: 'shared must be true or false' }),
  expiry: z.enum(['7d', '30d', 'never'], { error: 'expiry must be 7d, 30d or never' }).default('7d'),
  ...linkOptions.shape,
});

const listQuery = z.object({
  limit: z.coerce
    .number()
    .int('limit must be a whole number')
    .min(1, 'limit must be at least 1')
    .max(200, 'limit must be at most 200')
    .default(50),
  cursor: z.string().min(1).optional(),
  itemId: z.string().min(1).max(64).optional(),
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
        const { ids, shared, expiry, ...options } = validate(shareBody, await readJson(request));
        return shared ? shares.share(principal, ids, expiry, origin(request), options) : shares.unshare(principal, ids);
      },
      { session: true, detail: describeInput({ body: shareBody }) },
    )
    .post(
      '/api/files/share/links',
      async ({ principal, request }) => shares.links(principal, validate(idsBody, await readJson(request)).ids, origin(request)),
      { session: true, detail: describeInput({ body: idsBody }) },
    )
    .get(
      '/api/files/share/links',
      ({ principal, query, request }) => {
        const { links, nextCursor } = shares.list(principal.accountId, validate(listQuery, query), origin(request));
        return { links: links.map(({ accountId: _, ...link }) => link), nextCursor };
      },
      { session: true, detail: describeInput({ query: listQuery }) },
    )
    .patch(
      '/api/files/share/links/:token',
      async ({ principal, params, request }) =>
        shares.update(principal, params.token, validate(linkOptions, await readJson(request)), origin(request)),
      { session: true, detail: describeInput({ body: linkOptions }) },
    )
    .post(
      '/api/files/link-parent-share',
      async ({ principal, request }) => shares.linkParentShare(principal, validate(idsBody, await readJson(request)).ids, origin(request)),
      { session: true, detail: describeInput({ body: idsBody }) },
    );
}
