import { Elysia } from 'elysia';
import { z } from 'zod';
import type { AppContext } from '../context.ts';
import { readJson } from './body.ts';
import type { Limits } from './limits.ts';
import { authPlugin } from './plugins/auth.ts';
import { requestMeta } from './request-meta.ts';
import { validate } from './validate.ts';

const idsField = z
  .array(z.string().min(1), { error: 'ids must be an array of item ids' })
  .min(1, 'Select at least one item')
  .max(500, 'At most 500 ids per request');
const shareBody = z.object({
  ids: idsField,
  shared: z.boolean({ error: 'shared must be true or false' }),
  expiry: z.enum(['7d', '30d', 'never'], { error: 'expiry must be 7d, 30d or never' }).default('7d'),
});
const idsBody = z.object({ ids: idsField });

/** Creating and removing share links (SPEC "Files": share, share/links, link-parent-share). */
export function shareRoutes(ctx: AppContext, limits: Limits) {
  const { shares, settings } = ctx.services;
  // Links use the share base URL when one is set, else the origin the client used (via known proxies).
  const origin = (request: Request) => {
    const base = settings.get('shareBaseUrl');
    return base ? new URL(base).origin : requestMeta(request).origin;
  };
  return new Elysia({ name: 'http/shares', seed: ctx.instanceId })
    .use(authPlugin(ctx, limits))
    .post(
      '/api/files/share',
      async ({ principal, request }) => {
        const body = validate(shareBody, await readJson(request));
        return body.shared ? shares.share(principal, body.ids, body.expiry, origin(request)) : shares.unshare(principal, body.ids);
      },
      { auth: { permission: 'files.share' } },
    )
    .post(
      '/api/files/share/links',
      async ({ principal, request }) => shares.links(principal, validate(idsBody, await readJson(request)).ids, origin(request)),
      { auth: { permission: 'files.share' } },
    )
    .post(
      '/api/files/link-parent-share',
      async ({ principal, request }) => shares.linkParentShare(principal, validate(idsBody, await readJson(request)).ids, origin(request)),
      { auth: { permission: 'files.share' } },
    );
}
