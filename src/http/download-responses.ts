import { AppError, Messages } from '../errors.ts';
import type { AuditPrincipal } from '../services/admin/audit.ts';
import type { DownloadFile, DownloadService, ZipDownload } from '../services/files/downloads.ts';
import { stripBidiControls } from '../services/files/names.ts';
import { countedBody } from './request-meta.ts';
import { parseRange } from '../lib/byte-range.ts';
import { noneMatchNames, rangeStillApplies } from '../lib/etags.ts';
import { inertType } from '../lib/media-type.ts';

/** `Content-Disposition` with an ASCII fallback and the name in RFC 5987 form (docs/compatibility.md › Files), bidi controls dropped. */
function contentDisposition(kind: 'inline' | 'attachment', name: string): string {
  const filename = stripBidiControls(name);
  // `%` too: some browsers percent-decode the fallback, so `100%41.txt` would be saved as `100A.txt`.
  const ascii = filename.replace(/[^\x20-\x7e]/g, '_').replace(/["\\%]/g, '_');
  const encoded = encodeURIComponent(filename).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `${kind}; filename="${ascii}"; filename*=UTF-8''${encoded}`;
}

/**
 * The Range a download serves, null when none or when If-Range voids it (RFC 9110 13.1.5): a file without an
 * `etag` has no validator an If-Range could match, so a client's stale copy is never patched with new bytes.
 * Only GET has ranges (RFC 9110 14.2: a server MUST ignore Range on other methods), so a HEAD answers 200 whole.
 */
export function servedRange(request: Request, etag?: string): string | null {
  if (request.method !== 'GET') return null;
  const ifRange = request.headers.get('if-range');
  if (ifRange !== null && (!etag || !rangeStillApplies(ifRange, etag))) return null;
  return request.headers.get('range');
}

/** A download's caching: kept, but checked each time; a 304 repeats it (RFC 9110 15.4.5). */
export const DOWNLOAD_CACHE = 'private, no-cache';

// A file's bytes never run as a page of ours, even if a browser is talked into rendering them.
const CONTENT_CSP = "default-src 'none'; img-src 'self'; media-src 'self'; style-src 'unsafe-inline'; sandbox";

/**
 * A single file as a response: Range (206, or 416 with `bytes *\/size`), `inline=1` only for a sniffed
 * raster image, Content-Disposition per docs/compatibility.md › Files. `reader` is the login to audit, when there is one; `etag`
 * is given for immutable content only.
 */
export async function fileResponse(
  downloads: DownloadService,
  row: DownloadFile,
  request: Request,
  opts: { inline: boolean; reader?: AuditPrincipal; etag?: string },
): Promise<Response> {
  // Content that never changes (a version) has a strong ETag: a client that holds it gets a 304.
  const ifNoneMatch = request.headers.get('if-none-match');
  if (opts.etag && ifNoneMatch && (ifNoneMatch.trim() === '*' || noneMatchNames(ifNoneMatch, opts.etag)))
    return new Response(null, { status: 304, headers: { ETag: opts.etag, 'Cache-Control': DOWNLOAD_CACHE } });
  const range = parseRange(servedRange(request, opts.etag), row.size);
  if (range === 'unsatisfiable')
    throw new AppError(416, Messages.rangeNotSatisfiable, undefined, { 'Content-Range': `bytes */${row.size}` });
  const inlineType = opts.inline ? await downloads.inlineImageType(row) : null;
  const length = range ? range.end - range.start : row.size;
  if (request.method === 'HEAD') {
    // HEAD opens nothing (it is no download), and its stand-in body is not logged as bytes sent.
    const head = openedFileResponse(row, request, range, null, { inlineType, etag: opts.etag });
    return new Response(countedLength(length), { status: head.status, headers: head.headers });
  }
  return openedFileResponse(row, request, range, await downloads.openFile(row, range ?? undefined, opts.reader), {
    inlineType,
    etag: opts.etag,
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
  opts: { inlineType?: string | null; etag?: string } = {},
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
  if (opts.etag) headers.ETag = opts.etag;
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
