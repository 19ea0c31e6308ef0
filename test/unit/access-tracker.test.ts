import { expect, test } from 'bun:test';
import { ManualClock } from '../../src/clock.ts';
import type { ItemsRepo } from '../../src/db/repos/items.ts';
import type { Logger } from '../../src/log.ts';
import { AccessTracker } from '../../src/services/files/access.ts';

test('read marks the timer cannot write (not busy: a full disk) are logged once, without a throw out of the timer', async () => {
  const errors: string[] = [];
  const log: Logger = { debug() {}, info() {}, warn() {}, error: (msg) => errors.push(msg) };
  let tries = 0;
  const items = {
    markAccessed() {
      tries++;
      throw Object.assign(new Error('database or disk is full'), { code: 'SQLITE_FULL' });
    },
  } as unknown as ItemsRepo;
  const tracker = new AccessTracker(items, new ManualClock(1_700_000_000_000), log);
  tracker.touch([{ id: 'item-1', accessedAt: 0 }]);
  // The timer flushes every 5 s.
  await Bun.sleep(5_300);
  expect(tries).toBe(1);
  expect(errors).toEqual(['access times not written']);
  tracker.stop();
}, 15_000);
