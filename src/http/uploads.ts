import { Elysia } from 'elysia';
import { z } from 'zod';
import type { AppContext } from '../context.ts';
import { readJson } from './body.ts';
import { sessionPlugin } from './guard.ts';
import { readMultipart } from './multipart.ts';
import { validate } from './validate.ts';

const checkBody = z.object({ fileSize: z.number({ error: 'fileSize must be a number of bytes' }).int().min(0) });

/** A multipart body as the upload service reads it: streamed parts, the hang-up signal, the declared size. */
function uploadRequest(request: Request) {
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
      { session: true },
    )
    .post('/api/files/upload', ({ principal, request }) => uploads.upload(principal, uploadRequest(request)), { session: true })
    .post('/api/files/upload/bulk', ({ principal, request }) => uploads.uploadBulk(principal, uploadRequest(request)), { session: true })
    .post('/api/files/:id/replace', ({ principal, params, request }) => uploads.replace(principal, params.id, uploadRequest(request)), {
      session: true,
    })
    .post('/api/files/:id/derived', ({ principal, params, request }) => uploads.derive(principal, params.id, uploadRequest(request)), {
      session: true,
    });
}
