// busboy's parsers from its private path, its framing redone (docs/development.md › Multipart parser): 0.06 against 0.27 CPU s/GiB.
import { basename, convertToUTF8, getDecoder, parseContentType, parseDisposition } from 'busboy/lib/utils.js';
import { AppError, badRequest, formTextTooLarge, Messages, uploadAborted } from '../errors.ts';
import { releaseChunk } from '../lib/buffers.ts';
import { markBodyConsumed } from './body.ts';
import { requestMeta } from './request-meta.ts';
import type { UploadPart } from '../services/files/uploads.ts';

/*
 * Why not busboy's stream: it scans every file byte for the boundary in JavaScript and hands file data
 * through a Readable, which together cost more CPU per GiB than encrypting it. This parser keeps busboy's
 * rules (its header, Content-Disposition and charset parsers are used as they are, and the framing below
 * follows its state machine) but finds boundaries with Buffer.indexOf and passes file data on as views of
 * the request's own chunks, one chunk at a time, so memory stays bounded whatever the upload's size.
 */

const FIELD_SIZE_LIMIT = 64 * 1024;
const FIELDS_LIMIT = 20_000;
/*
 * What all the text fields of one form (names and values) may add up to: they are held in memory until
 * the request ends. A budget for any form, plus some for each file part so far (a bulk upload sends a
 * path, a client id and a time per file), never more than the cap.
 */
export const TEXT_BUDGET_BASE = 1024 * 1024;
export const TEXT_BUDGET_PER_FILE = 16 * 1024;
export const TEXT_BUDGET_MAX = 4 * 1024 * 1024;
// busboy's limits for one part's header block.
const MAX_HEADER_PAIRS = 2000;
const MAX_HEADER_SIZE = 16 * 1024;

const CR = 13;
const LF = 10;
const DASH = 45;
const BUF_CR = Buffer.from('\r');
const BUF_DASH = Buffer.from('-');
const BUF_CRLF = Buffer.from('\r\n');

/** Characters allowed in a header name (RFC 7230 tchar). */
const TOKEN = new Uint8Array(256);
for (const c of "!#$%&'*+-.^_`|~") TOKEN[c.charCodeAt(0)] = 1;
for (let c = 48; c <= 57; c++) TOKEN[c] = 1;
for (let c = 65; c <= 90; c++) TOKEN[c] = 1;
for (let c = 97; c <= 122; c++) TOKEN[c] = 1;

/** Characters allowed in a header value: HTAB, visible ASCII, space and any byte >= 0x80. */
const FIELD_VCHAR = new Uint8Array(256);
FIELD_VCHAR[9] = 1;
for (let c = 32; c < 256; c++) FIELD_VCHAR[c] = c === 127 ? 0 : 1;

const paramDecoder = getDecoder('utf8');

type MultipartEvent =
  | { kind: 'field'; name: string; value: string }
  | { kind: 'file'; field: string; filename: string; mimeType: string }
  | { kind: 'data'; chunk: Uint8Array }
  | { kind: 'end-file' }
  | { kind: 'malformed' }
  | { kind: 'over-budget'; limit: number };

class MalformedBody extends Error {}

class TextBudgetExceeded extends Error {
  constructor(readonly limit: number) {
    super(`text fields over ${limit} bytes`);
  }
}

/** A part's header block, byte by byte as busboy reads it (names lower-cased, values as latin1). */
class HeaderParser {
  header: Record<string, string[]> = Object.create(null);
  complete = false;
  private pairs = 0;
  private bytes = 0;
  private state: 'name' | 'ows' | 'value' = 'name';
  private name = '';
  private value = '';
  private crlf = 0;

