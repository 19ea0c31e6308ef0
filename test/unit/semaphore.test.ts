import { describe, expect, test } from 'bun:test';
import { Semaphore } from '../../src/lib/semaphore.ts';

describe('Semaphore', () => {
  test('runs at most its limit at once, the rest in the order they arrived, and goes on after a task fails', async () => {
    const gate = new Semaphore(2);
    let running = 0;
    let most = 0;
    const started: number[] = [];
    const task = (i: number) => async () => {
      started.push(i);
      running++;
      most = Math.max(most, running);
      await Bun.sleep(5);
      running--;
      if (i === 1) throw new Error('task 1 failed');
      return i;
    };
    const results = await Promise.allSettled([0, 1, 2, 3, 4, 5].map((i) => gate.run(task(i))));
    expect(most).toBe(2);
    expect(started).toEqual([0, 1, 2, 3, 4, 5]);
    expect(results.map((r) => (r.status === 'fulfilled' ? r.value : 'failed'))).toEqual([0, 'failed', 2, 3, 4, 5]);
    expect(await gate.run(async () => running)).toBe(0);
  });

  test('with a limit of one, a task starts only after the one before it ended', async () => {
    const gate = new Semaphore(1);
    const events: string[] = [];
    await Promise.all(
      ['a', 'b', 'c'].map((name) =>
        gate.run(async () => {
          events.push(`${name} start`);
          await Bun.sleep(2);
          events.push(`${name} end`);
        }),
      ),
    );
    expect(events).toEqual(['a start', 'a end', 'b start', 'b end', 'c start', 'c end']);
  });
});
