import type { AppContext } from '../context.ts';
import { photosQuery, thumbnailQuery } from '../contract/files.ts';
import type { ServedThumbnail } from '../services/thumbnails/thumbnails.ts';
import { route, routes } from './route.ts';

// The ETag names the content (its object key), which never changes under it: cached for good.
const CACHE = 'private, max-age=31536000, immutable';

/** A served thumbnail, or 304 when the client holds it already. */
export function thumbnailResponse(served: ServedThumbnail | 'not-modified'): Response {
  if (served === 'not-modified') return new Response(null, { status: 304, headers: { 'Cache-Control': CACHE } });
  return new Response(served.body, {
    headers: {
      'Content-Type': 'image/webp',
      'Content-Length': String(served.size),
      ETag: served.etag,
      'Cache-Control': CACHE,
      'X-Content-Type-Options': 'nosniff',
    },
  });
}

/** GET /api/files/photos: the Photos view's pages; GET /api/files/:id/thumbnail: a file's picture, small (256 px) or large (1,600 px), made now if it was not yet. */
export function thumbnailRoutes(ctx: AppContext) {
  const { thumbnails } = ctx.services;
  return routes([
    route('GET /api/files/photos', {
      query: photosQuery,
      handler: ({ principal, query, set }) => {
        const page = thumbnails.photos(principal, query);
        if (page.nextCursor) set.headers['X-Next-Cursor'] = page.nextCursor;
        return page.items;
      },
    }),
    route('GET /api/files/:id/thumbnail', {
      query: thumbnailQuery,
      handler: async ({ principal, params, query, request }) =>
        thumbnailResponse(await thumbnails.forCaller(principal, params.id, query.size, request.headers.get('if-none-match'))),
    }),
  ]);
}
