import { Elysia } from 'elysia';
import { z } from 'zod';
import type { AppContext } from '../context.ts';
import { readJson } from './body.ts';
import { sessionPlugin } from './guard.ts';
import { readMultipart } from './multipart.ts';
import { validate } from './validate.ts';
import { describeInput } from './openapi.ts';

const checkBody = z.object({ fileSize: z.number({ error: 'fileSize must be a number of bytes' }).int().min(0) });

/** A multipart body as the upload service reads it: streamed parts, the hang-up signal, the declared size. */
export function uploadRequest(request: Request) {
  const declared = Number(request.headers.get('content-length'));
  return { parts: readMultipart(request), signal: request.signal, sizeHint: Number.isFinite(declared) ? declared : undefined };
}

/** Uploads (SPEC "Upload rules"): check, one file, bulk, replace and derive, streamed after the guard. */
export function uploadRoutes(ctx: AppContext) {
  const { uploads } = ctx.services;
  return new Elysia({ name: 'http/uploads', seed: ctx.instanceId })
    .use(sessionPlugin(ctx))
    .post(
      '/api/files/upload/check',
      async ({ principal, request }) => uploads.check(principal, validate(checkBody, await readJson(request)).fileSize),
      { session: true, detail: describeInput({ body: checkBody }) },
    )
    .post('/api/files/upload', ({ principal, request }) => uploads.upload(principal, uploadRequest(request)), {
      session: true,
      detail: describeInput({
        form: { parentId: 'target folder (default: the root)', lastModifiedTimes: 'milliseconds since the epoch', file: 'the file' },
      }),
    })
    .post('/api/files/upload/bulk', ({ principal, request }) => uploads.uploadBulk(principal, uploadRequest(request)), {
      session: true,
      detail: describeInput({
        form: {
          files: 'the files, one part each (repeated)',
          parentId: 'target folder (default: the root)',
          relativePaths: 'one per file, in order: its path below parentId; missing folders are created',
          clientIds: 'one per file, in order: echoed back',
          lastModifiedTimes: 'one per file, in order: milliseconds since the epoch',
        },
      }),
    })
    .post('/api/files/:id/replace', ({ principal, params, request }) => uploads.replace(principal, params.id, uploadRequest(request)), {
      session: true,
      detail: describeInput({ form: { file: 'the new content' } }),
    })
    .post('/api/files/:id/derived', ({ principal, params, request }) => uploads.derive(principal, params.id, uploadRequest(request)), {
      session: true,
      detail: describeInput({ form: { file: 'the derived file, stored beside the original' } }),
    });
}
