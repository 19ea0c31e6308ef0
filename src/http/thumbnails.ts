import type { AppContext } from '../context.ts';
import { photosQuery, thumbnailQuery } from '../contract/files.ts';
import type { Context } from 'elysia';
import { TASK_TIMEOUT_MS } from '../services/thumbnails/pool.ts';
import type { ServedThumbnail, UnchangedThumbnail } from '../services/thumbnails/thumbnails.ts';
import { DOWNLOAD_CACHE } from './download-responses.ts';
import { route, routes } from './route.ts';

// The ETag names the content (its object key), which never changes under it: cached for good.
const CACHE = 'private, max-age=31536000, immutable';
// Through a share link the link itself may end (revoked, new password, expiry): kept, but asked about each time, as its downloads.
export const LINK_THUMBNAIL_CACHE = DOWNLOAD_CACHE;

// A picture made now is silent until done, up to the pool's task time: the connection's idle timeout must not end it first.
const MAKING_SECONDS = Math.min(255, TASK_TIMEOUT_MS / 1000 + 30);

/** A thumbnail served (made now if need be), or 304 when the client holds it already. */
export async function thumbnailResponse(
  c: { server: Context['server']; request: Request },
  making: Promise<ServedThumbnail | UnchangedThumbnail>,
  cache = CACHE,
): Promise<Response> {
  c.server?.timeout(c.request, MAKING_SECONDS);
  const served = await making;
  if ('unchanged' in served) return new Response(null, { status: 304, headers: { ETag: served.etag, 'Cache-Control': cache } });
  return new Response(served.body, {
    headers: {
      'Content-Type': 'image/webp',
      'Content-Length': String(served.size),
      ETag: served.etag,
      'Cache-Control': cache,
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
      handler: ({ principal, params, query, request, server }) =>
        thumbnailResponse(
          { server, request },
          thumbnails.forCaller(principal, params.id, query.size, request.headers.get('if-none-match')),
        ),
    }),
  ]);
}
