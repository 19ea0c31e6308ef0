import http from 'node:http';
import type net from 'node:net';
import { signRequest } from '../../src/storage/s3-signer.ts';
import { TEST_ACCESS_KEY, testS3Env } from './s3-options.ts';
import type { TestS3 } from './s3.ts';

/** What a misbehaving store does to one request; the byte counts are of the request's or the answer's body. */
interface S3Fault {
  /** Which requests (method, and path with query); every one when left out. */
  when?: (method: string, url: string) => boolean;
  /** How many matching requests it hits (1 when left out; Infinity for all). */
  times?: number;
  /** Answer this instead of passing the request on (503 SlowDown with Retry-After, 403 RequestTimeTooSkewed, 404 NoSuchKey…). */
  answer?: { status: number; code: string; message?: string; headers?: Record<string, string> };
  /** The connection is reset once this many bytes of the request body reached the store. */
  resetRequestAt?: number;
  /** Nothing more of the request body is read past this many bytes, and no answer comes. */
  stallRequestAt?: number;
  /** The connection is reset once this many bytes of the answer's body were sent. */
  resetAnswerAt?: number;
  /** Nothing more of the answer's body is sent past this many bytes; the connection stays open. */
  stallAnswerAt?: number;
  /** The answer's body ends after this many bytes and the connection closes in order, its Content-Length unchanged. */
  shortAnswerAt?: number;
  /** The answer's ETag header replaced (a part the store says it stored differently). */
  etag?: string;
}

export interface S3FaultProxy {
  endpoint: string;
  /** Requests seen (method and path with query), in order, with the fault that hit each (or null). */
  seen: Array<{ request: string; fault: S3Fault | null }>;
  inject(fault: S3Fault): void;
  /**
   * How far the store's clock is ahead of the real one (negative: behind): a request signed more than 15
   * minutes off it is refused with 403 RequestTimeTooSkewed, as S3 does; one signed at its time is passed on.
   */
  clockSkewMs: number;
  /** Forgets faults not used up and releases what is stalled. */
  clear(): void;
  /** The environment that points Coffer at the store through this proxy, under `prefix`. */
  env(prefix: string): Record<string, string>;
  stop(): Promise<void>;
}

const errorXml = (code: string, message: string, extra = '') =>
  `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message>${extra}</Error>`;

/** Writes each chunk given up to byte `cut` of the stream (all of it without one); true once the cut is reached. */
function passUpTo(cut: number | undefined, write: (b: Buffer) => void): (chunk: Buffer) => boolean {
  let passed = 0;
  return (chunk) => {
    const keep = cut === undefined ? chunk : chunk.subarray(0, Math.max(0, cut - passed));
    passed += keep.length;
    if (keep.length > 0) write(keep);
    return cut !== undefined && passed >= cut;
  };
}

const amzTime = (stamp: string) => Date.parse(stamp.replace(/^(\d{4})(\d\d)(\d\d)T(\d\d)(\d\d)(\d\d)Z$/, '$1-$2-$3T$4:$5:$6Z'));

/** The request signed again at the real time for the test server behind (s3rver checks the time too), with the headers it signed. */
function signedNow(method: string, url: string, headers: http.IncomingHttpHeaders): http.OutgoingHttpHeaders {
  const u = new URL(url, 'http://store');
  const names = /SignedHeaders=([^,]+)/.exec(String(headers.authorization))?.[1]?.split(';') ?? [];
  const signed: Record<string, string> = {};
  for (const n of names) if (!['host', 'x-amz-date', 'x-amz-content-sha256'].includes(n)) signed[n] = String(headers[n]);
  const creds = { accessKeyId: TEST_ACCESS_KEY, secretAccessKey: TEST_ACCESS_KEY, region: 'us-east-1' };
  const again = signRequest(creds, {
    method,
    host: String(headers.host),
    path: u.pathname,
    query: Object.fromEntries(u.searchParams),
    headers: signed,
    payloadHash: String(headers['x-amz-content-sha256']),
  });
  return { ...headers, ...again };
}

