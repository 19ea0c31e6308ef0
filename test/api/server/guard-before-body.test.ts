import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import net from 'node:net';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import * as seed from '../../helpers/seed.ts';
import { rowCount } from '../../helpers/files.ts';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
  await seed.admin(t);
});
afterAll(() => t.stop());

/**
 * Sends the headers of a 50 MB multipart upload and then only a first slice of the body, and waits for
 * the answer: a guard that waited for the body would never answer before the rest arrives.
 */
function uploadHead(
  url: string,
  cookie: string,
  totalBytes: number,
  sendBytes: number,
  waitMs = 5000,
): Promise<{ status: number; sent: number; body: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname, () => {
      const boundary = 'coffer-test-boundary';
      socket.write(
        [
          'POST /api/files/upload HTTP/1.1',
          `Host: ${hostname}:${port}`,
          `Cookie: ${cookie}`,
          `Content-Type: multipart/form-data; boundary=${boundary}`,
          `Content-Length: ${totalBytes}`,
          '',
          '',
        ].join('\r\n'),
      );
      socket.write(
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`,
      );
      socket.write(Buffer.alloc(sendBytes, 7));
    });
    let response = '';
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error('no answer while the client was still sending: the guard waited for the body'));
    }, waitMs);
    socket.on('data', (chunk) => {
      response += chunk.toString();
      const m = /^HTTP\/1\.1 (\d{3})/.exec(response);
      if (m && response.includes('\r\n\r\n') && response.includes('}')) {
        clearTimeout(timer);
        socket.destroy();
        resolve({ status: Number(m[1]), sent: sendBytes, body: response.slice(response.indexOf('\r\n\r\n') + 4) });
      }
    });
    socket.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
  });
}

describe('the permission guard runs before the body is read', () => {
  test('a sub-user without files.upload sending a 50 MB upload gets 403 after 64 KiB, and nothing is stored', async () => {
    const o = await seed.owner(t);
    const sub = await seed.subUser(t, o, ['files.download']);
    const cookie = `token=${sub.client.cookies.get('token')}`;
    const before = rowCount(t);
    const r = await uploadHead(t.url, cookie, 50 * 1024 * 1024, 64 * 1024);
    expect(r.status).toBe(403);
    expect(r.body).toContain('Upload & create');
    expect(rowCount(t)).toBe(before);
  });

  test('the same request from a login with the permission is not answered until the body arrives', async () => {
    const o = await seed.owner(t);
    const cookie = `token=${o.client.cookies.get('token')}`;
    await expect(uploadHead(t.url, cookie, 50 * 1024 * 1024, 64 * 1024, 1500)).rejects.toThrow(/still sending/);
  });
});
