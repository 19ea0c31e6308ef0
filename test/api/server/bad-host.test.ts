import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { lastResortErrorHandler } from '../../../src/http/plugins/core.ts';
import { isValidHost, pathOf } from '../../../src/http/request-meta.ts';
import { json } from '../../helpers/client.ts';
import { memoryLogger, waitForLine } from '../../helpers/logs.ts';
import { rawRequest } from '../../helpers/raw-http.ts';
import { admin } from '../../helpers/seed.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

const log = memoryLogger();
let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ logger: log });
});
afterAll(() => t.stop());

const request = (line: string, host: string | null) => `${line}\r\n${host === null ? '' : `Host: ${host}\r\n`}Connection: close\r\n\r\n`;

describe('a malformed Host or request target (issue 13, defect 1)', () => {
  // Each of these answered 500 with the runtime's development page (paths, stack, source lines).
  test.each([
    ['Host: a b', request('GET /health HTTP/1.1', 'a b')],
    ['Host: %', request('GET /health HTTP/1.1', '%')],
    ['Host: x/y', request('GET /health HTTP/1.1', 'x/y')],
    ['Host: [::1', request('GET /health HTTP/1.1', '[::1')],
    ['Host: 127.0.0.1:99999', request('GET /health HTTP/1.1', '127.0.0.1:99999')],
    ['an empty Host', request('GET /health HTTP/1.1', '')],
    ['HTTP/1.0 without Host', 'GET /health HTTP/1.0\r\n\r\n'],
    ['CONNECT *', request('CONNECT * HTTP/1.1', 'localhost')],
    ['a bad Host on an API route', request('POST /api/files/folder HTTP/1.1', 'a b')],
  ])('%s → 400 JSON {message} with the security headers and a log line', async (_name, head) => {
    const res = await rawRequest(t.url, head);
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toContain('application/json');
    const body = JSON.parse(res.body.toString());
    expect(Object.keys(body)).toEqual(['message']);
    expect(body.message).toMatch(/^Bad request: /);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['x-frame-options']).toBe('DENY');
    expect(res.headers['content-security-policy']).toContain("default-src 'self'");
    const requestId = res.headers['x-request-id'];
    expect(requestId).toBeTruthy();
    const line = await waitForLine(log, (l) => l.msg === 'request' && l.fields.requestId === requestId);
    expect(line.fields.status).toBe(400);
    expect(res.body.toString()).not.toMatch(/node_modules|\/src\/|at .*\.ts:/);
  });

  test('no unhandled error was logged for any of them', () => {
    expect(log.lines.filter((l) => l.level === 'error')).toEqual([]);
  });

  test('valid hosts still work: names, IPv4, IPv6, ports', async () => {
    for (const host of ['localhost', 'nas.lan:8080', '127.0.0.1', '[::1]:3000', 'my_nas']) {
      const res = await rawRequest(t.url, request('GET /health HTTP/1.1', host));
      expect(res.status).toBe(200);
    }
  });

  test('an error thrown while an error is handled reaches the last-resort handler: JSON 500, never the runtime page', async () => {
    const { client } = await admin(t);
    const items = t.server.ctx.services.items;
    const stats = items.stats;
    const error = log.error;
    let calls = 0;
    items.stats = () => {
      throw new Error('stats failed');
    };
    // The access log's error line itself fails: the error escapes every hook of the app.
    log.error = (msg, fields) => {
      if (++calls === 1) throw new Error('logger failed');
      error(msg, fields);
    };
    try {
      const res = await client.get('/api/files/stats');
      expect(res.status).toBe(500);
      expect(res.headers.get('content-type')).toContain('application/json');
      expect(res.headers.get('x-frame-options')).toBe('DENY');
      expect(await json(res)).toEqual({ message: 'Internal server error' });
      expect(
        log.lines.some((l) => l.level === 'error' && l.fields.where === 'runtime' && String(l.fields.err).includes('logger failed')),
      ).toBe(true);
    } finally {
      items.stats = stats;
      log.error = error;
      log.lines.length = 0;
    }
  });

  test('lastResortErrorHandler answers JSON with the security headers', async () => {
    const quiet = memoryLogger();
    const res = lastResortErrorHandler(quiet)(new Error('x'));
    expect(res.status).toBe(500);
    expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    expect(await res.json()).toEqual({ message: 'Internal server error' });
    expect(quiet.lines).toHaveLength(1);
  });
});

describe('request-meta parsing never throws', () => {
  test('dot segments cannot carry a path past the open-path checks (desktop-only access)', async () => {
    t.server.ctx.services.settings.set('desktopOnlyAccess', true);
    try {
      // Taken for an open share path, each would reach its route and answer 401 (no session), not 403.
      for (const p of ['/s/../api/files/stats', '/s/%2e%2e/api/files/stats', '/health/../api/files/stats']) {
        const res = await rawRequest(t.url, request(`GET ${p} HTTP/1.1`, 'localhost'));
        expect(res.status).toBe(403);
      }
    } finally {
      t.server.ctx.services.settings.set('desktopOnlyAccess', false);
    }
  });

  test.each([
    ['/health', '/health'],
    ['/a/b?x=1#y', '/a/b'],
    ['http://a b/health?q', '/health'],
    ['http://%/x', '/x'],
    ['http://host', '/'],
    ['', '/'],
    ['*', '/'],
  ])('pathOf(%p) = %p', (url, path) => {
    expect(pathOf(url)).toBe(path);
  });

  test.each([
    ['localhost', true],
    ['Nas.Lan.', true],
    ['10.0.0.2:65535', true],
    ['[fe80::1]', true],
    ['a b', false],
    ['%', false],
    ['x/y', false],
    ['[::1', false],
    ['h:99999', false],
    ['', false],
    ['a..b', false],
    ['host:', false],
  ])('isValidHost(%p) = %p', (host, valid) => {
    expect(isValidHost(host)).toBe(valid);
  });
});
