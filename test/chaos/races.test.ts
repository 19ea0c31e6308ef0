import { describe, expect, test } from 'bun:test';
import { startTestServer } from '../helpers/server.ts';
import { runRaces } from './races.ts';
import { chaosSeed, LONG } from './random.ts';

// `npm test`: 3 rounds of 60 operations per lane (well under a minute); `npm run test:chaos`: 30 rounds of 120.
const ROUNDS = LONG ? 30 : 3;
const OPS = LONG ? 120 : 60;

describe('concurrent conflicting changes through every door (issue 49)', () => {
  test(
    `${ROUNDS} rounds of five lanes on a few names: no answer of 500 or more, the tree's invariants hold`,
    async () => {
      const first = chaosSeed();
      for (let round = 0; round < ROUNDS; round++) {
        const seed = first + round;
        const t = await startTestServer({ env: { COFFER_GENERAL_RATE_LIMIT: '1000000' } });
        try {
          const summary = await runRaces(t, { seed, opsPerLane: OPS });
          // The seed replays the same choices (not the same interleaving): CHAOS_SEED=<seed> npm test -- test/chaos/races.test.ts
          const byStatus: Record<number, number> = {};
          for (const counts of Object.values(summary.statuses))
            for (const [status, n] of Object.entries(counts)) byStatus[Number(status)] = (byStatus[Number(status)] ?? 0) + n;
          console.log(`races seed ${seed}: statuses ${JSON.stringify(byStatus)}`);
          expect({ seed, problems: summary.problems.slice(0, 20) }).toEqual({ seed, problems: [] });
          expect(Object.keys(summary.statuses).length).toBeGreaterThan(20);
        } finally {
          await t.stop();
        }
      }
    },
    LONG ? 900_000 : 90_000,
  );
});