/**
 * A loopback HTTP proxy in front of a test S3 server that passes the S3 protocol through as it is (the
 * Host header too, so signatures hold) and misbehaves on demand, as real stores and the links to them
 * do: an error status, a reset or a stall at a chosen byte of the request or the answer, an answer cut
 * short under an honest-looking Content-Length, a wrong ETag.
 */
export async function startS3FaultProxy(s3: TestS3): Promise<S3FaultProxy> {
  const upstream = new URL(s3.endpoint);
  const faults: Array<S3Fault & { left: number }> = [];
  // What a stall holds open, both sides: released by clear() and stop().
  const held = new Set<() => void>();
  const server = http.createServer((req, res) => {
    const method = req.method ?? 'GET';
    const url = req.url ?? '/';
    const f = faults.find((x) => x.left > 0 && (x.when?.(method, url) ?? true)) ?? null;
    if (f) f.left--;
    proxy.seen.push({ request: `${method} ${url}`, fault: f });
    const socket = req.socket;
    let headers: http.OutgoingHttpHeaders = req.headers;
    if (proxy.clockSkewMs !== 0) {
      const storeNow = Date.now() + proxy.clockSkewMs;
      if (Math.abs(amzTime(String(req.headers['x-amz-date'])) - storeNow) > 15 * 60_000) {
        req.resume();
        const serverTime = new Date(storeNow).toISOString().replace(/\.\d+/, '');
        const body = errorXml(
          'RequestTimeTooSkewed',
          'The difference between the request time and the current time is too large.',
          `<ServerTime>${serverTime}</ServerTime>`,
        );
        res.writeHead(403, {
          'content-type': 'application/xml',
          'content-length': Buffer.byteLength(body),
          date: new Date(storeNow).toUTCString(),
        });
        res.end(body);
        return;
      }
      headers = signedNow(method, url, req.headers);
    }
    if (f?.answer) {
      req.resume();
      const body = errorXml(f.answer.code, f.answer.message ?? 'injected by the test');
      res.writeHead(f.answer.status, { 'content-type': 'application/xml', 'content-length': Buffer.byteLength(body), ...f.answer.headers });
      res.end(body);
      return;
    }
    const out = http.request({ host: upstream.hostname, port: upstream.port, method, path: url, headers, agent: false }, (answer) => {
      const headers = { ...answer.headers };
      if (f?.etag !== undefined && headers.etag !== undefined) headers.etag = f.etag;
      res.writeHead(answer.statusCode ?? 502, headers);
      const pass = passUpTo(f?.resetAnswerAt ?? f?.stallAnswerAt ?? f?.shortAnswerAt, (b) => res.write(b));
      answer.on('data', (chunk: Buffer) => {
        if (!pass(chunk)) return;
        answer.destroy();
        if (f?.resetAnswerAt !== undefined) socket.resetAndDestroy();
        else if (f?.shortAnswerAt !== undefined) socket.end();
        else held.add(() => socket.destroy());
      });
      answer.on('end', () => res.end());
    });
    out.on('error', () => socket.destroy());
    const cut = f?.resetRequestAt ?? f?.stallRequestAt;
    let reached = false;
    const pass = passUpTo(cut, (b) => out.write(b));
    req.on('data', (chunk: Buffer) => {
      if (!pass(chunk)) return;
      reached = true;
      req.pause();
      if (f?.resetRequestAt !== undefined) {
        out.destroy();
        socket.resetAndDestroy();
      } else
        held.add(() => {
          out.destroy();
          socket.destroy();
        });
    });
    req.on('end', () => {
      if (!reached) out.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  const proxy: S3FaultProxy = {
    endpoint: `http://127.0.0.1:${port}`,
    seen: [],
    clockSkewMs: 0,
    inject(fault) {
      faults.push({ ...fault, left: fault.times ?? 1 });
    },
    clear() {
      faults.length = 0;
      proxy.clockSkewMs = 0;
      for (const release of held) release();
      held.clear();
    },
    env(prefix) {
      return testS3Env(proxy.endpoint, prefix);
    },
    async stop() {
      proxy.clear();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return proxy;
}
