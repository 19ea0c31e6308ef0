import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import path from 'node:path';
import { memoryLogger, waitForLine, type LogLine } from '../../helpers/logs.ts';
import { davLogin } from '../../helpers/dav.ts';
import { upload, uploadRaw } from '../../helpers/files.ts';
import * as seed from '../../helpers/seed.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

const log = memoryLogger();
let t: TestServer;
let o: seed.SeededLogin;
let big: { id: string };
const SIZE = 24 * 1024 ** 2;

beforeAll(async () => {
  t = await startTestServer({ logger: log });
  await seed.admin(t);
  o = await seed.owner(t);
  big = await upload(o.client, 'big.bin', Buffer.alloc(SIZE, 7));
});
afterAll(() => t.stop());

const requestLine = (id: string) => (l: LogLine) => l.msg === 'request' && l.fields.requestId === id;

describe('the access log', () => {
  test('a download is logged when its body has gone out, with the whole transfer: duration, bytes, user agent', async () => {
    const res = await o.client.get(`/api/files/${big.id}/download`, { 'user-agent': 'coffer-test/1.0' });
    const id = res.headers.get('x-request-id')!;
    const reader = res.body!.getReader();
    let received = (await reader.read()).value!.byteLength;
    // The transfer must last 300 ms: the logged duration covers it.
    await Bun.sleep(300);
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      received += value.byteLength;
    }
    expect(received).toBe(SIZE);
    const line = await waitForLine(log, requestLine(id));
    expect(line.level).toBe('info');
    expect(line.fields).toMatchObject({ status: 200, bytesOut: SIZE, transfer: 'complete', userAgent: 'coffer-test/1.0', login: o.id });
    expect(line.fields.ms as number).toBeGreaterThanOrEqual(300);
  });

  test('a download the client abandons is logged as aborted, with the bytes that went out', async () => {
    const controller = new AbortController();
    const res = await o.client.request(`/api/files/${big.id}/download`, { signal: controller.signal });
    const id = res.headers.get('x-request-id')!;
    await res.body!.getReader().read();
    controller.abort();
    const line = await waitForLine(log, requestLine(id), 10_000);
    expect(line.fields.transfer).toBe('aborted');
    expect(line.fields.bytesOut as number).toBeLessThan(SIZE);
  });

  test('an upload is logged with the bytes of its body', async () => {
    const res = await uploadRaw(o.client, 'up.bin', Buffer.alloc(300_000, 1));
    expect(res.status).toBe(200);
    const line = await waitForLine(log, requestLine(res.headers.get('x-request-id')!));
    expect(line.fields.bytesIn as number).toBeGreaterThan(300_000);
    expect(line.fields.bytesIn as number).toBeLessThan(301_000);
    expect(line.fields.bytesOut).toBeUndefined();
  });

  test('each line has the status the client was sent, whether the handler set it or answered with a response of its own', async () => {
    const dav = await davLogin(t, o);
    const range = { range: 'bytes=0-9' };
    const sent: Array<[string, Response]> = [
      ['WebDAV PUT', await dav.put('logged.txt', 'new file')],
      ['WebDAV PROPFIND', await dav.propfind('')],
      ['a range', await o.client.get(`/api/files/${big.id}/download`, range)],
      ['an unknown id', await o.client.get('/api/files/nothing-here')],
      ['a sign-in refused', await t.client().post('/api/login', { email: o.email, password: 'wrong password' })],
    ];
    const logged = await Promise.all(
      sent.map(async ([what, res]) => {
        await res.arrayBuffer();
        return [what, (await waitForLine(log, requestLine(res.headers.get('x-request-id')!))).fields.status];
      }),
    );
    expect(logged).toEqual(sent.map(([what, res]) => [what, res.status]));
    expect(sent.map(([, res]) => res.status)).toEqual([201, 207, 206, 404, 401]);
  });

  test('/health is a debug line; other requests are info', async () => {
    const health = await t.client().get('/health');
    expect((await waitForLine(log, requestLine(health.headers.get('x-request-id')!))).level).toBe('debug');
    const profile = await o.client.get('/api/profile');
    expect((await waitForLine(log, requestLine(profile.headers.get('x-request-id')!))).level).toBe('info');
  });

  test("audit events carry the request's id, the one its log line has (a client's own X-Request-Id included)", async () => {
    const res = await uploadRaw(o.client, 'audited.txt', 'x');
    const generated = res.headers.get('x-request-id')!;
    const failed = await t
      .client()
      .post('/api/login', { email: o.email, password: 'wrong password' }, { 'x-request-id': 'client-chosen-42' });
    expect(failed.headers.get('x-request-id')).toBe('client-chosen-42');
    t.server.ctx.services.audit.flush();
    const audit = t.server.ctx.services.audit;
    expect(audit.list({ requestId: generated }).map((e) => e.action)).toEqual(['file.upload']);
    expect(audit.list({ requestId: 'client-chosen-42' }).map((e) => [e.action, e.status])).toEqual([['auth.sign_in', 'failure']]);
  });
});

describe('LOG_FORMAT=journald', () => {
  test('every line carries its syslog priority, so journalctl -p err finds the errors', async () => {
    const module = path.resolve(import.meta.dir, '../../../src/log.ts');
    const proc = Bun.spawn(
      [
        process.execPath,
        '-e',
        `const { createLogger } = await import(${JSON.stringify(module)});
         const log = createLogger('debug', 'journald');
         log.debug('d'); log.info('i'); log.warn('w'); log.error('e');`,
      ],
      { stdout: 'pipe', stderr: 'pipe' },
    );
    const [out, err] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
    expect(await proc.exited).toBe(0);
    const prefixed = (text: string) =>
      text
        .trimEnd()
        .split('\n')
        .map((l) => [l.slice(0, 3), JSON.parse(l.slice(3)).msg]);
    expect(prefixed(out)).toEqual([
      ['<7>', 'd'],
      ['<6>', 'i'],
      ['<4>', 'w'],
    ]);
    expect(prefixed(err)).toEqual([['<3>', 'e']]);
  });
});
