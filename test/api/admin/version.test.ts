import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { startTestServer, type TestServer } from '../../helpers/server.ts';
import { json } from '../../helpers/client.ts';
import * as seed from '../../helpers/seed.ts';
import { VersionService } from '../../../src/services/admin/version.ts';
import type { CoreContext } from '../../../src/context.ts';
import { createLogger } from '../../../src/log.ts';
import { AppError } from '../../../src/errors.ts';

const FEED = { frontend: '2.3.4', backend: '2.3.5', desktop: '1.9.0', notes: 'passed through as is' };
let mode: 'ok' | 'error' | 'html' = 'ok';
const feed = Bun.serve({
  port: 0,
  hostname: '127.0.0.1',
  fetch(req) {
    const path = new URL(req.url).pathname;
    if (path === '/hang') return new Promise<Response>(() => {});
    if (mode === 'error') return new Response('down for maintenance', { status: 503 });
    if (mode === 'html') return new Response('<html>not json</html>', { headers: { 'content-type': 'text/html' } });
    return Response.json(FEED);
  },
});
afterAll(() => feed.stop(true));

describe('GET /api/version/latest', () => {
  let t: TestServer;
  let admin: seed.SeededLogin;
  beforeAll(async () => {
    t = await startTestServer({ env: { UPDATE_FEED_URL: `http://127.0.0.1:${feed.port}/latest.json` } });
    admin = await seed.admin(t);
  });
  afterAll(() => t.stop());

  test("passes the feed's answer through unchanged", async () => {
    mode = 'ok';
    const res = await admin.client.get('/api/version/latest');
    expect(res.status).toBe(200);
    expect(await json(res)).toEqual(FEED);
  });

  test('a feed answering an error status or something other than a JSON object → 502 Update feed unavailable', async () => {
    for (const m of ['error', 'html'] as const) {
      mode = m;
      const res = await admin.client.get('/api/version/latest');
      expect(res.status).toBe(502);
      expect(await json(res)).toEqual({ message: 'Update feed unavailable', configured: true });
    }
    mode = 'ok';
  });

  test('needs a session; /api/version answers the dotted backend version', async () => {
    expect((await t.client().get('/api/version/latest')).status).toBe(401);
    const version = await json(await admin.client.get('/api/version'));
    expect(version.backend).toMatch(/^\d+\.\d+\.\d+$/);
    expect(version.updateFeed).toBe(true);
  });
});

describe('without a reachable feed', () => {
  test('no UPDATE_FEED_URL, or a feed that refuses connections → 502, saying whether a feed is configured', async () => {
    const closed = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response('') });
    const deadPort = closed.port;
    closed.stop(true);
    const envs: Array<Record<string, string>> = [{}, { UPDATE_FEED_URL: `http://127.0.0.1:${deadPort}/latest.json` }];
    for (const env of envs) {
      const t = await startTestServer({ env });
      try {
        const a = await seed.admin(t);
        const res = await a.client.get('/api/version/latest');
        expect(res.status).toBe(502);
        expect(await json(res)).toEqual({ message: 'Update feed unavailable', configured: 'UPDATE_FEED_URL' in env });
        expect((await json(await a.client.get('/api/version'))).updateFeed).toBe('UPDATE_FEED_URL' in env);
      } finally {
        await t.stop();
      }
    }
  });

  test('a feed that never answers is given up after the timeout (10 s in production)', async () => {
    const ctx = { config: { updateFeedUrl: `http://127.0.0.1:${feed.port}/hang` }, log: createLogger('silent') } as unknown as CoreContext;
    const started = performance.now();
    const err = await new VersionService(ctx, 200).latest().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).status).toBe(502);
    // The 200 ms given, not the 10 s default: half of it leaves room for a loaded machine.
    expect(performance.now() - started).toBeLessThan(5000);
  });
});
