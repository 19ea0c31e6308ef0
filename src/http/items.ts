import { Elysia } from 'elysia';
import { z } from 'zod';
import type { AppContext } from '../context.ts';
import { readJson } from './body.ts';
import { listQuery, pageResponse, placeBody } from './fields.ts';
import { sessionPlugin } from './guard.ts';
import { validate } from './validate.ts';
import { describeInput } from './openapi.ts';

const name = z.string({ error: 'name is required' });
const folderBody = z.object({ name, parentId: z.string().min(1).nullable().optional() });
const renameBody = z.object({ id: z.string({ error: 'id is required' }).min(1), name });
const starBody = placeBody.pick({ ids: true }).extend({ starred: z.boolean({ error: 'starred must be true or false' }) });
const searchQuery = z.object({
  q: z.string().optional(),
  query: z.string().optional(),
  limit: z.coerce.number().int().optional().catch(undefined),
  // Also items inside what other accounts share with the caller's (widening: absent means own items only).
  includeShared: z.enum(['true', 'false']).optional().catch(undefined),
});
const recentQuery = z.object({ limit: z.coerce.number().int().optional().catch(undefined) });
// Built once: a zod schema costs more to build than a cached page costs to answer.
const folderQuery = listQuery('modified').extend({ parentId: z.string().optional() });
const liveListQuery = listQuery('modified');
// include=people also lists items shared with people (widening: absent means links only, as before).
const sharedQuery = liveListQuery.extend({ include: z.enum(['people']).optional().catch(undefined) });

/** The file tree (SPEC "Files"): lists, search, details, folders, rename, move, star, copy and job polling. */
export function itemRoutes(ctx: AppContext) {
  const { items, copy, fileJobs } = ctx.services;
  return new Elysia({ name: 'http/items', seed: ctx.instanceId })
    .use(sessionPlugin(ctx))
    .get('/api/files', ({ principal, query, set }) => pageResponse(items.list(principal, validate(folderQuery, query)), set), {
      session: true,
      detail: describeInput({ query: folderQuery }),
    })
    .get('/api/files/stats', ({ principal }) => items.stats(principal), { session: true })
    .get(
      '/api/files/search',
      ({ principal, query }) => {
        const q = validate(searchQuery, query);
        return items.search(principal, { q: q.q ?? q.query ?? '', limit: q.limit, includeShared: q.includeShared === 'true' });
      },
      { session: true, detail: describeInput({ query: searchQuery }) },
    )
    .get('/api/files/recent', ({ principal, query }) => items.recent(principal, validate(recentQuery, query)), {
      session: true,
      detail: describeInput({ query: recentQuery }),
    })
    .get(
      '/api/files/starred',
      ({ principal, query, set }) => pageResponse(items.listStarred(principal, validate(liveListQuery, query)), set),
      { session: true, detail: describeInput({ query: liveListQuery }) },
    )
    .get('/api/files/shared', ({ principal, query, set }) => pageResponse(items.listShared(principal, validate(sharedQuery, query)), set), {
      session: true,
      detail: describeInput({ query: sharedQuery }),
    })
    .get('/api/files/:id/info', ({ principal, params }) => items.info(principal, params.id), { session: true })
    .post(
      '/api/files/folder',
      async ({ principal, request }) => items.createFolder(principal, validate(folderBody, await readJson(request))),
      { session: true, detail: describeInput({ body: folderBody }) },
    )
    .post('/api/files/move', async ({ principal, request }) => items.move(principal, validate(placeBody, await readJson(request))), {
      session: true,
      detail: describeInput({ body: placeBody }),
    })
    .post('/api/files/rename', async ({ principal, request }) => items.rename(principal, validate(renameBody, await readJson(request))), {
      session: true,
      detail: describeInput({ body: renameBody }),
    })
    .post('/api/files/star', async ({ principal, request }) => items.star(principal, validate(starBody, await readJson(request))), {
      session: true,
      detail: describeInput({ body: starBody }),
    })
    .post(
      '/api/files/copy',
      async ({ principal, request, set }) => {
        const result = copy.start(principal, validate(placeBody, await readJson(request)));
        set.status = 202;
        return result;
      },
      { session: true, detail: describeInput({ body: placeBody }) },
    )
    .get(
      '/api/files/jobs/:jobId',
      ({ principal, params, set }) => {
        const status = fileJobs.status(principal, params.jobId);
        if (status.pending) set.status = 202;
        return status.body;
      },
      { session: true },
    );
}
