import type { AppContext } from '../context.ts';
import { readJsonOrForm } from './body.ts';
import { fileResponse, zipResponse } from './download-responses.ts';
import { idsBody } from '../contract/files.ts';
import { route, routes } from './route.ts';
import { currentValidators } from '../lib/etags.ts';

/** Downloads: a file (with ranges), a folder or a selection as a streamed ZIP. */
export function downloadRoutes(ctx: AppContext) {
  const { downloads } = ctx.services;
  return routes([
    route('GET /api/files/:id/download', {
      handler: ({ principal, params, query, request }) => {
        const row = downloads.resolve(principal, params.id);
        if (row.type === 'folder') return zipResponse(downloads.downloadFolder(principal, row), request);
        return fileResponse(downloads, row, request, {
          inline: query.inline === '1',
          reader: principal,
          validators: currentValidators(row),
        });
      },
    }),
    route('POST /api/files/download/bulk', {
      body: idsBody,
      read: (request) => readJsonOrForm(request, ['ids']),
      handler: ({ principal, body, request }) => zipResponse(downloads.zipSelection(principal, body.ids), request),
    }),
  ]);
}
