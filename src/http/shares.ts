import type { AppContext } from '../context.ts';
import { idsBody } from '../contract/files.ts';
import { shareBody } from '../contract/sharing.ts';
import { requestMeta } from './request-meta.ts';
import { route, routes } from './route.ts';

/** Creating and removing share links (SPEC "Files": share, share/links, link-parent-share). */
export function shareRoutes(ctx: AppContext) {
  const { shares } = ctx.services;
  // The shares service decides a link's origin: the share base URL, else the one the client used.
  const origin = (request: Request) => requestMeta(request).origin;
  return routes(ctx, 'http/shares', [
    route('POST /api/files/share', {
      body: shareBody,
      handler: ({ principal, body, request }) =>
        body.shared ? shares.share(principal, body.ids, body.expiry, origin(request)) : shares.unshare(principal, body.ids),
    }),
    route('POST /api/files/share/links', {
      body: idsBody,
      handler: ({ principal, body, request }) => shares.links(principal, body.ids, origin(request)),
    }),
    route('POST /api/files/link-parent-share', {
      body: idsBody,
      handler: ({ principal, body, request }) => shares.linkParentShare(principal, body.ids, origin(request)),
    }),
  ]);
}
