import { Elysia } from 'elysia';
import type { AppContext } from '../context.ts';
import { fileResponse } from './download-responses.ts';
import { sessionPlugin } from './guard.ts';

/** File versions: list, download (Range, ETag), restore and delete of a file's earlier contents. */
export function fileVersionRoutes(ctx: AppContext) {
  const { versions, downloads } = ctx.services;
  return new Elysia({ name: 'http/file-versions', seed: ctx.instanceId })
    .use(sessionPlugin(ctx))
    .get('/api/files/:id/versions', ({ principal, params }) => versions.list(principal, params.id), { session: true })
    .get(
      '/api/files/:id/versions/:versionId/download',
      ({ principal, params, request }) => {
        const row = versions.resolveDownload(principal, params.id, params.versionId);
        return fileResponse(downloads, row, request, { inline: false, reader: principal, etag: `"v-${params.versionId}"` });
      },
      { session: true },
    )
    .post(
      '/api/files/:id/versions/:versionId/restore',
      ({ principal, params }) => versions.restore(principal, params.id, params.versionId),
      { session: true },
    )
    .delete('/api/files/:id/versions/:versionId', ({ principal, params }) => versions.delete(principal, params.id, params.versionId), {
      session: true,
    });
}
