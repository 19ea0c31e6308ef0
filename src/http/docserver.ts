import type { AppContext } from '../context.ts';
import { route, routes } from './route.ts';
import { type EditorPage, renderEditorPage } from '../web/docserver-pages.ts';
import { readJson } from './body.ts';
import { fileResponse } from './download-responses.ts';
import { requestMeta } from './request-meta.ts';

type Set = { headers: Record<string, string | number>; status?: number | string };

/** An HTML page as a plain body with its headers on `set`; the viewer may be framed by Coffer's own pages (docs/compatibility.md › Operations). */
function htmlPage(set: Set, page: EditorPage): string {
  Object.assign(set.headers, {
    'Content-Type': 'text/html; charset=utf-8',
    'Content-Security-Policy': page.csp,
    'X-Frame-Options': 'SAMEORIGIN',
    // The page carries a signed document link.
    'Cache-Control': 'no-store',
  });
  return page.html;
}

/**
 * The document server integration (docs/api.md › Document server): the editor config and viewer
 * page for signed-in logins, and the file link and callback the document server itself calls, which
 * carry no session and are trusted only through their signatures. The rules live in DocserverService.
 */
export function docserverRoutes(ctx: AppContext) {
  const { docserver, downloads } = ctx.services;
  const open = (request: Request, principal: Parameters<typeof docserver.open>[0], id: string) =>
    docserver.open(principal, id, { requestOrigin: requestMeta(request).origin, acceptLanguage: request.headers.get('accept-language') });

  return routes([
    route('GET /api/docserver/config/:id', {
      handler: async ({ principal, params, request }) => {
        const { config, token, docserverJsUrl } = await open(request, principal, params.id);
        return { config, token, docserverJsUrl };
      },
    }),
    route('GET /api/docserver/viewer/:id', {
      handler: async ({ principal, params, request, set }) => {
        const opened = await open(request, principal, params.id);
        return htmlPage(set, renderEditorPage({ title: opened.config.document.title, ...opened }));
      },
    }),
    route('GET /api/docserver/file/:id', {
      handler: async ({ params, query, request }) => {
        const { row, reader } = await docserver.fileForLink(params.id, query.t, requestMeta(request).ip);
        return fileResponse(downloads, row, request, { inline: false, reader });
      },
    }),
    route('POST /api/docserver/callback', {
      handler: async ({ request }) =>
        docserver.callback(await readJson(request), request.headers.get('authorization'), requestMeta(request).ip),
    }),
  ]);
}
