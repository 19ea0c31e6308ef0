import { Elysia } from 'elysia';
import { z } from 'zod';
import type { AppContext } from '../context.ts';
import { AppError, Messages } from '../errors.ts';
import type { SortField } from '../services/tree.ts';
import type { Page } from '../services/items.ts';
import type { InlineRun, TrashPlan } from '../services/trash.ts';
import { isDiskFullError } from '../services/disk-space.ts';
import { readJson, readJsonOrForm } from './body.ts';
import { fileResponse, zipResponse } from './download-responses.ts';
import { readMultipart } from './multipart.ts';
import { sessionPlugin } from './guard.ts';
import { validate } from './validate.ts';

const SORT_FIELDS = ['name', 'size', 'modified', 'accessedAt', 'deletedAt'] as const;

const listQuery = (defaultSort: SortField) =>
  z.object({
    sortBy: z.enum(SORT_FIELDS).catch(defaultSort),
    order: z.enum(['asc', 'desc']).catch('desc'),
    limit: z.coerce
      .number()
      .int('limit must be a whole number')
      .min(1, 'limit must be at least 1')
      .max(500, 'limit must be at most 500')
      .default(200),
    cursor: z.string().min(1).optional(),
  });

const folderListQuery = listQuery('modified').extend({ parentId: z.string().optional() });

const nameField = z.string({ error: 'name is required' });
const idField = z.string({ error: 'id is required' }).min(1);
const idsField = z
  .array(z.string().min(1), { error: 'ids must be an array of item ids' })
  .min(1, 'Select at least one item')
  .max(500, 'At most 500 ids per request');
const parentIdField = z.string().min(1).nullable().optional();

const idsBody = z.object({ ids: idsField });
const folderBody = z.object({ name: nameField, parentId: parentIdField });
const renameBody = z.object({ id: idField, name: nameField });
const moveBody = z.object({ ids: idsField, parentId: parentIdField });
const starBody = z.object({ ids: idsField, starred: z.boolean({ error: 'starred must be true or false' }) });
const checkBody = z.object({ fileSize: z.number({ error: 'fileSize must be a number of bytes' }).int().min(0) });
const searchQuery = z.object({
  q: z.string().optional(),
  query: z.string().optional(),
  limit: z.coerce.number().int().optional().catch(undefined),
});
const recentQuery = z.object({ limit: z.coerce.number().int().optional().catch(undefined) });

const ndjsonLine = (value: unknown) => new TextEncoder().encode(`${JSON.stringify(value)}\n`);

