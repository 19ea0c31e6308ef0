import type { AppContext } from '../context.ts';
import { AppError, Messages } from '../errors.ts';
import { diskRefusal } from '../services/files/disk-space.ts';
import type { InlineRun, TrashPlan } from '../services/files/trash.ts';
import { idsBody, type ProgressLine, trashQuery } from '../contract/files.ts';
import { pageResponse } from './fields.ts';
import { route, routes } from './route.ts';

// The lines the web app reads (contract/files.ts): a change to either side fails tsc.
const ndjsonLine = (value: ProgressLine) => new TextEncoder().encode(`${JSON.stringify(value)}\n`);

/** The trash: list, move to trash, restore, delete permanently, empty. */
export function trashRoutes(ctx: AppContext) {
  const { trash } = ctx.services;

  /** docs/api.md › Progress streaming: NDJSON lines when asked for, else the single JSON body. */
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
            const message = err instanceof AppError ? err.message : (diskRefusal(err)?.message ?? Messages.internal);
            controller.enqueue(ndjsonLine({ type: 'error', message }));
            controller.close();
          }
        },
      }),
      { headers: { 'Content-Type': 'application/x-ndjson; charset=utf-8', 'Cache-Control': 'no-cache' } },
    );

  return routes([
    route('GET /api/files/trash', {
      query: trashQuery,
      handler: ({ principal, query, set }) => pageResponse(trash.list(principal, query), set),
    }),
    route('POST /api/files/delete', {
      body: idsBody,
      handler: ({ principal, body, request, set }) => answerPlan(trash.planTrash(principal, body.ids), request, set),
    }),
    route('POST /api/files/trash/restore', {
      body: idsBody,
      handler: ({ principal, body, request, set }) => answerPlan(trash.planRestore(principal, body.ids), request, set),
    }),
    route('POST /api/files/trash/delete', {
      body: idsBody,
      handler: ({ principal, body, set }) => {
        const result = trash.startPermanentDelete(principal, body.ids);
        set.status = 202;
        return result;
      },
    }),
    route('POST /api/files/trash/empty', {
      handler: ({ principal, set }) => {
        const result = trash.startEmpty(principal);
        if (result.queued) set.status = 202;
        return result;
      },
    }),
  ]);
}
