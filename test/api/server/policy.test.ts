import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createApp } from '../../../src/app.ts';
import { ROUTES } from '../../../src/http/policy.ts';
import { startTestServer, type TestServer } from '../../helpers/server.ts';

let t: TestServer;
beforeAll(async () => {
  t = await startTestServer({ startWorker: false });
});
afterAll(() => t.stop());

describe('http/policy.ts: one table for every route', () => {
  test('every registered route has a policy, and every policy names a registered route', () => {
    const served = createApp(t.server.ctx).routes.map((r) => `${r.method} ${r.path}`);
    const missing = served.filter((key) => !(key in ROUTES));
    const stale = Object.keys(ROUTES).filter((key) => !served.includes(key));
    expect({ missing, stale }).toEqual({ missing: [], stale: [] });
    expect(served.length).toBeGreaterThan(80);
  });
});
