import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { cookieHeader, rawRequest, streamMultipartUpload } from '../../helpers/raw-http.ts';
import { admin, type SeededLogin } from '../../helpers/seed.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

let t: TestServer;
let a: SeededLogin;
beforeAll(async () => {
  t = await startTestServer();
  a = await admin(t);
  t.server.ctx.services.settings.set('maxUploadBytes', 1024 * 1024);
});
afterAll(() => t.stop());

const MiB = 1024 * 1024;

describe('an upload refused mid-body (issue 13, defect 6)', () => {
  test('413 over the max upload size: the answer says Connection: close and the server stops reading', async () => {
    const r = await streamMultipartUpload(t.url, '/api/files/upload', 256 * MiB, cookieHeader(a.client.cookies));
    expect(r.status).toBe(413);
    expect(r.answer).toMatch(/\r\nconnection: close\r\n/i);
    expect(r.closedAt).toBeGreaterThanOrEqual(0);
    // It used to read all 256 MiB after answering; now only what socket buffers hold gets through.
    expect(r.sent).toBeLessThan(64 * MiB);
  });

  test('a refusal before the body is read (no session) closes the connection too', async () => {
    const r = await streamMultipartUpload(t.url, '/api/files/upload', 256 * MiB, null);
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
