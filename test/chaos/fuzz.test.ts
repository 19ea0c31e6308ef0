import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { memoryLogger } from '../helpers/logs.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { appRoutes, prepareTarget, resetSettings, runFuzz, type FuzzTarget } from './fuzz.ts';
import { chaosSeed, LONG } from './random.ts';

// `npm test`: a few thousand requests (well under a minute); `npm run test:chaos`: 20,000.
const REQUESTS = LONG ? 20_000 : 3000;

const log = memoryLogger();
let t: TestServer;
let target: FuzzTarget;
beforeAll(async () => {
  t = await startTestServer({ logger: log, env: { COFFER_GENERAL_RATE_LIMIT: '1000000' } });
  target = await prepareTarget(t.url, appRoutes());
});
afterAll(() => t.stop());

describe('seeded fuzz over every route (issue 13)', () => {
  test('the fuzzer reaches every route the app serves', () => {
    expect(target.routes.length).toBeGreaterThan(80);
    expect(target.routes).toContainEqual({ method: 'POST', path: '/api/files/upload/bulk' });
  });

  test(
    `${REQUESTS} malformed requests: no answer of 500 or more but the documented ones, no unhandled error, the server alive`,
    async () => {
      const seed = chaosSeed();
      const result = await runFuzz(target, {
        requests: REQUESTS,
        seed,
        every: { n: 250, run: () => resetSettings(t.url, target.admin.cookie) },
      });
      // The seed replays the same requests: CHAOS_SEED=<seed> npm test -- test/chaos/fuzz.test.ts
      console.log(
        `fuzz seed ${seed}: ${result.requests} requests, statuses ${JSON.stringify(result.byStatus)}, ${result.noAnswer} closed without an answer`,
      );
      expect(result.unexpected).toEqual([]);
      expect(result.requests).toBe(REQUESTS);
      const errors = log.lines.filter((l) => l.msg === 'unhandled error');
      expect(errors.map((l) => `${l.fields.method} ${l.fields.path}: ${String(l.fields.err).slice(0, 300)}`)).toEqual([]);
      expect((await fetch(`${t.url}/health`)).status).toBe(200);
      // Most requests must get past the gate, or the fuzz tests nothing.
      const answered = Object.values(result.byStatus).reduce((a, b) => a + b, 0);
      expect(answered).toBeGreaterThan(REQUESTS * 0.8);
    },
    LONG ? 1_200_000 : 60_000,
  );
});
