import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import net from 'node:net';
import { eventually } from '../../helpers/eventually.ts';
import { blobFiles } from '../../helpers/files.ts';
import { cookieHeader } from '../../helpers/raw-http.ts';
import { admin, type SeededLogin } from '../../helpers/seed.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

// Caps per client address count an IPv6 client by its /64, as the rate limits do (limitAddress).
let t: TestServer;
let a: SeededLogin;

beforeAll(async () => {
  t = await startTestServer({ env: { COFFER_MAX_CONNECTIONS_PER_IP: '3' } });
  a = await admin(t);
  // Loopback is a known proxy, so requests come from addresses of their own (X-Forwarded-For).
  expect((await a.client.put('/api/user/known-proxies-config', { knownProxies: ['127.0.0.1'] })).status).toBe(200);
  await t.restart({ samePort: true });
});
afterAll(() => t.stop());

/** An upload from `address` that sends its head and 64 KiB of its file, then goes silent: a request in progress. */
async function stalledUpload(address: string): Promise<net.Socket> {
  const boundary = 'stalled';
  const part = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="slow.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`;
  const socket = net.connect(Number(new URL(t.url).port), '127.0.0.1');
  socket.on('error', () => {});
  await new Promise<void>((resolve) => socket.on('connect', () => resolve()));
  socket.write(
    `POST /api/files/upload HTTP/1.1\r\nHost: localhost\r\nX-Forwarded-For: ${address}\r\nCookie: ${cookieHeader(a.client.cookies)}\r\nContent-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${part.length + 10 * 1024 * 1024}\r\n\r\n${part}`,
  );
  socket.write(Buffer.alloc(64 * 1024, 1));
  return socket;
}

const from = (address: string) => ({ 'x-forwarded-for': address });

describe('an IPv6 client is its /64 for the caps per address', () => {
  test('requests in progress: new addresses of one /64 share its cap (429 past it); the next /64 has its own', async () => {
    const stalled = [];
    try {
      for (let i = 1; i <= 3; i++) stalled.push(await stalledUpload(`2001:db8:64:1:${i}::1`));
      await eventually(() => blobFiles(t.dataDir).objects.length === 3, { intervalMs: 20 });
      expect((await a.client.get('/api/files/stats', from('2001:db8:64:1:ffff::1'))).status).toBe(429);
      expect((await a.client.get('/api/files/stats', from('2001:db8:64:2::1'))).status).toBe(200);
    } finally {
      for (const s of stalled) s.destroy();
    }
    await eventually(async () => (await a.client.get('/api/files/stats', from('2001:db8:64:1:ffff::1'))).status === 200);
  });

  test('push sockets still signing in: new addresses of one /64 share its 20 (429 past them); the next /64 has its own', async () => {
    const url = `${t.url.replace(/^http/, 'ws')}/push/ws`;
    const open = (address: string) =>
      new Promise<WebSocket>((resolve, reject) => {
        const ws = new WebSocket(url, { headers: from(address) });
        ws.onopen = () => resolve(ws);
        ws.onerror = () => reject(new Error(`no socket from ${address}`));
      });
    const upgrade = (address: string) =>
      fetch(`${t.url}/push/ws`, {
        headers: {
          upgrade: 'websocket',
          connection: 'Upgrade',
          'sec-websocket-version': '13',
          'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
          ...from(address),
        },
      });
    const sockets: WebSocket[] = [];
    try {
      for (let i = 1; i <= 20; i++) sockets.push(await open(`2001:db8:65:1:${i.toString(16)}::1`));
      expect((await upgrade('2001:db8:65:1:ffff::1')).status).toBe(429);
      sockets.push(await open('2001:db8:65:2::1'));
    } finally {
      for (const ws of sockets) ws.close();
    }
  });
});