/** Files, folders, transfers, trash and jobs (SPEC "Files"): validate, call a service, map the result. */
export function fileRoutes(ctx: AppContext) {
  const { items, uploads, downloads, trash, copy, fileJobs } = ctx.services;

  /** SPEC "Progress streaming": NDJSON lines when asked for, else the single JSON body. */
  const answerPlan = async (plan: TrashPlan, request: Request, set: { status?: number | string }) => {
    if (plan.queued) {
      set.status = 202;
      return { message: 'Queued as a background job', queued: true, jobId: plan.jobId };
    }
    if (!(request.headers.get('accept') ?? '').includes('application/x-ndjson')) {
      for (;;) {
        const step = await plan.run.next();
        if (step.done) return step.value;
      }
    }
    return ndjson(plan.run);
  };

  const ndjson = (run: InlineRun) =>
    new Response(
      new ReadableStream<Uint8Array>({
        async pull(controller) {
          try {
            const step = await run.next();
            if (step.done) {
              controller.enqueue(ndjsonLine({ type: 'done', ...step.value }));
              controller.close();
            } else controller.enqueue(ndjsonLine({ type: 'progress', ...step.value }));
          } catch (err) {
            ctx.log.error('operation failed part-way', { err: err instanceof Error ? (err.stack ?? err.message) : String(err) });
            const message = err instanceof AppError ? err.message : isDiskFullError(err) ? Messages.diskFull : Messages.internal;
            controller.enqueue(ndjsonLine({ type: 'error', message }));
            controller.close();
          }
        },
      }),
      { headers: { 'Content-Type': 'application/x-ndjson; charset=utf-8', 'Cache-Control': 'no-cache' } },
    );

  const uploadRequest = (request: Request) => {
    const declared = Number(request.headers.get('content-length'));
    return { parts: readMultipart(request), signal: request.signal, sizeHint: Number.isFinite(declared) ? declared : undefined };
  };

  // Cached pages come back as the same object: serialize and encode each once.
  const pageJson = new WeakMap<Page, Uint8Array>();
  const pageResponse = (page: Page, set: { headers: Record<string, string | number> }) => {
    let body = pageJson.get(page);
    if (body === undefined) pageJson.set(page, (body = new TextEncoder().encode(JSON.stringify(page.items))));
    set.headers['Content-Type'] = 'application/json';
    if (page.nextCursor) set.headers['X-Next-Cursor'] = page.nextCursor;
    return body;
  };

  return (
    new Elysia({ name: 'http/files', seed: ctx.instanceId })
      .use(sessionPlugin(ctx))
      // Listing, searching and details need no permission (SPEC "Authentication" 6).
      .get('/api/files', ({ principal, query, set }) => pageResponse(items.list(principal, validate(folderListQuery, query)), set), {
        session: true,
      })
      .get('/api/files/stats', ({ principal }) => items.stats(principal), { session: true })
      .get(
        '/api/files/search',
        ({ principal, query }) => {
          const q = validate(searchQuery, query);
          return items.search(principal, { q: q.q ?? q.query ?? '', limit: q.limit });
        },
        { session: true },
      )
      .get('/api/files/recent', ({ principal, query }) => items.recent(principal, validate(recentQuery, query)), { session: true })
      .get(
        '/api/files/starred',
        ({ principal, query, set }) => pageResponse(items.listStarred(principal, validate(listQuery('modified'), query)), set),
        { session: true },
      )
      .get(
        '/api/files/shared',
        ({ principal, query, set }) => pageResponse(items.listShared(principal, validate(listQuery('modified'), query)), set),
        { session: true },
      )
      .get(
        '/api/files/trash',
        ({ principal, query, set }) => pageResponse(trash.list(principal, validate(listQuery('deletedAt'), query)), set),
        { session: true },
      )
      .get(
        '/api/files/jobs/:jobId',
        ({ principal, params, set }) => {
          const status = fileJobs.status(principal, params.jobId);
          if (status.pending) set.status = 202;
          return status.body;
        },
        { session: true },
      )
      .get('/api/files/:id/info', ({ principal, params }) => items.info(principal, params.id), { session: true })
      .post(
        '/api/files/folder',
        async ({ principal, request }) => items.createFolder(principal, validate(folderBody, await readJson(request))),
        { session: true },
      )
      .post(
        '/api/files/upload/check',
        async ({ principal, request }) => uploads.check(principal, validate(checkBody, await readJson(request)).fileSize),
        { session: true },
      )
      .post('/api/files/upload', ({ principal, request }) => uploads.upload(principal, uploadRequest(request)), { session: true })
      .post('/api/files/upload/bulk', ({ principal, request }) => uploads.uploadBulk(principal, uploadRequest(request)), { session: true })
      .post('/api/files/:id/replace', ({ principal, params, request }) => uploads.replace(principal, params.id, uploadRequest(request)), {
        session: true,
      })
      .post('/api/files/:id/derived', ({ principal, params, request }) => uploads.derive(principal, params.id, uploadRequest(request)), {
        session: true,
      })
      .post(
        '/api/files/copy',
        async ({ principal, request, set }) => {
          const result = copy.start(principal, validate(moveBody, await readJson(request)));
          set.status = 202;
          return result;
        },
        { session: true },
      )
      .post('/api/files/move', async ({ principal, request }) => items.move(principal, validate(moveBody, await readJson(request))), {
        session: true,
      })
      .post('/api/files/rename', async ({ principal, request }) => items.rename(principal, validate(renameBody, await readJson(request))), {
        session: true,
      })
      .post('/api/files/star', async ({ principal, request }) => items.star(principal, validate(starBody, await readJson(request))), {
        session: true,
      })
      .post(
        '/api/files/delete',
        async ({ principal, request, set }) =>
          answerPlan(trash.planTrash(principal, validate(idsBody, await readJson(request)).ids), request, set),
        { session: true },
      )
      .post(
        '/api/files/trash/restore',
        async ({ principal, request, set }) =>
          answerPlan(trash.planRestore(principal, validate(idsBody, await readJson(request)).ids), request, set),
        { session: true },
      )
      .post(
        '/api/files/trash/delete',
        async ({ principal, request, set }) => {
          const result = trash.startPermanentDelete(principal, validate(idsBody, await readJson(request)).ids);
          set.status = 202;
          return result;
        },
        { session: true },
      )
      .post(
        '/api/files/trash/empty',
        ({ principal, set }) => {
          const result = trash.startEmpty(principal);
          if (result.queued) set.status = 202;
          return result;
        },
        { session: true },
      )
      .get(
        '/api/files/:id/download',
        async ({ principal, params, query, request }) => {
          const row = downloads.resolve(principal, params.id);
          if (row.type === 'folder') return zipResponse(downloads.downloadFolder(principal, row));
          return fileResponse(downloads, row, request, { inline: query.inline === '1', reader: principal });
        },
        { session: true },
      )
      .post(
        '/api/files/download/bulk',
        async ({ principal, request }) =>
          zipResponse(downloads.zipSelection(principal, validate(idsBody, await readJsonOrForm(request, ['ids'])).ids)),
        { session: true },
      )
  );
}
