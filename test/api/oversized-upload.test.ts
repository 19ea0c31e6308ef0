import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import net from 'node:net';
import { cookieHeader, rawRequest } from '../helpers/raw-http.ts';
import { admin, type SeededLogin } from '../helpers/seed.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let t: TestServer;
let a: SeededLogin;
beforeAll(async () => {
  t = await startTestServer();
  a = await admin(t);
  t.server.ctx.services.settings.set('maxUploadBytes', 1024 * 1024);
});
afterAll(() => t.stop());

const BOUNDARY = 'reliability-boundary';
const PART = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`;

/**
 * Streams a multipart upload of `total` bytes as fast as the server takes it and reports how much was
 * sent when the answer came and when the server closed the connection.
 */
async function streamUpload(path: string, total: number, cookie: string | null) {
  const head = `POST ${path} HTTP/1.1\r\nHost: localhost\r\n${cookie ? `Cookie: ${cookie}\r\n` : ''}Content-Type: multipart/form-data; boundary=${BOUNDARY}\r\nContent-Length: ${PART.length + total}\r\n\r\n`;
  const socket = net.connect(Number(new URL(t.url).port), '127.0.0.1');
  let sent = 0;
  let answer = '';
  let answeredAt = -1;
  let closedAt = -1;
  socket.on('data', (d) => {
    answer += d.toString('latin1');
    if (answeredAt < 0) answeredAt = sent;
  });
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  closed.then(() => (closedAt = sent));
  socket.on('error', () => {});
  await new Promise<void>((resolve) => socket.on('connect', () => resolve()));
  socket.write(head + PART);
  const chunk = Buffer.alloc(256 * 1024, 7);
  const deadline = Date.now() + 20_000;
  while (sent < total && closedAt < 0 && Date.now() < deadline) {
    const more = socket.write(chunk);
    sent += chunk.length;
    if (!more) await Promise.race([new Promise((r) => socket.once('drain', r)), closed, Bun.sleep(1000)]);
  }
  await Promise.race([closed, Bun.sleep(1000)]);
  socket.destroy();
  return { status: Number(answer.slice(9, 12)), answer, answeredAt, closedAt, sent };
}

const MiB = 1024 * 1024;

describe('an upload refused mid-body (issue 13, defect 6)', () => {
  test('413 over the max upload size: the answer says Connection: close and the server stops reading', async () => {
    const r = await streamUpload('/api/files/upload', 256 * MiB, cookieHeader(a.client.cookies));
    expect(r.status).toBe(413);
    expect(r.answer).toMatch(/\r\nconnection: close\r\n/i);
    expect(r.closedAt).toBeGreaterThanOrEqual(0);
    // It used to read all 256 MiB after answering; now only what socket buffers hold gets through.
    expect(r.sent).toBeLessThan(64 * MiB);
  });

  test('a refusal before the body is read (no session) closes the connection too', async () => {
    const r = await streamUpload('/api/files/upload', 256 * MiB, null);
    expect(r.status).toBe(401);
    expect(r.closedAt).toBeGreaterThanOrEqual(0);
    expect(r.sent).toBeLessThan(64 * MiB);
  });

  test('an error after the whole body was read keeps the connection open', async () => {
    const body = JSON.stringify({ ids: ['no-such-item'] });
    const res = await rawRequest(
      t.url,
      `POST /api/files/star HTTP/1.1\r\nHost: localhost\r\nCookie: ${cookieHeader(a.client.cookies)}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`,
      { body: Buffer.from(body), waitForCloseMs: 300 },
    );
    expect(res.status).toBe(422);
    expect(res.headers.connection).not.toBe('close');
    expect(res.closed).toBe(false);
  });

  test('the server answers new connections afterwards', async () => {
    expect((await a.client.get('/api/files/stats')).status).toBe(200);
  });
});
