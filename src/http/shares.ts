import type { AppContext } from '../context.ts';
import { idsBody } from '../contract/files.ts';
import { linkListQuery, linkOptionsBody, shareBody } from '../contract/sharing.ts';
import { requestMeta } from './request-meta.ts';
import { route, routes } from './route.ts';

/** Creating, listing, changing and removing share links (docs/api.md › API reference, Sharing). */
export function shareRoutes(ctx: AppContext) {
  const { shares } = ctx.services;
  // The shares service decides a link's origin: the share base URL, else the one the client used.
  const origin = (request: Request) => requestMeta(request).origin;
  return routes([
    route('POST /api/files/share', {
      body: shareBody,
      handler: ({ principal, body, request }) => {
        const { ids, shared, expiry, expiresAt, ...options } = body;
        const until = expiresAt ? { at: Date.parse(expiresAt) } : expiry;
        return shared ? shares.share(principal, ids, until, origin(request), options) : shares.unshare(principal, ids);
      },
    }),
    route('POST /api/files/share/links', {
      body: idsBody,
      handler: ({ principal, body, request }) => shares.links(principal, body.ids, origin(request)),
    }),
    route('GET /api/files/share/links', {
      query: linkListQuery,
      handler: ({ principal, query, request }) => {
        const { links, nextCursor } = shares.list(principal.accountId, query, origin(request));
        return { links: links.map(({ accountId: _, ...link }) => link), nextCursor };
      },
    }),
    route('PATCH /api/files/share/links/:token', {
      body: linkOptionsBody,
      handler: ({ principal, params, body, request }) => shares.update(principal, params.token, body, origin(request)),
    }),
    route('GET /api/files/share/links/:token/qr', {
      handler: ({ principal, params, request }) => shares.qrCode(principal, params.token, origin(request)),
    }),
    route('POST /api/files/link-parent-share', {
      body: idsBody,
      handler: ({ principal, body, request }) => shares.linkParentShare(principal, body.ids, origin(request)),
    }),
  ]);
}
