import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { memoryLogger } from '../helpers/logs.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { appRoutes, prepareTarget, resetSettings } from './fuzz.ts';
import { type MatrixTarget, prepareMatrixTarget, runMatrix } from './fuzz-matrix.ts';

// Limiters raised: a refusal by a limiter would hide what the route itself does with the input.
const UNLIMITED = '1000000';
const log = memoryLogger();
let t: TestServer;
let target: MatrixTarget;
beforeAll(async () => {
  t = await startTestServer({
    logger: log,
    env: {
      COFFER_GENERAL_RATE_LIMIT: UNLIMITED,
      COFFER_AUTH_RATE_LIMIT: UNLIMITED,
      COFFER_MFA_RATE_LIMIT: UNLIMITED,
      COFFER_MEMBER_LOOKUP_RATE_LIMIT: UNLIMITED,
      COFFER_BACKUP_CODES_RATE_LIMIT: UNLIMITED,
    },
  });
  target = await prepareMatrixTarget(await prepareTarget(t.url, appRoutes()));
  // The web app is built from source on its first asset (tests only; a release embeds it): not a hang to report.
  await (await fetch(`${t.url}/assets/warm-up.js`)).arrayBuffer();
});
afterAll(() => t.stop());

describe('fixed matrix of bad input over every route', () => {
  test('the matrix knows each route body and query schema from the app', () => {
    const withBody = Object.values(target.openapi.paths).flatMap((ops) => Object.values(ops).filter((op) => op.requestBody));
    expect(withBody.length).toBeGreaterThan(50);
  });

  test("wrong types per field, extreme numbers, odd strings, broken bodies, odd queries, segments and headers, WebDAV methods: no 500, no hang, a readable 4xx, no success on another account's id", async () => {
    const result = await runMatrix(target, {
      seed: 13,
      slowMs: 5000,
      every: { n: 250, run: () => resetSettings(t.url, target.admin.cookie) },
    });
    console.log(`fuzz matrix: ${result.requests} requests, statuses ${JSON.stringify(result.byStatus)}`);
    expect(result.failures).toEqual([]);
    expect(result.slow).toEqual([]);
    expect(result.unreadable).toEqual([]);
    const errors = log.lines.filter((l) => l.msg === 'unhandled error');
    expect(errors.map((l) => `${l.fields.method} ${l.fields.path}: ${String(l.fields.err).slice(0, 300)}`)).toEqual([]);
    expect((await fetch(`${t.url}/health`)).status).toBe(200);
    // Most requests must get an answer past the gate, or the matrix tests nothing.
    expect(result.byStatus['422']).toBeGreaterThan(3000);
    expect(result.byStatus['200']).toBeGreaterThan(1000);
  }, 120_000);
});
