import net from 'node:net';

/** A response as it came off the socket: the head as sent, the body after undoing chunked framing. */
export interface RawResponse {
  status: number;
  /** Header names lower-cased; a repeated header keeps its last value. */
  headers: Record<string, string>;
  /** Header names exactly as the server wrote them, in order. */
  headerNames: string[];
  body: Buffer;
  /** How the body was delimited on the wire. */
  framing: 'content-length' | 'chunked' | 'close' | 'none';
  /** Whether the server closed the connection after the response. */
  closed: boolean;
}

function parseHead(head: string): Pick<RawResponse, 'status' | 'headers' | 'headerNames'> {
  const [statusLine = '', ...lines] = head.split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1] ?? NaN);
  const headers: Record<string, string> = {};
  const headerNames: string[] = [];
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    const name = line.slice(0, colon);
    headerNames.push(name);
    headers[name.toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { status, headers, headerNames };
}

/** Undoes chunked framing; null while the terminating chunk has not arrived. */
function dechunk(buf: Buffer): Buffer | null {
  const parts: Buffer[] = [];
  let pos = 0;
  for (;;) {
    const eol = buf.indexOf('\r\n', pos);
    if (eol < 0) return null;
    const size = parseInt(buf.subarray(pos, eol).toString('latin1'), 16);
    if (Number.isNaN(size)) throw new Error('malformed chunk size');
    if (size === 0) return Buffer.concat(parts);
    if (buf.length < eol + 2 + size + 2) return null;
    parts.push(buf.subarray(eol + 2, eol + 2 + size));
    pos = eol + 2 + size + 2;
  }
}

/**
 * Sends bytes exactly as given to the server behind `url` and reads one response off the socket, so a
 * test sees what a client would (framing, header spelling, whether the connection stays open), not
 * what fetch() makes of it. `body` is written after `head`, once the head has gone out.
 */
export function rawRequest(
  url: string,
  head: string,
  opts: { body?: Uint8Array; timeoutMs?: number; closeAfterMs?: number; waitForCloseMs?: number } = {},
): Promise<RawResponse> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname.replace(/^\[|\]$/g, ''));
    let buf = Buffer.alloc(0);
    let done = false;
    let ended = false;
    let parsed: (Pick<RawResponse, 'status' | 'headers' | 'headerNames'> & { bodyStart: number }) | null = null;
    const finish = (framing: RawResponse['framing'], body: Buffer, closed: boolean) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      const { status, headers, headerNames } = parsed!;
      const settle = () => {
        socket.destroy();
        resolve({ status, headers, headerNames, body, framing, closed: closed || ended });
      };
      // Whether the server closes the connection right after the response, or keeps it open.
      if (closed || !opts.waitForCloseMs) return settle();
      const wait = setTimeout(settle, opts.waitForCloseMs);
      socket.once('close', () => {
        clearTimeout(wait);
        settle();
      });
    };
    const check = (ended: boolean) => {
      if (!parsed) {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) {
          if (ended)
            reject(new Error(`connection closed before a response head (got ${JSON.stringify(buf.toString('latin1').slice(0, 200))})`));
          return;
        }
        parsed = { ...parseHead(buf.subarray(0, end).toString('latin1')), bodyStart: end + 4 };
      }
      const rest = buf.subarray(parsed.bodyStart);
      const length = parsed.headers['content-length'];
      if (parsed.headers['transfer-encoding']?.toLowerCase() === 'chunked') {
        let body: Buffer | null;
        try {
          body = dechunk(rest);
        } catch (err) {
          // Thrown here it would escape the socket's event handler: the caller gets it instead.
          done = true;
          clearTimeout(timer);
          socket.destroy();
          reject(err);
          return;
        }
        if (body) finish('chunked', body, ended);
        else if (ended) reject(new Error('connection closed inside a chunked body'));
      } else if (length !== undefined) {
        if (rest.length >= Number(length)) finish('content-length', rest.subarray(0, Number(length)), ended);
        else if (ended) finish('content-length', rest, true);
      } else if (parsed.status === 204 || parsed.status === 304) finish('none', Buffer.alloc(0), ended);
      else if (ended) finish('close', rest, true);
    };
    const timer = setTimeout(() => {
      socket.destroy();
      if (parsed && !done) check(true);
      if (!done) reject(new Error(`no complete response within ${opts.timeoutMs ?? 5000} ms`));
    }, opts.timeoutMs ?? 5000);
    socket.on('connect', () => {
      socket.write(head);
      if (opts.body) socket.write(opts.body);
      if (opts.closeAfterMs !== undefined) setTimeout(() => socket.end(), opts.closeAfterMs);
    });
    socket.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      check(false);
    });
    socket.on('end', () => {
      ended = true;
      check(true);
    });
    socket.on('close', () => {
      ended = true;
      check(true);
    });
    socket.on('error', (err) => {
      if (!done && !parsed) reject(err);
    });
  });
}

