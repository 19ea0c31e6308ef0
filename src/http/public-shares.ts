import { z } from 'zod';
import type { AppContext } from '../context.ts';
import type { Item } from '../services/files/tree.ts';
import { AppError, Messages, notFound } from '../errors.ts';
import { toPublicItem } from '../services/files/item-views.ts';
import { renderErrorPage, renderFilePage, renderFolderPage, SHARE_PAGE_CSP } from '../web/share-pages.ts';
import { fileResponse, zipResponse } from './download-responses.ts';
import { requestMeta } from './request-meta.ts';
import { route, routes } from './route.ts';
import { thumbnailResponse } from './thumbnails.ts';
import { thumbnailQuery } from '../contract/files.ts';

const pageQuery = z.object({
  limit: z.coerce
    .number()
    .int('limit must be a whole number')
    .min(1, 'limit must be at least 1')
    .max(200, 'limit must be at most 200')
    .default(100),
  cursor: z.string().min(1).optional(),
});

type PageQuery = z.infer<typeof pageQuery>;

const wantsJson = (request: Request) => (request.headers.get('accept') ?? '').includes('application/json');
const wantsHtml = (request: Request) => (request.headers.get('accept') ?? '').includes('text/html');

const PAGE_HEADERS = { 'Content-Type': 'text/html; charset=utf-8', 'Content-Security-Policy': SHARE_PAGE_CSP, 'Cache-Control': 'no-store' };

type Set = { headers: Record<string, string | number>; status?: number | string };

/** A page as a plain body with headers on `set`: a returned Response would be re-wrapped by Elysia around a stream. */
function htmlPage(set: Set, html: string, status = 200): string {
  Object.assign(set.headers, PAGE_HEADERS);
  set.status = status;
  return html;
}

/**
 * The public share pages under /s/ (no session: no cookie is read or set here). Browsers get HTML,
 * `Accept: application/json` gets `{items, nextCursor}`; errors are a small page or JSON likewise.
 */
export function publicShareRoutes(ctx: AppContext) {
  const { shares, downloads, thumbnails } = ctx.services;

  const answer = async (request: Request, set: Set, run: () => Promise<Response | object | string> | Response | object | string) => {
    try {
      return await run();
    } catch (err) {
      if (err instanceof AppError && wantsHtml(request) && !wantsJson(request))
        return htmlPage(set, renderErrorPage(err.status, err.message), err.status);
      throw err;
    }
  };

  // Pages come back as the same object until the database changes; render each once per link and folder.
  const rendered = new WeakMap<object, Map<string, string>>();
  // `paged.query` is validated when read: here, once the share is resolved, so a refusal gets the share's own error page.
  const folderView = (request: Request, set: Set, token: string, root: Item, folder: Item, paged: { query: PageQuery }) => {
    const q = paged.query;
    const page = shares.folderPage(root.accountId, folder.id, q);
    if (wantsJson(request)) return page;
    let forPage = rendered.get(page);
    if (!forPage) rendered.set(page, (forPage = new Map()));
    const key = `${token}/${folder.id}`;
    let html = forPage.get(key);
    if (html === undefined) {
      html = renderFolderPage({
        token,
        folder: toPublicItem(folder),
        trail: shares.trail(root, folder),
        isRoot: folder.id === root.id,
        items: page.items,
        nextCursor: page.nextCursor,
        limit: q.limit,
      });
      forPage.set(key, html);
    }
    return htmlPage(set, html);
  };

  return routes(ctx, 'http/public-shares', [
    route('GET /s/:token', {
      query: pageQuery,
      handler: (c) =>
        answer(c.request, c.set, async () => {
          const { params, request, set } = c;
          const { link, root } = shares.resolve(params.token);
          shares.recordVisit(link, root, requestMeta(request).ip, 'access');
          if (root.type === 'folder') return folderView(request, set, params.token, root, root, c);
          if (wantsJson(request)) return { items: [toPublicItem(root)], nextCursor: null };
          const pictured = await thumbnails.ready(root);
          const previewable = !pictured && (await downloads.inlineImageType(root)) !== null;
          return htmlPage(set, renderFilePage({ token: params.token, file: toPublicItem(root), pictured, previewable }));
        }),
    }),
    route('GET /s/:token/folder/:id', {
      query: pageQuery,
      handler: (c) =>
        answer(c.request, c.set, () => {
          const { params, request, set } = c;
          const { link, root, item } = shares.itemInShare(params.token, params.id);
          if (item.type !== 'folder') throw notFound(Messages.itemNotInShare);
          shares.recordVisit(link, item, requestMeta(request).ip, 'access');
          return folderView(request, set, params.token, root, item, c);
        }),
    }),
    route('GET /s/:token/file/:id', {
      handler: ({ params, query, request, set }) =>
        answer(request, set, async () => {
          const { link, item } = shares.itemInShare(params.token, params.id);
          const range = request.headers.get('range');
          if (!range || /^bytes=0-/.test(range)) shares.recordVisit(link, item, requestMeta(request).ip, 'download');
          if (item.type === 'folder') return zipResponse(downloads.zipFolder(link.accountId, item), request);
          return fileResponse(downloads, item, request, { inline: query.inline === '1' });
        }),
    }),
    // Thumbnails of the share's items through the link alone, never an owner's session.
    route('GET /s/:token/thumbnail/:id', {
      query: thumbnailQuery,
      handler: (c) =>
        answer(c.request, c.set, async () => {
          const { item } = shares.itemInShare(c.params.token, c.params.id);
          return thumbnailResponse(await thumbnails.serve(item, c.query.size, c.request.headers.get('if-none-match')));
        }),
    }),
    route('GET /s/:token/zip', {
      handler: ({ params, request, set }) =>
        answer(request, set, () => {
          const { link, root } = shares.resolve(params.token);
          if (root.type !== 'folder') throw notFound(Messages.shareNotAFolder);
          shares.recordVisit(link, root, requestMeta(request).ip, 'download');
          return zipResponse(downloads.zipFolder(link.accountId, root), request);
        }),
    }),
  ]);
}