  /** The position after the header block, `end` when it goes on, or -1 when it is malformed. */
  push(chunk: Buffer, pos: number, end: number): number {
    let start = pos;
    while (pos < end) {
      if (this.state === 'name') {
        let done = false;
        for (; pos < end; ++pos) {
          if (this.bytes++ === MAX_HEADER_SIZE) return -1;
          const code = chunk[pos]!;
          if (TOKEN[code] !== 1) {
            if (code !== 58) return -1;
            this.name += chunk.toString('latin1', start, pos);
            if (this.name.length === 0) return -1;
            ++pos;
            done = true;
            this.state = 'ows';
            break;
          }
        }
        if (!done) {
          this.name += chunk.toString('latin1', start, pos);
          break;
        }
      }
      if (this.state === 'ows') {
        let done = false;
        for (; pos < end; ++pos) {
          if (this.bytes++ === MAX_HEADER_SIZE) return -1;
          const code = chunk[pos]!;
          if (code !== 32 && code !== 9) {
            start = pos;
            done = true;
            this.state = 'value';
            break;
          }
        }
        if (!done) break;
      }
      switch (this.crlf) {
        case 0:
          for (; pos < end; ++pos) {
            if (this.bytes++ === MAX_HEADER_SIZE) return -1;
            const code = chunk[pos]!;
            if (FIELD_VCHAR[code] !== 1) {
              if (code !== CR) return -1;
              ++this.crlf;
              break;
            }
          }
          this.value += chunk.toString('latin1', start, pos++);
          break;
        case 1:
          if (this.bytes++ === MAX_HEADER_SIZE) return -1;
          if (chunk[pos++] !== LF) return -1;
          ++this.crlf;
          break;
        case 2: {
          if (this.bytes++ === MAX_HEADER_SIZE) return -1;
          const code = chunk[pos]!;
          if (code === 32 || code === 9) {
            // A folded line continues the value.
            start = pos;
            this.crlf = 0;
          } else {
            if (++this.pairs < MAX_HEADER_PAIRS) {
              const name = this.name.toLowerCase();
              (this.header[name] ??= []).push(this.value);
            }
            if (code === CR) {
              ++this.crlf;
              ++pos;
            } else {
              start = pos;
              this.crlf = 0;
              this.state = 'name';
              this.name = '';
              this.value = '';
            }
          }
          break;
        }
        case 3:
          if (this.bytes++ === MAX_HEADER_SIZE) return -1;
          if (chunk[pos++] !== LF) return -1;
          this.complete = true;
          return pos;
      }
    }
    return pos;
  }
}

/**
 * The synchronous core: push body chunks, collect events. Framing follows busboy: the body is read as
 * CRLF + body, parts start after `CRLF--boundary CRLF`, `CRLF--boundary--` ends the form, anything
 * else after a boundary is skipped up to the next one, and the preamble and epilogue are ignored.
 * A malformed header block, or a form that never closed, ends the events with `malformed`.
 */
class MultipartParser {
  private readonly needle: Buffer;
  /** Trailing bytes of the last chunk that may begin a delimiter (shorter than it). */
  private tail: Buffer | null = null;
  private headers: HeaderParser | null = null;
  /** 1 right after a delimiter, 2 after its `-`, 3 after its CR; 0 anywhere else. */
  private afterBoundary = 0;
  private skipPart = false;
  private file = false;
  private field: { name: string; charset: string; chunks: Buffer[]; size: number } | null = null;
  private fields = 0;
  private files = 0;
  private textBytes = 0;
  private out: MultipartEvent[] = [];
  private malformed = false;
  private complete = false;

  constructor(boundary: string) {
    this.needle = Buffer.from(`\r\n--${boundary}`);
    this.push(BUF_CRLF);
  }

  /** Reads the boundary from a Content-Type header; null when it is not multipart/form-data with one. */
  static boundaryOf(contentType: string): string | null {
    const parsed = parseContentType(contentType);
    if (!parsed || parsed.type !== 'multipart' || parsed.subtype !== 'form-data') return null;
    const boundary = parsed.params.boundary;
    return typeof boundary === 'string' ? boundary : null;
  }

  /** Events from one more chunk of the body; data events are views of `chunk`. */
  push(chunk: Buffer): MultipartEvent[] {
    this.out = [];
    if (!this.complete && !this.malformed) this.guard(() => this.scan(chunk));
    return this.out;
  }

  /** Events at the end of the body; a form not closed by its final boundary ends with `malformed`. */
  end(): MultipartEvent[] {
    this.out = [];
    if (this.malformed) return this.out;
    this.guard(() => {
      if (this.tail && !this.complete) this.data(this.tail, 0, this.tail.length, false);
      this.tail = null;
      // A file still open means the form closed inside its headers: busboy's `Unexpected end of file`.
      if (this.headers || this.file || !this.complete) throw new MalformedBody();
    });
    return this.out;
  }

  // The events before the fault are kept: parts complete before it are delivered, then the 400 (or 413).
  private guard(run: () => void): void {
    try {
      run();
    } catch (err) {
      if (!(err instanceof MalformedBody) && !(err instanceof TextBudgetExceeded)) throw err;
      this.malformed = true;
      this.out.push(err instanceof TextBudgetExceeded ? { kind: 'over-budget', limit: err.limit } : { kind: 'malformed' });
    }
  }

  /** Counts text held for fields; over the form's budget the parse stops, before more is buffered. */
  private spendText(bytes: number): void {
    this.textBytes += bytes;
    const limit = Math.min(TEXT_BUDGET_MAX, TEXT_BUDGET_BASE + this.files * TEXT_BUDGET_PER_FILE);
    if (this.textBytes > limit) throw new TextBudgetExceeded(limit);
  }

