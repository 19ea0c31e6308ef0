import type { AppContext } from '../context.ts';
import { fileResponse } from './download-responses.ts';
import { route, routes } from './route.ts';

/** File versions: list, download (Range, ETag), restore and delete of a file's earlier contents. */
export function fileVersionRoutes(ctx: AppContext) {
  const { versions, downloads } = ctx.services;
  return routes([
    route('GET /api/files/:id/versions', { handler: ({ principal, params }) => versions.list(principal, params.id) }),
    route('GET /api/files/:id/versions/:versionId/download', {
      handler: ({ principal, params, request }) => {
        const row = versions.resolveDownload(principal, params.id, params.versionId);
        return fileResponse(downloads, row, request, { inline: false, reader: principal, validators: { etag: `"v-${params.versionId}"` } });
      },
    }),
    route('POST /api/files/:id/versions/:versionId/restore', {
      handler: ({ principal, params }) => versions.restore(principal, params.id, params.versionId),
    }),
    route('DELETE /api/files/:id/versions/:versionId', {
      handler: ({ principal, params }) => versions.delete(principal, params.id, params.versionId),
    }),
  ]);
}
