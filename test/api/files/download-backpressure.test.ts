import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createHash, randomBytes } from 'node:crypto';
import net from 'node:net';
import { json } from '../../helpers/client.ts';
import { eventually } from '../../helpers/eventually.ts';
import { openPaths } from '../../helpers/fds.ts';
import { upload } from '../../helpers/files.ts';
import * as seed from '../../helpers/seed.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

// Over 64 MiB and not a whole number of 64 KiB segments, so the last segment is a short one.
const SIZE = 64 * 1024 * 1024 + 12_345;
const RANGE = { start: 100_000, end: SIZE - 70_000 };

let t: TestServer;
let owner: seed.SeededLogin;
let content: Buffer;
let fileId: string;
let shareToken: string;
let davAuth: string;

const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

/** Hands every plaintext chunk the server reads from storage to `onChunk` as the response pulls it; returns the undo. */
function watchStoredReads(server: TestServer['server'], onChunk: (chunk: Uint8Array) => void): () => void {
  const storage = server.ctx.storage;
  const realGet = storage.get.bind(storage);
  storage.get = async (...args: Parameters<typeof realGet>) => {
    const reader = (await realGet(...args)).getReader();
    return new ReadableStream<Uint8Array>(
      {
        async pull(controller) {
          const r = await reader.read();
          if (r.done) return controller.close();
          onChunk(r.value);
          controller.enqueue(r.value);
        },
        cancel: (reason) => reader.cancel(reason),
      },
      { highWaterMark: 0 },
    );
  };
  return () => {
    storage.get = realGet;
  };
}

beforeAll(async () => {
  t = await startTestServer();
  owner = await seed.owner(t);
  content = randomBytes(SIZE);
  fileId = (await upload(owner.client, 'large.bin', content)).id;
  const links = (await json(await owner.client.post('/api/files/share', { ids: [fileId], shared: true }))).links;
  shareToken = /\/s\/([A-Za-z0-9_-]+)/.exec(links[fileId])![1]!;
  const app = await json(await owner.client.post('/api/user/app-passwords', { name: 'slow client' }));
  davAuth = `Basic ${Buffer.from(`${owner.email}:${app.password}`).toString('base64')}`;
}, 120_000);
afterAll(() => t.stop());

interface SlowResult {
  status: number;
  head: string;
  length: number;
  sha256: string;
}

/**
 * GET over a raw socket that reads in bursts and pauses between them, so the server meets a full socket
 * again and again; the body is de-chunked and hashed as it arrives. `stallAfter`: stop reading after that
 * many bytes and hand the test a way to go on.
 */
function slowGet(
  path: string,
  headers: Record<string, string>,
  opts: { burst?: number; pauseMs?: number; stallAfter?: number; onStall?: (resume: () => void, socket: net.Socket) => void } = {},
): Promise<SlowResult> {
  const { port } = new URL(t.url);
  const burst = opts.burst ?? 1024 * 1024;
  const pauseMs = opts.pauseMs ?? 10;
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), '127.0.0.1');
    const hash = createHash('sha256');
    let buf: Buffer = Buffer.alloc(0);
    let head: string | null = null;
    let remaining = -1; // bytes left in the current chunk; -1 while reading a size line, -2 before a chunk's CRLF
    let length = 0;
    let received = 0;
    let sinceBurst = 0;
    let stalled = false;
    const finish = () => {
      socket.destroy();
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head!)![1]), head: head!, length, sha256: hash.digest('hex') });
    };
    socket.on('error', reject);
    socket.on('close', () => reject(new Error(`connection closed after ${length} body bytes`)));
    socket.on('data', (data: Buffer) => {
      received += data.length;
      buf = buf.length ? Buffer.concat([buf, data]) : data;
      if (head === null) {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        head = buf.subarray(0, end).toString('latin1');
        buf = buf.subarray(end + 4);
        if (!/transfer-encoding: chunked/i.test(head)) return reject(new Error(`not chunked: ${head}`));
      }
      for (;;) {
        if (remaining === -1) {
          const eol = buf.indexOf('\r\n');
          if (eol < 0) break;
          remaining = parseInt(buf.subarray(0, eol).toString('latin1'), 16);
          buf = buf.subarray(eol + 2);
          if (remaining === 0) return finish();
        }
        if (remaining > 0) {
          const take = Math.min(remaining, buf.length);
          hash.update(buf.subarray(0, take));
          length += take;
          remaining -= take;
          buf = buf.subarray(take);
          if (remaining > 0) break;
          remaining = -2; // the CRLF after a chunk's data
        }
        if (buf.length < 2) break;
        buf = buf.subarray(2);
        remaining = -1;
      }
      sinceBurst += data.length;
      if (opts.stallAfter !== undefined && !stalled && received >= opts.stallAfter) {
        stalled = true;
        socket.pause();
        opts.onStall?.(() => socket.resume(), socket);
      } else if (sinceBurst >= burst) {
        sinceBurst = 0;
        socket.pause();
        setTimeout(() => socket.resume(), pauseMs);
      }
    });
    const lines = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`);
    socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${lines.join('')}Connection: close\r\n\r\n`);
  });
}

