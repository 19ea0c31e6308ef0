import { AppError, badRequest, Messages, requestAborted, uploadAborted } from '../errors.ts';
import { releaseChunk } from '../lib/buffers.ts';
import { strictUtf8 } from '../lib/utf8.ts';

const JSON_BODY_LIMIT = 1024 * 1024;

const consumed = new WeakSet<Request>();
// A body read by the guard (a sign-in limiter keyed by email) is read once; the handler gets the same value.
const parsed = new WeakMap<Request, Promise<unknown>>();

/** Records that the request's body was read to its end. */
export function markBodyConsumed(request: Request): void {
  consumed.add(request);
}

/**
 * Whether the request came with a body that was not read to its end. An error answered then closes the
 * connection: otherwise the runtime keeps receiving (and discarding) the rest, a GiB after a 413.
 */
export function bodyLeftUnread(request: Request): boolean {
  return !consumed.has(request) && declaresBody(request);
}

/** Whether the request says it carries a body (a length above 0, or chunked). */
function declaresBody(request: Request): boolean {
  if (!request.body) return false;
  const length = request.headers.get('content-length');
  return length === null ? request.headers.has('transfer-encoding') : Number(length) > 0;
}

/** Elysia's parse step returns this instead of reading: bodies are read by handlers, after their guards. */
export const DEFERRED_BODY = Object.freeze({ deferred: true });

async function readLimited(request: Request, limit: number, opts: { tooLarge?: string; strict?: boolean } = {}): Promise<string> {
  const declared = Number(request.headers.get('content-length') ?? NaN);
  const tooLarge = opts.tooLarge ?? Messages.bodyTooLarge;
  if (declared > limit) throw new AppError(413, tooLarge);
  if (!request.body) return '';
  const chunks: Uint8Array[] = [];
  let total = 0;
  const reader = request.body.getReader();
  for (;;) {
    let read: Awaited<ReturnType<typeof reader.read>>;
    try {
      read = await reader.read();
    } catch {
      // The body can only fail to arrive because the client hung up: like an aborted upload, a 499.
      throw requestAborted();
    }
    const { done, value } = read;
    if (done) {
      if (total < declared) throw requestAborted();
      markBodyConsumed(request);
      break;
    }
    total += value.byteLength;
    if (total > limit) {
      await reader.cancel();
      throw new AppError(413, tooLarge);
    }
    chunks.push(value);
  }
  if (!opts.strict) return Buffer.concat(chunks).toString('utf8');
  const text = strictUtf8(Buffer.concat(chunks));
  // Replacing the bytes with U+FFFD would store a property value other than the one sent.
  if (text === null) throw badRequest('The request body is not valid UTF-8: send XML bodies encoded as UTF-8');
  return text;
}

/**
 * The JSON body of a request (at most 1 MiB), or `{}` when there is none. Called by a handler after
 * its auth guard, so a refused request never has its body read.
 */
export function readJson(request: Request): Promise<unknown> {
  let body = parsed.get(request);
  if (!body) parsed.set(request, (body = parseJson(request)));
  return body;
}

/**
 * 415 for a compressed body: every body is read as sent (JSON, forms, WebDAV's XML, uploaded bytes), so gzip
 * bytes would read as broken JSON or XML, or be stored as the file's content.
 */
function refuseEncoded(request: Request): void {
  const encoding = request.headers.get('content-encoding')?.trim();
  if (encoding && encoding.toLowerCase() !== 'identity') {
    throw new AppError(415, `Content-Encoding ${encoding.slice(0, 100)} is not supported: send the request body uncompressed`);
  }
}

/** refuseEncoded for WebDAV and tus, where a body-less request (a MKCOL, an empty PUT) with the header has nothing to decode. */
function refuseEncodedBody(request: Request): void {
  if (declaresBody(request)) refuseEncoded(request);
}

async function parseJson(request: Request): Promise<unknown> {
  const type = request.headers.get('content-type') ?? '';
  refuseEncoded(request);
  const text = await readLimited(request, JSON_BODY_LIMIT);
  if (text.trim() === '') return {};
  if (!/^application\/(.+\+)?json\b/i.test(type)) throw badRequest(Messages.notJson);
  try {
    return JSON.parse(text);
  } catch {
    throw badRequest(Messages.invalidJson);
  }
}

/** A text body (WebDAV's XML) of at most 1 MiB, '' when there is none. */
export async function readText(request: Request): Promise<string> {
  refuseEncodedBody(request);
  return readLimited(request, JSON_BODY_LIMIT);
}

/** WebDAV's XML body (at most 1 MiB), '' when there is none; bytes that are not UTF-8 are a 400. */
export async function readXmlText(request: Request): Promise<string> {
  refuseEncodedBody(request);
  return readLimited(request, JSON_BODY_LIMIT, { tooLarge: 'Request body too large (the limit for XML bodies is 1 MiB)', strict: true });
}

/**
 * A JSON body, or an HTML form post (`application/x-www-form-urlencoded`) read into the same shape:
 * each of `arrayFields` as the list of its values, other fields as their last value. A browser posts a
 * form so that a streamed answer (a ZIP) goes to its download manager instead of into page memory.
 */
export async function readJsonOrForm(request: Request, arrayFields: readonly string[]): Promise<unknown> {
  if (!/^application\/x-www-form-urlencoded\b/i.test(request.headers.get('content-type') ?? '')) return readJson(request);
  refuseEncoded(request);
  const out = new Map<string, string | string[]>();
  // One pass over the fields: a lookup by name scans the whole form, so one per field was quadratic (a MiB of fields: a minute of CPU).
  for (const [key, value] of new URLSearchParams(await readLimited(request, JSON_BODY_LIMIT))) {
    const listed = out.get(key);
    if (!arrayFields.includes(key)) out.set(key, value);
    else if (Array.isArray(listed)) listed.push(value);
    else out.set(key, [value]);
  }
  return Object.fromEntries(out);
}

/**
 * A raw request body as it arrives, one chunk at a time; a chunk is freed when the next is asked for,
 * so its reader must have copied what it keeps by then. A client that hangs up is the upload's 499.
 */
export async function* readBody(request: Request): AsyncGenerator<Uint8Array> {
  // Thrown at the first read, so that what the reader checks before the bytes (rights, quota) answers first.
  refuseEncodedBody(request);
  if (!request.body) return markBodyConsumed(request);
  const declared = Number(request.headers.get('content-length') ?? NaN);
  const reader = request.body.getReader();
  let done = false;
  let total = 0;
  try {
    for (;;) {
      let read: Awaited<ReturnType<typeof reader.read>>;
      try {
        read = await reader.read();
      } catch {
        throw uploadAborted();
      }
      if (read.done) {
        done = true;
        // A body that ends short of its declared length was cut off by the client.
        if (total < declared) throw uploadAborted();
        markBodyConsumed(request);
        return;
      }
      total += read.value.byteLength;
      yield read.value;
      releaseChunk(read.value);
    }
  } finally {
    if (!done) await reader.cancel().catch(() => {});
  }
}