  private scan(chunk: Buffer): void {
    const needle = this.needle;
    let pos = 0;
    if (this.tail) {
      const tail = this.tail;
      this.tail = null;
      // A delimiter that starts in the tail ends within the first needle.length - 1 bytes of the chunk.
      const window = Buffer.concat([tail, chunk.subarray(0, needle.length - 1)]);
      const at = window.indexOf(needle);
      if (at >= 0) {
        if (this.data(window, 0, at, false)) return;
        this.match();
        pos = at + needle.length - tail.length;
      } else if (chunk.length < needle.length - 1) {
        const keep = this.prefixAtEnd(window, 0);
        if (this.data(window, 0, window.length - keep, false)) return;
        if (keep) this.tail = window.subarray(window.length - keep);
        return;
      } else if (this.data(tail, 0, tail.length, false)) return;
    }
    for (;;) {
      const at = chunk.indexOf(needle, pos);
      if (at < 0) break;
      if (this.data(chunk, pos, at, true)) return;
      this.match();
      pos = at + needle.length;
    }
    const keep = this.prefixAtEnd(chunk, pos);
    if (this.data(chunk, pos, chunk.length - keep, true)) return;
    if (keep) this.tail = Buffer.from(chunk.subarray(chunk.length - keep));
  }

  /** Length of the longest end of buf[from..] that is a proper prefix of the delimiter. */
  private prefixAtEnd(buf: Buffer, from: number): number {
    for (let k = Math.min(this.needle.length - 1, buf.length - from); k > 0; k--) {
      if (buf[buf.length - k] === CR && buf.compare(this.needle, 0, k, buf.length - k) === 0) return k;
    }
    return 0;
  }

  /** Bytes between delimiters; true once the final boundary is seen (the rest is ignored). */
  private data(buf: Buffer, start: number, end: number, shared: boolean): boolean {
    for (;;) {
      if (this.complete) return true;
      if (this.headers) {
        const at = this.headers.push(buf, start, end);
        if (at === -1) throw new MalformedBody();
        start = at;
        if (this.headers.complete) {
          const header = this.headers.header;
          this.headers = null;
          this.startPart(header);
        }
      }
      if (start === end) return false;
      if (this.afterBoundary === 1) {
        const code = buf[start];
        this.afterBoundary = code === DASH ? 2 : code === CR ? 3 : 0;
        if (this.afterBoundary !== 0) ++start;
        if (start === end) return false;
      }
      if (this.afterBoundary === 2) {
        this.afterBoundary = 0;
        if (buf[start] === DASH) {
          this.complete = true;
          return true;
        }
        // Not `--`: the dash was data after all.
        if (this.data(BUF_DASH, 0, 1, false)) return true;
      } else if (this.afterBoundary === 3) {
        this.afterBoundary = 0;
        if (buf[start] === LF) {
          ++start;
          this.headers = new HeaderParser();
          if (start === end) return false;
          continue;
        }
        if (this.data(BUF_CR, 0, 1, false)) return true;
      }
      if (!this.skipPart) {
        if (this.file) {
          this.out.push({ kind: 'data', chunk: shared ? buf.subarray(start, end) : Buffer.from(buf.subarray(start, end)) });
        } else if (this.field) {
          const take = Math.min(end - start, FIELD_SIZE_LIMIT - this.field.size);
          this.spendText(take);
          // Copied: a small field must not keep a large request chunk alive.
          this.field.chunks.push(Buffer.from(buf.subarray(start, start + take)));
          this.field.size += take;
          if (this.field.size === FIELD_SIZE_LIMIT) this.skipPart = true;
        }
      }
      return false;
    }
  }

  private match(): void {
    this.afterBoundary = 1;
    if (this.file) {
      this.file = false;
      this.out.push({ kind: 'end-file' });
    } else if (this.field) {
      const { name, charset, chunks, size } = this.field;
      this.field = null;
      const bytes = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
      this.out.push({ kind: 'field', name, value: size === 0 ? '' : (convertToUTF8(bytes, charset, 0) ?? '') });
    }
  }

  /** A part's headers decide what it is, as busboy decides: a file, a field, or skipped. */
  private startPart(header: Record<string, string[]>): void {
    this.skipPart = false;
    const disposition = header['content-disposition'];
    const disp = disposition ? parseDisposition(disposition[0]!, paramDecoder) : undefined;
    if (!disp || disp.type !== 'form-data') {
      this.skipPart = true;
      return;
    }
    const name = disp.params.name || '';
    const rawFilename = disp.params['filename*'] || disp.params.filename || undefined;
    const filename = rawFilename === undefined ? undefined : basename(rawFilename);
    let mimeType = 'text/plain';
    let charset = 'utf8';
    const contentType = header['content-type'] ? parseContentType(header['content-type'][0]!) : undefined;
    if (contentType) {
      mimeType = `${contentType.type}/${contentType.subtype}`;
      if (typeof contentType.params.charset === 'string') charset = contentType.params.charset.toLowerCase();
    }
    if (mimeType === 'application/octet-stream' || filename !== undefined) {
      this.file = true;
      this.files++;
      this.out.push({ kind: 'file', field: name, filename: filename ?? '', mimeType });
      return;
    }
    if (this.fields === FIELDS_LIMIT) {
      this.skipPart = true;
      return;
    }
    ++this.fields;
    this.spendText(name.length);
    this.field = { name, charset, chunks: [], size: 0 };
  }
}

