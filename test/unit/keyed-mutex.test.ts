import { describe, expect, test } from 'bun:test';
import { KeyedMutex } from '../../src/lib/keyed-mutex.ts';

describe('KeyedMutex', () => {
  test('a task of a key nothing waits on starts in the caller turn and is told it did not wait; the next waits for it', async () => {
    const mutex = new KeyedMutex();
    const log: string[] = [];
    let finishFirst!: () => void;
    const first = mutex.run('a', async (waited) => {
      log.push(`first started, waited ${waited}`);
      await new Promise<void>((resolve) => (finishFirst = resolve));
      log.push('first done');
    });
    log.push('after the first call');
    const second = mutex.run('a', async (waited) => void log.push(`second started, waited ${waited}`));
    const other = mutex.run('b', async (waited) => void log.push(`other key started, waited ${waited}`));
    await other;
    finishFirst();
    await Promise.all([first, second]);
    expect(log).toEqual([
      'first started, waited false',
      'after the first call',
      'other key started, waited false',
      'first done',
      'second started, waited true',
    ]);
  });

  test('a task that throws lets the next one run', async () => {
    const mutex = new KeyedMutex();
    const failed = mutex.run('a', async () => {
      throw new Error('no');
    });
    const next = mutex.run('a', async (waited) => waited);
    await expect(failed).rejects.toThrow('no');
    expect(await next).toBe(true);
  });
});