/** Sends a request head and part of its body, then hangs up: a client that went away mid-body. */
export function hangUpMidBody(url: string, head: string, partialBody: string | Uint8Array, afterMs = 50): Promise<void> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect(Number(port), hostname.replace(/^\[|\]$/g, ''), () => {
      socket.write(head);
      socket.write(partialBody);
      setTimeout(() => socket.destroy(), afterMs);
    });
    socket.on('close', () => resolve());
    socket.on('error', () => {});
  });
}

/** The Cookie header a test client would send. */
export function cookieHeader(cookies: Map<string, string>): string {
  return [...cookies].map(([k, v]) => `${k}=${v}`).join('; ');
}

export interface StreamedRequest {
  status: number;
  /** The response head and whatever body arrived, as text. */
  answer: string;
  /** Bytes of body written when the answer arrived, and when the server closed the connection (-1: never). */
  answeredAt: number;
  closedAt: number;
  /** Bytes of body written in all. */
  sent: number;
}

/**
 * Writes a request head, then body chunks from `next` as fast as the server takes them, until `next`
 * returns null or the server closes the connection: how much a server reads after it has answered.
 */
export async function streamRequest(
  url: string,
  head: string,
  next: () => Uint8Array | null,
  timeoutMs = 20_000,
): Promise<StreamedRequest> {
  const socket = net.connect(Number(new URL(url).port), new URL(url).hostname.replace(/^\[|\]$/g, ''));
  let sent = 0;
  let answer = '';
  let answeredAt = -1;
  let closedAt = -1;
  socket.on('data', (d: Buffer) => {
    answer += d.toString('latin1');
    if (answeredAt < 0) answeredAt = sent;
  });
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  void closed.then(() => (closedAt = sent));
  socket.on('error', () => {});
  await new Promise<void>((resolve) => socket.on('connect', () => resolve()));
  socket.write(head);
  const deadline = Date.now() + timeoutMs;
  while (closedAt < 0 && Date.now() < deadline) {
    const chunk = next();
    if (!chunk) break;
    const more = socket.write(chunk);
    sent += chunk.byteLength;
    // A timeout, not a wait: the drain or the close ends it first.
    if (!more) await Promise.race([new Promise((r) => socket.once('drain', r)), closed, Bun.sleep(1000)]);
  }
  // At most 1 s for the server to close after the last byte.
  await Promise.race([closed, Bun.sleep(1000)]);
  socket.destroy();
  return { status: Number(answer.slice(9, 12)), answer, answeredAt, closedAt, sent };
}

const UPLOAD_BOUNDARY = 'streamed-upload-boundary';
const UPLOAD_PART = `--${UPLOAD_BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`;

/** A multipart upload to `path` declaring one file of `total` bytes, its body streamed (streamRequest) in 256 KiB chunks. */
export function streamMultipartUpload(url: string, path: string, total: number, cookie: string | null): Promise<StreamedRequest> {
  const head = `POST ${path} HTTP/1.1\r\nHost: localhost\r\n${cookie ? `Cookie: ${cookie}\r\n` : ''}Content-Type: multipart/form-data; boundary=${UPLOAD_BOUNDARY}\r\nContent-Length: ${UPLOAD_PART.length + total}\r\n\r\n`;
  const chunk = Buffer.alloc(256 * 1024, 7);
  let left = total;
  let first = true;
  return streamRequest(url, head, () => {
    if (first) {
      first = false;
      return Buffer.from(UPLOAD_PART);
    }
    if (left <= 0) return null;
    left -= chunk.length;
    return chunk;
  });
}