/**
 * Streams a multipart/form-data request body as parts, in order, never buffering a file: a file part's
 * body must be read (or left) before the next part is asked for; what is left of it is skipped. A body
 * chunk is a view of a request chunk, valid only until the next one is asked for: it is freed then.
 * Call only after the route's guard has passed. A client that hangs up surfaces as the 499 error,
 * from the part being read or from the iteration; a malformed body as the 400.
 */
export async function* readMultipart(request: Request): AsyncGenerator<UploadPart> {
  const type = request.headers.get('content-type') ?? '';
  const boundary = /^multipart\/form-data\b/i.test(type) ? MultipartParser.boundaryOf(type) : null;
  if (boundary === null || !request.body) throw badRequest(Messages.notMultipart);
  const parser = new MultipartParser(boundary);
  const meta = requestMeta(request);
  const reader = request.body.getReader();
  let events: MultipartEvent[] = [];
  let index = 0;
  let finished = false;
  // The request chunk the last events were cut from; freed once they are all handed out.
  let chunk: Uint8Array | null = null;
  // Where that chunk starts in the body, and where the file data handed out last ends (null: not known).
  let chunkAt = 0;
  let bodyBytes = 0;
  let dataEnd: number | null = null;
  const declared = Number(request.headers.get('content-length') ?? Number.NaN);
  const closing = Buffer.byteLength(`\r\n--${boundary}--\r\n`);
  const unread = () =>
    Number.isSafeInteger(declared) && dataEnd !== null && declared - closing >= dataEnd ? declared - closing - dataEnd : null;
  const failure = (err: unknown) =>
    request.signal.aborted ? uploadAborted() : err instanceof AppError ? err : badRequest(Messages.malformedMultipart);

  /** The next event, reading one more chunk of the body when the last one is used up; null at the end. */
  const next = async (): Promise<MultipartEvent | null> => {
    while (index === events.length) {
      if (finished) return null;
      index = 0;
      events = [];
      if (chunk) releaseChunk(chunk);
      chunk = null;
      let read: Awaited<ReturnType<typeof reader.read>>;
      try {
        read = await reader.read();
      } catch (err) {
        finished = true;
        throw failure(err);
      }
      if (read.done) {
        finished = true;
        markBodyConsumed(request);
        events = parser.end();
      } else {
        const { value } = read;
        meta.bytesIn = (meta.bytesIn ?? 0) + value.byteLength;
        chunk = value;
        chunkAt = bodyBytes;
        bodyBytes += value.byteLength;
        events = parser.push(Buffer.from(value.buffer, value.byteOffset, value.byteLength));
      }
    }
    const event = events[index++]!;
    if (event.kind === 'malformed') {
      index--;
      throw failure(null);
    }
    if (event.kind === 'over-budget') {
      index--;
      throw failure(formTextTooLarge(event.limit));
    }
    return event;
  };

  let fileOpen = false;
  async function* fileBody(): AsyncGenerator<Uint8Array> {
    dataEnd = null;
    while (fileOpen) {
      const event = await next();
      if (event?.kind === 'data') {
        dataEnd = endInBody(event.chunk);
        yield event.chunk;
      } else fileOpen = false;
    }
  }
  /** Where data ends in the body, when it is a view of the current chunk (a copied delimiter's tail is not). */
  const endInBody = (data: Uint8Array): number | null => {
    if (!chunk || data.buffer !== chunk.buffer) return null;
    const at = data.byteOffset - chunk.byteOffset;
    return at >= 0 && at + data.byteLength <= chunk.byteLength ? chunkAt + at + data.byteLength : null;
  };

  try {
    for (;;) {
      const event = await next();
      if (!event) return;
      if (event.kind === 'field') yield { kind: 'field', name: event.name, value: event.value };
      else if (event.kind === 'file') {
        fileOpen = true;
        yield { kind: 'file', field: event.field, filename: event.filename, mimeType: event.mimeType, body: fileBody(), unread };
        // A part the caller did not read to its end is skipped, so the next one can be reached.
        while (fileOpen) if ((await next())?.kind !== 'data') fileOpen = false;
      }
    }
  } finally {
    if (!finished) await reader.cancel().catch(() => {});
  }
}
