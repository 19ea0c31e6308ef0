import type { AppContext } from '../context.ts';
import { route, routes } from './route.ts';
import { AppError, badRequest, Messages } from '../errors.ts';
import type { TusBody, TusMetadata, TusSender, TusState, TusUploadService } from '../services/resumable-uploads/tus-uploads.ts';
import { readBody } from './body.ts';
import { strictUtf8 } from '../lib/utf8.ts';

const TUS_VERSION = '1.0.0';
const EXTENSIONS = 'creation,creation-with-upload,termination,expiration';
const OFFSET_STREAM = 'application/offset+octet-stream';
const METADATA_KEYS = new Set(['filename', 'parentId', 'relativePath', 'lastModified', 'clientId', 'filetype', 'replaceId', 'uploader']);
const WHOLE = /^\d{1,16}$/;

/** 412 unless the request says it speaks tus 1.0.0 (every tus request but OPTIONS must). */
function requireTus(request: Request): void {
  if (request.headers.get('tus-resumable') !== TUS_VERSION) {
    throw new AppError(412, Messages.tusVersion, undefined, { 'Tus-Version': TUS_VERSION });
  }
}

function wholeHeader(request: Request, name: string, message: string): number {
  const text = request.headers.get(name)?.trim() ?? '';
  if (!WHOLE.test(text) || Number(text) > Number.MAX_SAFE_INTEGER) throw badRequest(message);
  return Number(text);
}

/** `key base64value` pairs separated by commas (tus "creation"); unknown keys are ignored, repeated ones refused. */
function parseMetadata(header: string | null): TusMetadata {
  const out: Record<string, string> = {};
  const seen = new Set<string>();
  for (const pair of (header ?? '').split(',')) {
    if (pair.trim() === '') continue;
    const [key, value, extra] = pair.trim().split(/ +/);
    if (!key || extra !== undefined || seen.has(key) || (value !== undefined && !/^[A-Za-z0-9+/]*={0,2}$/.test(value))) {
      throw badRequest(Messages.tusBadMetadata);
    }
    seen.add(key);
    if (METADATA_KEYS.has(key)) out[key] = decodeValue(value ?? '');
  }
  return out as TusMetadata;
}

/** A metadata value: base64 of UTF-8 text, else 400 (a name is never quietly made of replacement characters). */
function decodeValue(value: string): string {
  if (value.replace(/=+$/, '').length % 4 === 1) throw badRequest(Messages.tusBadMetadata);
  const text = strictUtf8(Buffer.from(value, 'base64'));
  if (text === null) throw badRequest(Messages.tusBadMetadata);
  return text;
}

/** The method a POST to an upload names in X-HTTP-Method-Override (tus core), upper-cased; undefined without one. */
export const overrideOf = (request: Request) => request.headers.get('x-http-method-override')?.trim().toUpperCase();

/** The bytes a request carries for the upload: only as application/offset+octet-stream. */
function bytesOf(request: Request): TusBody | null {
  const declared = request.headers.get('content-length');
  const length = declared === null ? null : Number(declared);
  const hasBody = length === null ? request.headers.has('transfer-encoding') : length > 0;
  const type = (request.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== OFFSET_STREAM) {
    if (hasBody || type !== '') throw new AppError(415, Messages.tusContentType);
    return null;
  }
  return { chunks: readBody(request), declared: length };
}

/** The headers every answer about an upload's progress carries. */
function progressHeaders(state: TusState): Record<string, string> {
  const headers: Record<string, string> = { 'Upload-Offset': String(state.offset) };
  if (state.expiresAt !== null) headers['Upload-Expires'] = new Date(state.expiresAt).toUTCString();
  if (state.itemId) headers['Upload-Item-Id'] = state.itemId;
  return headers;
}

/** The answer to OPTIONS: which tus version and extensions the server speaks, and the largest upload. */
export function describeTus(set: SetLike, maxBytes: number): null {
  set.status = 204;
  Object.assign(set.headers, {
    'Tus-Resumable': TUS_VERSION,
    'Tus-Version': TUS_VERSION,
    'Tus-Extension': EXTENSIONS,
    'Tus-Max-Size': String(maxBytes),
  });
  return null;
}

/**
 * Resumable uploads, tus 1.0 (creation, creation-with-upload, termination, expiration) at
 * /api/files/tus. The guard has checked the session and `files.upload` before any of these runs; the
 * service checks the rest before a byte is accepted. HEAD is served by the GET route (Elysia
 * routes it there): HEAD reports the offset, GET the created file.
 */
