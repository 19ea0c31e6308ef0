import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer();
});
afterAll(() => t.stop());

describe('HTTP conventions', () => {
  test('GET /health answers {status, timestamp, uptime}', async () => {
    const res = await fetch(`${t.url}/health`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, unknown>;
    expect(body.status).toBe('ok');
    expect(Number.isNaN(Date.parse(String(body.timestamp)))).toBe(false);
    expect(typeof body.uptime).toBe('number');
  });

  test('unknown routes are 404 JSON {message}', async () => {
    const res = await fetch(`${t.url}/api/nope`);
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toContain('application/json');
    expect(await res.json()).toEqual({ message: 'Not found' });
  });

  test('security headers on success and on errors', async () => {
    for (const path of ['/health', '/api/nope']) {
      const res = await fetch(`${t.url}${path}`);
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('x-frame-options')).toBe('DENY');
      expect(res.headers.get('content-security-policy')).toContain("default-src 'self'");
    }
  });

  test('a request id is generated, or a sane incoming one echoed', async () => {
    const generated = (await fetch(`${t.url}/health`)).headers.get('x-request-id');
    expect(generated).toMatch(/^[0-9a-f-]{36}$/);
    const echoed = await fetch(`${t.url}/health`, { headers: { 'x-request-id': 'trace-123' } });
    expect(echoed.headers.get('x-request-id')).toBe('trace-123');
    const refused = await fetch(`${t.url}/health`, { headers: { 'x-request-id': 'bad id <script>' } });
    expect(refused.headers.get('x-request-id')).not.toContain('<');
  });
});
