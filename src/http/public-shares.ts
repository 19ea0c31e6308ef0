import { z } from 'zod';
import type { AppContext } from '../context.ts';
import type { HeldItem } from '../services/files/tree.ts';
import { AppError } from '../errors.ts';
import { newToken } from '../lib/ids.ts';
import { toPublicItem } from '../services/files/item-views.ts';
import { LinkLockedError, type LinkVisit } from '../services/sharing/link-access.ts';
import { UNLOCK_TTL_MS } from '../services/sharing/link-unlock.ts';
import type { PublicLink } from '../services/sharing/shares.ts';
import type { TusSender } from '../services/resumable-uploads/tus-uploads.ts';
import {
  renderAlbumPage,
  renderDropPage,
  renderErrorPage,
  renderFilePage,
  renderFolderPage,
  renderPasswordPage,
  SHARE_PAGE_CSP,
  showsOriginals,
} from '../web/share-pages.ts';
import { readJsonOrForm } from './body.ts';
import { readCookie } from './cookies.ts';
import { fileResponse, zipResponse } from './download-responses.ts';
import { currentValidators, readConditionsOf } from '../lib/etags.ts';
import { requestMeta } from './request-meta.ts';
import { uploadRequest } from './uploads.ts';
import { describeTus, overrideOf, tusProtocol } from './tus.ts';
import { route, routes } from './route.ts';
import { LINK_THUMBNAIL_CACHE, thumbnailResponse } from './thumbnails.ts';
import { thumbnailQuery } from '../contract/files.ts';
import { unlockBody } from '../contract/sharing.ts';
import { pageLimit } from '../contract/paging.ts';

const pageQuery = z.object({
  limit: pageLimit(200).default(100),
  cursor: z.string().min(1).optional(),
});

type PageQuery = z.infer<typeof pageQuery>;

const wantsJson = (request: Request) => (request.headers.get('accept') ?? '').includes('application/json');
const wantsHtml = (request: Request) => (request.headers.get('accept') ?? '').includes('text/html');

const PAGE_HEADERS = { 'Content-Type': 'text/html; charset=utf-8', 'Content-Security-Policy': SHARE_PAGE_CSP, 'Cache-Control': 'no-store' };

type Set = { headers: Record<string, string | number>; status?: number | string };

// Both cookies are scoped to one link's path, so a link's cookie never reaches another link.
const UNLOCK_COOKIE = 'coffer_unlock';
const VISIT_COOKIE = 'coffer_drop';
const linkCookie = (name: string, token: string, value: string, secure: boolean, maxAgeSeconds?: number, base = `/s/${token}`) =>
  `${name}=${value}; Path=${base}; HttpOnly; SameSite=Lax${maxAgeSeconds ? `; Max-Age=${maxAgeSeconds}` : ''}${secure ? '; Secure' : ''}`;

/** Where a visitor goes after unlocking: a path under the link, else the link's page (never another site). */
function nextPath(token: string, next: string | undefined, base = `/s/${token}`): string {
  return next && (next === base || next.startsWith(`${base}/`) || next.startsWith(`${base}?`)) && !next.includes('//') ? next : base;
}

/** Where a link's pages live. */
const linkBase = (kind: 'file' | 'album', token: string) => (kind === 'album' ? `/s/album/${token}` : `/s/${token}`);

/** What the link rules need of a request (its cookie, address, method and Range). */
const visitOf = (request: Request): LinkVisit => ({
  unlockCookie: readCookie(request, UNLOCK_COOKIE),
  ip: requestMeta(request).ip,
  headOnly: request.method === 'HEAD',
  conditions: readConditionsOf(request),
});

/** A page as a plain body with headers on `set`: a returned Response would be re-wrapped by Elysia around a stream. */
function htmlPage(set: Set, html: string, status = 200): string {
  Object.assign(set.headers, PAGE_HEADERS);
  set.status = status;
  return html;
}

/**
 * The public share pages under /s/ (no session; the only cookies are the link-scoped unlock and visit ones).
 * Browsers get HTML, `Accept: application/json` gets `{items, nextCursor}`; errors are a small page or JSON
 * likewise. A drop folder also takes files here, by form post or resumable (tus) upload.
 */
