import { Elysia } from 'elysia';
import type { AppContext } from '../context.ts';
import { readJsonOrForm } from './body.ts';
import { fileResponse, zipResponse } from './download-responses.ts';
import { idsBody } from './fields.ts';
import { sessionPlugin } from './guard.ts';
import { validate } from './validate.ts';
import { describeInput } from './openapi.ts';

/** Downloads: a file (with ranges), a folder or a selection as a streamed ZIP. */
export function downloadRoutes(ctx: AppContext) {
  const { downloads } = ctx.services;
  return new Elysia({ name: 'http/downloads', seed: ctx.instanceId })
    .use(sessionPlugin(ctx))
    .get(
      '/api/files/:id/download',
      async ({ principal, params, query, request }) => {
        const row = downloads.resolve(principal, params.id);
        if (row.type === 'folder') return zipResponse(downloads.downloadFolder(principal, row), request);
        return fileResponse(downloads, row, request, { inline: query.inline === '1', reader: principal });
      },
      { session: true },
    )
    .post(
      '/api/files/download/bulk',
      async ({ principal, request }) =>
        zipResponse(downloads.zipSelection(principal, validate(idsBody, await readJsonOrForm(request, ['ids'])).ids), request),
      { session: true, detail: describeInput({ body: idsBody }) },
    );
}