export function tusRoutes(ctx: AppContext) {
  const { tusUploads, settings } = ctx.services;
  const tus = tusProtocol(tusUploads);
  return routes([
    route('OPTIONS /api/files/tus', { handler: ({ set }) => describeTus(set, settings.get('maxUploadBytes')) }),
    route('POST /api/files/tus', {
      handler: ({ principal, request, set }) => tus.create(principal, request, set, { base: '/api/files/tus' }),
    }),
    route('GET /api/files/tus/:uploadId', {
      handler: ({ principal, params, request, set }) =>
        request.method === 'HEAD' ? tus.head(principal, params.uploadId, request, set) : tusUploads.result(principal, params.uploadId),
    }),
    route('PATCH /api/files/tus/:uploadId', {
      handler: ({ principal, params, request, set }) => tus.append(principal, params.uploadId, request, set),
    }),
    route('DELETE /api/files/tus/:uploadId', {
      handler: ({ principal, params, request, set }) => tus.terminate(principal, params.uploadId, request, set),
    }),
    route('POST /api/files/tus/:uploadId', {
      handler: ({ principal, params, request, set }) => tus.overridden(principal, params.uploadId, request, set),
    }),
  ]);
}

type SetLike = { status?: number | string; headers: Record<string, string | number> };

/**
 * The tus protocol over the upload service, for a sender its route has decided: the signed-in login at
 * /api/files/tus, or a drop folder's visitor at /s/<token>/tus (whose folder the route fixes in `metadata`).
 */
export function tusProtocol(tusUploads: TusUploadService) {
  const tus = {
    async create(who: TusSender, request: Request, set: SetLike, opts: { base: string; metadata?: (m: TusMetadata) => TusMetadata }) {
      set.headers['Tus-Resumable'] = TUS_VERSION;
      requireTus(request);
      if (request.headers.has('upload-defer-length')) throw badRequest(Messages.tusBadLength);
      // Not offered: a part taken as a whole upload would become a file of its own (tus-js-client's parallelUploads).
      if (request.headers.has('upload-concat')) throw badRequest(Messages.tusNoConcat);
      const length = wholeHeader(request, 'upload-length', Messages.tusBadLength);
      const parsed = parseMetadata(request.headers.get('upload-metadata'));
      const state = await tusUploads.create(who, length, opts.metadata ? opts.metadata(parsed) : parsed, bytesOf(request));
      set.status = 201;
      Object.assign(set.headers, progressHeaders(state), { Location: `${opts.base}/${state.id}` });
      return null;
    },
    /** HEAD: the acknowledged offset (GET, the created file, is the route's own). */
    async head(who: TusSender, id: string, request: Request, set: SetLike) {
      set.headers['Tus-Resumable'] = TUS_VERSION;
      requireTus(request);
      const state = await tusUploads.status(who, id);
      Object.assign(set.headers, progressHeaders(state), { 'Upload-Length': String(state.length), 'Cache-Control': 'no-store' });
      return null;
    },
    async append(who: TusSender, id: string, request: Request, set: SetLike) {
      set.headers['Tus-Resumable'] = TUS_VERSION;
      requireTus(request);
      const body = bytesOf(request);
      const offset = wholeHeader(request, 'upload-offset', Messages.tusBadOffset);
      if (!body) throw new AppError(415, Messages.tusContentType);
      const state = await tusUploads.append(who, id, offset, body);
      set.status = 204;
      Object.assign(set.headers, progressHeaders(state));
      return null;
    },
    async terminate(who: TusSender, id: string, request: Request, set: SetLike) {
      set.headers['Tus-Resumable'] = TUS_VERSION;
      requireTus(request);
      await tusUploads.terminate(who, id);
      set.status = 204;
      return null;
    },
    /** A POST naming its method in X-HTTP-Method-Override (tus core; a network that passes only GET and POST). */
    overridden(who: TusSender, id: string, request: Request, set: SetLike) {
      const method = overrideOf(request);
      if (method === 'PATCH') return tus.append(who, id, request, set);
      if (method === 'DELETE') return tus.terminate(who, id, request, set);
      set.headers['Tus-Resumable'] = TUS_VERSION;
      throw new AppError(405, Messages.tusOverride, undefined, { Allow: 'HEAD, GET, PATCH, DELETE' });
    },
  };
  return tus;
}
