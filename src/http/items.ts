import type { AppContext } from '../context.ts';
import {
  folderBody,
  folderQuery,
  liveListQuery,
  placeBody,
  recentQuery,
  renameBody,
  searchQuery,
  sharedQuery,
  starBody,
} from '../contract/files.ts';
import { pageResponse } from './fields.ts';
import { route, routes } from './route.ts';

/** The file tree (docs/api.md › API reference): lists, search, details, folders, rename, move, star, copy and job polling. */
export function itemRoutes(ctx: AppContext) {
  const { items, copy, fileJobs } = ctx.services;
  return routes([
    route('GET /api/files', {
      query: folderQuery,
      handler: ({ principal, query, set }) => pageResponse(items.list(principal, query), set),
    }),
    route('GET /api/files/stats', { handler: ({ principal }) => items.stats(principal) }),
    route('GET /api/files/search', {
      query: searchQuery,
      handler: ({ principal, query }) =>
        ctx.services.contentSearch.search(principal, {
          q: query.q ?? query.query ?? '',
          limit: query.limit,
          content: query.content === 'true',
          includeShared: query.includeShared === 'true',
        }),
    }),
    route('GET /api/files/recent', { query: recentQuery, handler: ({ principal, query }) => items.recent(principal, query) }),
    route('GET /api/files/starred', {
      query: liveListQuery,
      handler: ({ principal, query, set }) => pageResponse(items.listStarred(principal, query), set),
    }),
    route('GET /api/files/shared', {
      query: sharedQuery,
      handler: ({ principal, query, set }) => pageResponse(items.listShared(principal, query), set),
    }),
    route('GET /api/files/:id/info', { handler: ({ principal, params }) => items.info(principal, params.id) }),
    route('POST /api/files/folder', { body: folderBody, handler: ({ principal, body }) => items.createFolder(principal, body) }),
    route('POST /api/files/move', { body: placeBody, handler: ({ principal, body }) => items.move(principal, body) }),
    route('POST /api/files/rename', { body: renameBody, handler: ({ principal, body }) => items.rename(principal, body) }),
    route('POST /api/files/star', { body: starBody, handler: ({ principal, body }) => items.star(principal, body) }),
    route('POST /api/files/copy', {
      body: placeBody,
      handler: ({ principal, body, set }) => {
        const result = copy.start(principal, body);
        set.status = 202;
        return result;
      },
    }),
    route('GET /api/files/jobs/:jobId', {
      handler: ({ principal, params, set }) => {
        const status = fileJobs.status(principal, params.jobId);
        if (status.pending) set.status = 202;
        return status.body;
      },
    }),
  ]);
}
