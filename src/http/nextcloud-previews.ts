import type { AppContext } from '../context.ts';
import { THUMBNAIL_SIZES, type ThumbnailSize } from '../contract/files.ts';
import { AppError, badRequest, Messages, notFound } from '../errors.ts';
import type { Principal } from '../services/identity/principal.ts';
import { davPath, type DavService, type DavTarget } from '../services/dav/dav.ts';
import { requestMeta } from './request-meta.ts';
import { route, routes } from './route.ts';
import { thumbnailResponse } from './thumbnails.ts';

/** The thumbnail that fits a requested box: the small one up to its own size, else the large one. */
function sizeFor(params: URLSearchParams): ThumbnailSize {
  const side = Math.max(Number(params.get('x')) || 0, Number(params.get('y')) || 0);
  return side > THUMBNAIL_SIZES.small ? 'large' : 'small';
}

/** The id of the live item at a path of the caller's WebDAV tree ("Shared with me/<share>/..." and team folders included); 404 when none. */
function itemIdAt(dav: DavService, caller: Principal, file: string): string {
  let target: DavTarget | null;
  try {
    target = dav.walk(caller, davPath(file.split('/').filter((s) => s !== ''))).target;
  } catch (err) {
    if (err instanceof AppError && err.status === 404) throw notFound(Messages.noThumbnail);
    throw err;
  }
  if (target?.kind !== 'item') throw notFound(Messages.noThumbnail);
  return target.item.id;
}

/**
 * The Nextcloud apps' previews (their grid, the auto-upload list): a file's thumbnail by fileid or by
 * path, the small or large one for the box asked for; 404 where a file has none. Signed in as WebDAV is.
 */
export function nextcloudPreviewRoutes(ctx: AppContext) {
  const { thumbnails, dav } = ctx.services;
  return routes([
    route('GET /index.php/core/preview', {
      handler: ({ request, server }) => {
        const params = new URL(request.url).searchParams;
        const fileId = params.get('fileId') ?? '';
        if (!/^\d{1,15}$/.test(fileId)) throw badRequest('fileId must be a file’s oc:fileid (a decimal number)');
        const caller = requestMeta(request).principal!;
        dav.allow(caller, 'thumbnails.view');
        return thumbnailResponse(
          { server, request },
          thumbnails.forFileId(caller, Number(fileId), sizeFor(params), request.headers.get('if-none-match')),
        );
      },
    }),
    route('GET /index.php/core/preview.png', {
      handler: ({ request, server }) => {
        const params = new URL(request.url).searchParams;
        const file = params.get('file');
        if (!file) throw badRequest('file must name a path under your WebDAV root, as /Photos/beach.jpg');
        const caller = requestMeta(request).principal!;
        dav.allow(caller, 'thumbnails.view');
        const id = itemIdAt(dav, caller, file);
        return thumbnailResponse(
          { server, request },
          thumbnails.forCaller(caller, id, sizeFor(params), request.headers.get('if-none-match')),
        );
      },
    }),
  ]);
}
