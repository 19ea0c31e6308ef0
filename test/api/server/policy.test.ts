import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createApp } from '../../../src/app.ts';
import { ROUTES } from '../../../src/http/policy.ts';
import { DECLARED_AS } from '../../../src/http/route.ts';
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

  test("every route is declared through http/route.ts under its own key, so its principal comes from its policy's access", () => {
    // A route registered around route() would read (or miss) a principal the guard resolved for another policy.
    const undeclared = createApp(t.server.ctx)
      .routes.filter((r) => (r.hooks?.detail as Record<string, unknown> | undefined)?.[DECLARED_AS] !== `${r.method} ${r.path}`)
      .map((r) => `${r.method} ${r.path}`);
    expect(undeclared).toEqual([]);
  });
});
