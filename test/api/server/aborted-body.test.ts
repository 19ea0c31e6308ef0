import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { memoryLogger, waitForLine } from '../../helpers/logs.ts';
import { cookieHeader, hangUpMidBody } from '../../helpers/raw-http.ts';
import { admin, type SeededLogin } from '../../helpers/seed.ts';
import { rowCount } from '../../helpers/files.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

const log = memoryLogger();
let t: TestServer;
let a: SeededLogin;
beforeAll(async () => {
  t = await startTestServer({ logger: log });
  a = await admin(t);
});
afterAll(() => t.stop());

const head = (path: string, extra: string, cookie?: string) =>
  `POST ${path} HTTP/1.1\r\nHost: localhost\r\n${cookie ? `Cookie: ${cookie}\r\n` : ''}Content-Type: application/json\r\n${extra}\r\n`;

describe('a JSON request whose client hangs up mid-body (issue 13, defect 4)', () => {
  test.each([
    ['a declared length, half sent', 'Content-Length: 1000\r\n', '{"name":"half'],
    ['chunked, never terminated', 'Transfer-Encoding: chunked\r\n', '0d\r\n{"name":"half\r\n'],
  ])('%s: logged as a 499 like an aborted upload, no error, nothing created', async (_name, framing, partial) => {
    log.lines.length = 0;
    const before = rowCount(t);
    await hangUpMidBody(t.url, head('/api/files/folder', framing, cookieHeader(a.client.cookies)), partial);
    const line = await waitForLine(log, (l) => l.msg === 'request' && l.fields.path === '/api/files/folder');
    expect(line.fields.status).toBe(499);
    expect(log.lines.filter((l) => l.level === 'error')).toEqual([]);
    expect(rowCount(t)).toBe(before);
  });

  test('on a public route too (sign-in)', async () => {
    log.lines.length = 0;
    await hangUpMidBody(t.url, head('/api/login', 'Content-Length: 500\r\n'), '{"email":"x@y.z","pass');
    const line = await waitForLine(log, (l) => l.msg === 'request' && l.fields.path === '/api/login');
    expect(line.fields.status).toBe(499);
    expect(log.lines.filter((l) => l.level === 'error')).toEqual([]);
  });

  test('the server keeps answering afterwards', async () => {
    expect((await a.client.get('/api/files/stats')).status).toBe(200);
  });
});
