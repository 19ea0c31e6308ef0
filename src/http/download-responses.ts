import { AppError, Messages, preconditionFailed } from '../errors.ts';
import type { AuditPrincipal } from '../services/admin/audit.ts';
import type { DownloadFile, DownloadService, ZipDownload } from '../services/files/downloads.ts';
import { stripBidiControls } from '../services/files/names.ts';
import { countedBody } from './request-meta.ts';
import { parseRange } from '../lib/byte-range.ts';
import { evaluateRead, rangeUnder, readConditionsOf, type Validators } from '../lib/etags.ts';
import { inertType } from '../lib/media-type.ts';

/** `Content-Disposition` with an ASCII fallback and the name in RFC 5987 form (docs/compatibility.md › Files), bidi controls dropped. */
function contentDisposition(kind: 'inline' | 'attachment', name: string): string {
  const filename = stripBidiControls(name);
  // `%` too: some browsers percent-decode the fallback, so `100%41.txt` would be saved as `100A.txt`.
  const ascii = filename.replace(/[^\x20-\x7e]/g, '_').replace(/["\\%]/g, '_');
  const encoded = encodeURIComponent(filename).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `${kind}; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}

/** A download's caching: kept, but checked each time; a 304 repeats it (RFC 9110 15.4.5). */
export const DOWNLOAD_CACHE = 'private, no-cache';

// A file's bytes never run as a page of ours, even if a browser is talked into rendering them.
const CONTENT_CSP = "default-src 'none'; img-src 'self'; media-src 'self'; style-src 'unsafe-inline'; sandbox";

/** A file's validators as headers: its ETag, and Last-Modified when it has a modified time. */
function validatorHeaders(v: Validators): Record<string, string> {
  const headers: Record<string, string> = { ETag: v.etag };
  if (v.modifiedAt !== undefined) headers['Last-Modified'] = new Date(v.modifiedAt).toUTCString();
  return headers;
}

/** 304: the client's copy is current; the validators and caching a 200 would have sent (RFC 9110 15.4.5), no body. */
export function notModifiedResponse(v: Validators): Response {
  return new Response(null, { status: 304, headers: { ...validatorHeaders(v), 'Cache-Control': DOWNLOAD_CACHE } });
}

/**
 * A single file as a response: the preconditions (412, 304: evaluateRead), Range (206, or 416 with `bytes *\/size`;
 * If-Range kept only by the ETag), `inline=1` only for a sniffed raster image, Content-Disposition per
 * docs/compatibility.md › Files. `reader` is the login to audit, when there is one. `validators`: a version's
 * ETag, or currentValidators (one ETag at every door); without them no precondition applies and If-Range never
 * matches. The caller has checked access first: a precondition never answers before a 401, 403 or 404.
 */
export async function fileResponse(
  downloads: DownloadService,
  row: DownloadFile,
  request: Request,
  opts: { inline: boolean; reader?: AuditPrincipal; validators?: Validators },
): Promise<Response> {
  const { validators } = opts;
  const conditions = readConditionsOf(request);
  if (validators) {
    const outcome = evaluateRead(conditions, validators);
    if (outcome === 'not-modified') {
      // The client opens its copy: read as a download is (not HEAD, which opens nothing).
      if (request.method === 'GET') downloads.markRead(row);
      return notModifiedResponse(validators);
    }
    if (outcome !== 'send') throw preconditionFailed(outcome);
  }
  const range = parseRange(rangeUnder(conditions, validators?.etag), row.size);
  if (range === 'unsatisfiable')
    throw new AppError(416, Messages.rangeNotSatisfiable, undefined, { 'Content-Range': `bytes */${row.size}` });
  const inlineType = opts.inline ? await downloads.inlineImageType(row) : null;
  const length = range ? range.end - range.start : row.size;
  if (request.method === 'HEAD') {
    // HEAD opens nothing (it is no download), and its stand-in body is not logged as bytes sent.
    const head = openedFileResponse(row, request, range, null, { inlineType, validators });
    return new Response(countedLength(length), { status: head.status, headers: head.headers });
  }
  return openedFileResponse(row, request, range, await downloads.openFile(row, range ?? undefined, opts.reader), {
    inlineType,
    validators,
  });
}

const ZEROS = new Uint8Array(1 << 22);

/**
 * HEAD's stand-in body: the router answers HEAD by counting GET's body for its Content-Length (and sends none),
 * so it is given `length` bytes that cost nothing to count, views of one buffer, no file read.
 */
function countedLength(length: number): ReadableStream<Uint8Array> {
  let left = length;
  return new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (left === 0) return controller.close();
        const n = Math.min(left, ZEROS.length);
        left -= n;
        controller.enqueue(ZEROS.subarray(0, n));
      },
    },
    { highWaterMark: 0 },
  );
}

/** A file's bytes already opened (`range` of them, null: all) as the response fileResponse writes; `stream` null: HEAD's headers alone. */
export function openedFileResponse(
  row: Pick<DownloadFile, 'name' | 'size' | 'mimeType'>,
  request: Request,
  range: { start: number; end: number } | null,
  stream: ReadableStream<Uint8Array> | null,
  opts: { inlineType?: string | null; validators?: Validators } = {},
): Response {
  const { inlineType = null } = opts;
  const body = stream && countedBody(request, stream);
  const headers: Record<string, string> = {
    'Content-Type': inlineType ?? inertType(row.mimeType),
    'Content-Disposition': contentDisposition(inlineType ? 'inline' : 'attachment', row.name),
    // Bun 1.4 sends stream bodies chunked and drops this (oven-sh/bun#10507); runtimes that honour it show progress.
    'Content-Length': String(range ? range.end - range.start : row.size),
    'Accept-Ranges': 'bytes',
    'Cache-Control': DOWNLOAD_CACHE,
    'Content-Security-Policy': CONTENT_CSP,
  };
  if (opts.validators) Object.assign(headers, validatorHeaders(opts.validators));
  if (!range) return new Response(body, { headers });
  headers['Content-Range'] = `bytes ${range.start}-${range.end - 1}/${row.size}`;
  return new Response(body, { status: 206, headers });
}

/** A streamed ZIP; no ranges. */
export function zipResponse(zip: ZipDownload, request: Request): Response {
  const headers = {
    'Content-Type': 'application/zip',
    'Content-Disposition': contentDisposition('attachment', zip.filename),
    'Cache-Control': 'no-store',
  };
  // Bun reads a HEAD's stream to the end to state its length: the whole folder, for headers alone.
  if (request.method === 'HEAD') {
    void zip.stream.cancel();
    // As GET says it: chunked, no length (Bun would state 0 for an empty HEAD).
    return new Response(null, { headers: { ...headers, 'Transfer-Encoding': 'chunked' } });
  }
  return new Response(countedBody(request, zip.stream), { headers });
}