export function publicShareRoutes(ctx: AppContext) {
  const { shares, downloads, uploads, tusUploads, settings, thumbnails, albumLinks } = ctx.services;
  const tus = tusProtocol(tusUploads);
  const zipFolder = (accountId: string, folder: HeldItem) => downloads.zipFolder(accountId, folder);

  const answer = async (request: Request, set: Set, run: () => Promise<Response | object | string> | Response | object | string) => {
    try {
      return await run();
    } catch (err) {
      if (err instanceof AppError && wantsHtml(request) && !wantsJson(request)) {
        Object.assign(set.headers, err.headers);
        if (err instanceof LinkLockedError) {
          const url = new URL(request.url);
          const base = linkBase(err.kind, err.token);
          // After unlocking, a page is shown again; a refused post (an upload) goes back to the link's page.
          const next = request.method === 'GET' ? url.pathname + url.search : base;
          return htmlPage(set, renderPasswordPage({ token: err.token, next, wrong: false, base }), 401);
        }
        return htmlPage(set, renderErrorPage(err.status, err.message), err.status);
      }
      throw err;
    }
  };

  /** A link that takes uploads into its folder, and the visit they belong to (a cookie scoped to the link). */
  const dropTarget = (request: Request, set: Set, token: string, cap: 'page' | 'none') => {
    const { link, root } = shares.openDrop(token, visitOf(request), cap);
    const { ip, secure } = requestMeta(request);
    let visit = readCookie(request, VISIT_COOKIE);
    if (!visit || !/^[A-Za-z0-9_-]{22,64}$/.test(visit)) {
      visit = newToken(16);
      set.headers['Set-Cookie'] = linkCookie(VISIT_COOKIE, link.token, visit, secure);
    }
    return { link, root, ip, visit };
  };
  /** The visitor as the sender of a resumable upload: only this link reaches the uploads it starts. */
  const sender = (target: ReturnType<typeof dropTarget>): TusSender => ({
    ...shares.visitor(target.link, target.ip),
    drop: { linkId: target.link.id, visitId: target.visit },
  });

  // Pages come back as the same object until the database changes; render each once per link and folder.
  const rendered = new WeakMap<object, Map<string, string>>();
  // `paged.query` is validated when read: here, once the share is resolved, so a refusal gets the share's own error page.
  const folderView = (request: Request, set: Set, link: PublicLink, root: HeldItem, folder: HeldItem, paged: { query: PageQuery }) => {
    const token = link.token;
    const upload = link.mode === 'view_upload' && folder.id === root.id;
    const q = paged.query;
    const page = shares.folderPage(root.accountId, folder.id, q);
    if (wantsJson(request)) return page;
    let forPage = rendered.get(page);
    if (!forPage) rendered.set(page, (forPage = new Map()));
    const facts = shares.facts(link);
    // The link's own state (downloads left, expiry, the owner's name) is said on the page: part of what was rendered.
    const key = `${token}/${folder.id}/${upload}/${facts.downloadsLeft}/${facts.expiresAt}/${facts.sharedBy}`;
    let html = forPage.get(key);
    if (html === undefined) {
      html = renderFolderPage({
        token,
        folder: toPublicItem(folder, new Set()),
        trail: shares.trail(root, folder),
        isRoot: folder.id === root.id,
        items: page.items,
        nextCursor: page.nextCursor,
        limit: q.limit,
        upload,
        facts,
      });
      forPage.set(key, html);
    }
    return htmlPage(set, html);
  };

  /** A visitor's password for a link: the unlock cookie, then the page asked for (a form) or 204 (a script). */
  const unlock = async (
    request: Request,
    set: Set,
    kind: 'file' | 'album',
    body: { password: string; next?: string | undefined },
    attempt: (ip: string) => Promise<{ token: string; cookie: string | null }>,
    token: string,
  ) => {
    const { secure, ip } = requestMeta(request);
    const base = linkBase(kind, token);
    const next = nextPath(token, body.next, base);
    const form = /^application\/x-www-form-urlencoded\b/i.test(request.headers.get('content-type') ?? '');
    let unlocked: { token: string; cookie: string | null };
    try {
      unlocked = await attempt(ip);
    } catch (err) {
      if (form && err instanceof AppError && err.status === 401)
        return htmlPage(set, renderPasswordPage({ token, next, wrong: true, base }), 401);
      throw err;
    }
    // A link without a password has nothing to unlock: the visitor simply goes on.
    if (unlocked.cookie)
      set.headers['Set-Cookie'] = linkCookie(UNLOCK_COOKIE, unlocked.token, unlocked.cookie, secure, UNLOCK_TTL_MS / 1000, base);
    set.headers['Cache-Control'] = 'no-store';
    if (form) {
      set.headers.Location = next;
      set.status = 303;
      return '';
    }
    set.status = 204;
    return '';
  };

  return routes([
    // An album's link: a gallery of the album's live photos and videos, each reached only through the album.
    route('GET /s/album/:token', {
      query: pageQuery,
      handler: ({ params, query, request, set }) =>
        answer(request, set, () => {
          const opened = albumLinks.openGallery(params.token, visitOf(request));
          const page = albumLinks.page(opened.album, query);
          if (wantsJson(request)) return { name: opened.album.name, ...page };
          return htmlPage(
            set,
            renderAlbumPage({
              token: opened.link.token,
              name: opened.album.name,
              ...page,
              limit: query.limit,
              facts: albumLinks.facts(opened),
              pictured: albumLinks.pictured(page.items),
            }),
          );
        }),
    }),
    route('GET /s/album/:token/file/:id', {
      handler: ({ params, query, request, set }) =>
        answer(request, set, async () => {
          const item = albumLinks.openDownload(params.token, visitOf(request), params.id);
          return fileResponse(downloads, item, request, { inline: query.inline === '1', validators: currentValidators(item) });
        }),
    }),
    route('GET /s/album/:token/thumbnail/:id', {
      query: thumbnailQuery,
      handler: (c) =>
        answer(c.request, c.set, async () =>
          thumbnailResponse(
            c,
            albumLinks.thumbnail(c.params.token, visitOf(c.request), c.params.id, c.query.size, c.request.headers.get('if-none-match')),
            LINK_THUMBNAIL_CACHE,
          ),
        ),
    }),
    // "Download all": one ZIP counts as one download, as a file link's folder ZIP does.
    route('GET /s/album/:token/zip', {
      handler: ({ params, request, set }) =>
        answer(request, set, () => zipResponse(albumLinks.openZip(params.token, visitOf(request)), request)),
    }),
    route('POST /s/album/:token/unlock', {
      body: unlockBody,
      read: (request) => readJsonOrForm(request, []),
      handler: ({ params, body, request, set }) =>
        answer(request, set, () =>
          unlock(request, set, 'album', body, (ip) => albumLinks.attemptUnlock(params.token, body.password, ip), params.token),
        ),
    }),
    route('GET /s/:token', {
      query: pageQuery,
      handler: (c) =>
        answer(c.request, c.set, async () => {
          const { params, request, set } = c;
          const { link, root } = shares.openRoot(params.token, visitOf(request));
          if (link.mode === 'upload') {
            const visit = readCookie(request, VISIT_COOKIE);
            const received = visit ? shares.dropsOfVisit(link, visit) : [];
            if (wantsJson(request)) return { items: [], nextCursor: null, received };
            return htmlPage(set, renderDropPage({ token: link.token, folderName: root.name, facts: shares.facts(link), received }));
          }
          if (root.type === 'folder') return folderView(request, set, link, root, root, c);
          const pictures = thumbnails.previewable([root.id]);
          if (wantsJson(request)) return { items: [toPublicItem(root, pictures)], nextCursor: null };
          const pictured = await thumbnails.ready(root);
          const facts = shares.facts(link);
          // The image as it is, when no thumbnail stands in: its fetch is a download, so not on a capped link.
          const previewable = !pictured && showsOriginals(facts) && (await downloads.inlineImageType(root)) !== null;
          return htmlPage(set, renderFilePage({ token: params.token, file: toPublicItem(root, pictures), pictured, previewable, facts }));
        }),
    }),
    route('GET /s/:token/folder/:id', {
      query: pageQuery,
      handler: (c) =>
        answer(c.request, c.set, () => {
          const { link, root, folder } = shares.openFolder(c.params.token, visitOf(c.request), c.params.id);
          return folderView(c.request, c.set, link, root, folder, c);
        }),
    }),
    route('GET /s/:token/file/:id', {
      handler: ({ params, query, request, set }) =>
        answer(request, set, async () => {
          const { item, zip } = shares.openDownload(params.token, visitOf(request), params.id, zipFolder);
          if (zip) return zipResponse(zip, request);
          return fileResponse(downloads, item, request, { inline: query.inline === '1', validators: currentValidators(item) });
        }),
    }),
    // Thumbnails of the share's items through the link alone, never an owner's session.
    route('GET /s/:token/thumbnail/:id', {
      query: thumbnailQuery,
      handler: (c) =>
        answer(c.request, c.set, async () => {
          // As the pages: the link's password and expiry apply, a drop folder shows nothing, no download is counted.
          const { item } = shares.openItem(c.params.token, visitOf(c.request), c.params.id);
          return thumbnailResponse(c, thumbnails.serve(item, c.query.size, c.request.headers.get('if-none-match')), LINK_THUMBNAIL_CACHE);
        }),
    }),
    route('GET /s/:token/zip', {
      handler: ({ params, request, set }) =>
        answer(request, set, () => zipResponse(shares.openZip(params.token, visitOf(request), zipFolder), request)),
    }),
    route('POST /s/:token/unlock', {
      // The page's form posts it form-encoded; a script sends JSON.
      body: unlockBody,
      read: (request) => readJsonOrForm(request, []),
      handler: ({ params, body, request, set }) =>
        answer(request, set, () =>
          unlock(request, set, 'file', body, (ip) => shares.attemptUnlock(params.token, body.password, ip), params.token),
        ),
    }),
    route('POST /s/:token/upload', {
      form: { file: 'the files, one part each (repeated)', uploader: 'who is sending them (optional, at most 100 characters)' },
      handler: ({ params, request, set }) =>
        answer(request, set, async () => {
          const { link, root, ip, visit } = dropTarget(request, set, params.token, 'page');
          const items = await shares.drop(link, root, { visitId: visit, ip }, (owner, within) =>
            uploads.drop(owner, root.id, uploadRequest(request), within),
          );
          if (wantsHtml(request) && !wantsJson(request)) {
            set.headers.Location = `/s/${link.token}`;
            set.status = 303;
            return '';
          }
          set.status = 201;
          return { items };
        }),
    }),
    // Resumable uploads into a drop folder: tus 1.0 as /api/files/tus, without a session; the folder is the link's.
    route('OPTIONS /s/:token/tus', { handler: ({ set }) => describeTus(set, settings.get('maxUploadBytes')) }),
    route('POST /s/:token/tus', {
      handler: ({ params, request, set }) =>
        answer(request, set, () => {
          const target = dropTarget(request, set, params.token, 'page');
          return tus.create(sender(target), request, set, {
            base: `/s/${params.token}/tus`,
            // The folder is the link's: a visitor names no other place, no paths below it, and no file to overwrite.
            metadata: ({ parentId: _, relativePath: __, replaceId: ___, ...metadata }) => ({ ...metadata, parentId: target.root.id }),
          });
        }),
    }),
    route('GET /s/:token/tus/:uploadId', {
      handler: ({ params, request, set }) =>
        answer(request, set, () => {
          const who = sender(dropTarget(request, set, params.token, 'none'));
          if (request.method === 'HEAD') return tus.head(who, params.uploadId, request, set);
          const { item } = tusUploads.result(who, params.uploadId);
          return { item: { name: item.name, size: item.size } };
        }),
    }),
    route('PATCH /s/:token/tus/:uploadId', {
      handler: ({ params, request, set }) =>
        answer(request, set, () => tus.append(sender(dropTarget(request, set, params.token, 'page')), params.uploadId, request, set)),
    }),
    route('DELETE /s/:token/tus/:uploadId', {
      handler: ({ params, request, set }) =>
        answer(request, set, () => tus.terminate(sender(dropTarget(request, set, params.token, 'none')), params.uploadId, request, set)),
    }),
    route('POST /s/:token/tus/:uploadId', {
      handler: ({ params, request, set }) =>
        answer(request, set, () => {
          // Ending an upload is allowed past the link's downloads, as a DELETE is; bytes are not.
          const ends = overrideOf(request) === 'DELETE';
          return tus.overridden(sender(dropTarget(request, set, params.token, ends ? 'none' : 'page')), params.uploadId, request, set);
        }),
    }),
  ]);
}
