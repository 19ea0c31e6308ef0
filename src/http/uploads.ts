import type { AppContext } from '../context.ts';
import { uploadCheckBody } from '../contract/files.ts';
import { readMultipart } from './multipart.ts';
import { route, routes } from './route.ts';

/** A multipart body as the upload service reads it: streamed parts, the hang-up signal, the declared size. */
export function uploadRequest(request: Request) {
  const declared = Number(request.headers.get('content-length'));
  return { parts: readMultipart(request), signal: request.signal, sizeHint: Number.isFinite(declared) ? declared : undefined };
}

/** Uploads (docs/api.md › Upload rules): check, one file, bulk, replace and derive, streamed after the guard. */
export function uploadRoutes(ctx: AppContext) {
  const { uploads } = ctx.services;
  return routes([
    route('POST /api/files/upload/check', {
      body: uploadCheckBody,
      handler: ({ principal, body }) => uploads.check(principal, body.fileSize, body.parentId),
    }),
    route('POST /api/files/upload', {
      form: { parentId: 'target folder (default: the root)', lastModifiedTimes: 'milliseconds since the epoch', file: 'the file' },
      handler: ({ principal, request }) => uploads.upload(principal, uploadRequest(request)),
    }),
    route('POST /api/files/upload/bulk', {
      form: {
        files: 'the files, one part each (repeated)',
        parentId: 'target folder (default: the root)',
        relativePaths: 'one per file, in order: its path below parentId; missing folders are created',
        clientIds: 'one per file, in order: echoed back',
        lastModifiedTimes: 'one per file, in order: milliseconds since the epoch',
      },
      handler: ({ principal, request }) => uploads.uploadBulk(principal, uploadRequest(request)),
    }),
    route('POST /api/files/:id/replace', {
      form: { file: 'the new content' },
      handler: ({ principal, params, request }) => uploads.replace(principal, params.id, uploadRequest(request)),
    }),
    route('POST /api/files/:id/derived', {
      form: { file: 'the derived file, stored beside the original' },
      handler: ({ principal, params, request }) => uploads.derive(principal, params.id, uploadRequest(request)),
    }),
  ]);
}