const cookie = () => ({ cookie: [...owner.client.cookies].map(([k, v]) => `${k}=${v}`).join('; ') });

describe('downloads to slow clients (the server meets backpressure)', () => {
  test('several at once, each byte-exact: API download, a Range, a share link, WebDAV GET', async () => {
    const whole = sha256(content);
    const part = sha256(content.subarray(RANGE.start, RANGE.end));
    const range = { range: `bytes=${RANGE.start}-${RANGE.end - 1}` };
    const runs = [
      { want: whole, status: 200, go: () => slowGet(`/api/files/${fileId}/download`, cookie()) },
      { want: whole, status: 200, go: () => slowGet(`/api/files/${fileId}/download`, cookie(), { burst: 256 * 1024, pauseMs: 3 }) },
      { want: part, status: 206, go: () => slowGet(`/api/files/${fileId}/download`, { ...cookie(), ...range }) },
      { want: whole, status: 200, go: () => slowGet(`/s/${shareToken}/file/${fileId}`, {}) },
      { want: part, status: 206, go: () => slowGet(`/s/${shareToken}/file/${fileId}`, range) },
      { want: whole, status: 200, go: () => slowGet('/dav/large.bin', { authorization: davAuth }) },
      { want: part, status: 206, go: () => slowGet('/dav/large.bin', { authorization: davAuth, ...range }) },
    ];
    const results = await Promise.all(runs.map((r) => r.go()));
    for (const [i, r] of results.entries()) {
      expect({ i, status: r.status, sha256: r.sha256 }).toEqual({ i, status: runs[i]!.status, sha256: runs[i]!.want });
    }
  }, 120_000);

  test('a client that stops reading holds the server back: it reads little more than the sockets hold', async () => {
    let pulled = 0;
    const restore = watchStoredReads(t.server, (chunk) => {
      pulled += chunk.byteLength;
    });
    try {
      let stalledAt = 0;
      const result = await slowGet(`/api/files/${fileId}/download`, cookie(), {
        stallAfter: 1024 * 1024,
        onStall: (resume) => {
          // Nothing signals that the server has filled the sockets and stopped: give it time to (wrongly) go on.
          setTimeout(() => {
            stalledAt = pulled;
            resume();
          }, 500);
        },
      });
      // Loopback socket buffers hold a few MiB each way; without backpressure the whole 64 MiB is read at once.
      expect(stalledAt).toBeGreaterThan(0);
      expect(stalledAt).toBeLessThan(24 * 1024 * 1024);
      expect(result.sha256).toBe(sha256(content));
    } finally {
      restore();
    }
  }, 60_000);

  test('plaintext the response has sent is freed then, not left to the garbage collector', async () => {
    const seen: Uint8Array[] = [];
    const restore = watchStoredReads(t.server, (chunk) => seen.push(chunk));
    try {
      const result = await slowGet(`/api/files/${fileId}/download`, cookie(), { burst: 8 * 1024 * 1024, pauseMs: 1 });
      expect(result.sha256).toBe(sha256(content));
      expect(seen.length).toBeGreaterThanOrEqual(Math.ceil(SIZE / 65536));
      // Freed: the memory is gone and every view of it is empty.
      expect(seen.filter((c) => c.byteLength !== 0).length).toBe(0);
    } finally {
      restore();
    }
  }, 60_000);

  test('a client that goes away part-way leaves no stored file open, and the next download is whole', async () => {
    const blobs = `${t.dataDir}/blobs/`;
    const openBlobs = () => openPaths().filter((p) => p.startsWith(blobs)).length;
    const gone = slowGet(`/api/files/${fileId}/download`, cookie(), {
      stallAfter: 2 * 1024 * 1024,
      onStall: (_resume, socket) => socket.destroy(),
    });
    await expect(gone).rejects.toThrow('connection closed');
    await eventually(() => expect(openBlobs()).toBe(0));
    expect((await slowGet(`/api/files/${fileId}/download`, cookie(), { burst: 8 * 1024 * 1024, pauseMs: 1 })).sha256).toBe(sha256(content));
  }, 60_000);
});
