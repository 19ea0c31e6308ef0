import type { AppContext } from '../context.ts';
import type { z } from 'zod';
import {
  albumItemsBody,
  albumLinkBody,
  albumItemsQuery,
  albumListQuery,
  albumMemberBody,
  albumPatchBody,
  newAlbumBody,
} from '../contract/albums.ts';
import { thumbnailQuery } from '../contract/files.ts';
import { fileResponse } from './download-responses.ts';
import { currentValidators } from '../lib/etags.ts';
import { requestMeta } from './request-meta.ts';
import { route, routes } from './route.ts';
import { thumbnailResponse } from './thumbnails.ts';

/** Albums: an account's named sets of its photos and videos. */
export function albumRoutes(ctx: AppContext) {
  const { albums, albumLinks } = ctx.services;
  const origin = (request: Request) => requestMeta(request).origin;
  const linkOptions = ({ expiry, expiresAt, ...rest }: z.infer<typeof albumLinkBody>) => ({
    ...rest,
    ...(expiresAt ? { expiry: { at: Date.parse(expiresAt) } } : expiry ? { expiry } : {}),
  });
  return routes([
    route('GET /api/albums', { query: albumListQuery, handler: ({ principal, query }) => albums.list(principal, query) }),
    route('POST /api/albums', {
      body: newAlbumBody,
      handler: ({ principal, body, set }) => {
        set.status = 201;
        return albums.create(principal, body);
      },
    }),
    route('GET /api/albums/:id', {
      query: albumItemsQuery,
      handler: ({ principal, params, query }) => albums.get(principal, params.id, query),
    }),
    route('PATCH /api/albums/:id', {
      body: albumPatchBody,
      handler: ({ principal, params, body }) => albums.update(principal, params.id, body),
    }),
    route('DELETE /api/albums/:id', { handler: ({ principal, params }) => albums.remove(principal, params.id) }),
    route('POST /api/albums/:id/items', {
      body: albumItemsBody,
      handler: ({ principal, params, body }) => albums.addItems(principal, params.id, body.ids),
    }),
    route('DELETE /api/albums/:id/items', {
      body: albumItemsBody,
      handler: ({ principal, params, body }) => albums.removeItems(principal, params.id, body.ids),
    }),
    route('GET /api/albums/:id/items/:itemId/thumbnail', {
      query: thumbnailQuery,
      handler: ({ principal, params, query, request, server }) =>
        thumbnailResponse(
          { server, request },
          albums.thumbnail(principal, params.id, params.itemId, query.size, request.headers.get('if-none-match')),
        ),
    }),
    // A member downloads the album's files through the album, as it sees their thumbnails.
    route('GET /api/albums/:id/items/:itemId/download', {
      handler: ({ principal, params, query, request }) => {
        const item = albums.item(principal, params.id, params.itemId);
        return fileResponse(ctx.services.downloads, item, request, {
          inline: query.inline === '1',
          reader: principal,
          validators: currentValidators(item),
        });
      },
    }),
    route('GET /api/albums/:id/members', { handler: ({ principal, params }) => albums.members(principal, params.id) }),
    route('POST /api/albums/:id/members', {
      body: albumMemberBody,
      handler: ({ principal, params, body, set }) => {
        const result = albums.addMember(principal, params.id, body);
        set.status = 201;
        return result;
      },
    }),
    // The album's public link (the gallery share page), its owner's alone.
    route('GET /api/albums/:id/link', {
      handler: ({ principal, params, request }) => albumLinks.get(principal, params.id, origin(request)),
    }),
    route('POST /api/albums/:id/link', {
      body: albumLinkBody,
      handler: async ({ principal, params, body, request, set }) => {
        const result = await albumLinks.create(principal, params.id, linkOptions(body), origin(request));
        set.status = 201;
        return result;
      },
    }),
    route('PATCH /api/albums/:id/link', {
      body: albumLinkBody,
      handler: ({ principal, params, body, request }) => albumLinks.update(principal, params.id, linkOptions(body), origin(request)),
    }),
    route('GET /api/albums/:id/link/qr', {
      handler: ({ principal, params, request }) => albumLinks.qrCode(principal, params.id, origin(request)),
    }),
    route('DELETE /api/albums/:id/link', { handler: ({ principal, params }) => albumLinks.remove(principal, params.id) }),
    route('DELETE /api/albums/:id/members/:accountId', {
      handler: ({ principal, params }) => albums.removeMember(principal, params.id, params.accountId),
    }),
  ]);
}
