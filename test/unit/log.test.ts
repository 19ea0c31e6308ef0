import { describe, expect, test } from 'bun:test';
import path from 'node:path';
import { createLogger } from '../../src/log.ts';

const LOG_MODULE = path.resolve(import.meta.dir, '../../src/log.ts');

/** Runs a script with `createLogger` in scope in a child process; its stdout. */
async function child(script: string): Promise<string> {
  const proc = Bun.spawn([process.execPath, '-e', `const { createLogger } = await import(${JSON.stringify(LOG_MODULE)});\n${script}`], {
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const out = await new Response(proc.stdout).text();
  expect(await proc.exited).toBe(0);
  return out;
}

describe('logger', () => {
  test('lines of one turn of the event loop go out in one write, in order, one JSON object per line', async () => {
    const writes: string[] = [];
    const original = process.stdout.write;
    process.stdout.write = ((chunk: string) => writes.push(chunk) > 0) as typeof process.stdout.write;
    try {
      const log = createLogger('info');
      for (let i = 0; i < 100; i++) log.info('request', { n: i });
      log.debug('below the level');
      expect(writes).toEqual([]);
      await new Promise((resolve) => setImmediate(resolve));
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.stdout.write = original;
    }
    expect(writes).toHaveLength(1);
    const lines = writes[0]!
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => l.n)).toEqual(Array.from({ length: 100 }, (_, i) => i));
    expect(lines[0]).toMatchObject({ level: 'info', msg: 'request' });
  });

  test('nothing is lost: many lines, and lines logged right before process.exit', async () => {
    const many = await child(`const log = createLogger('info'); for (let i = 0; i < 5000; i++) log.info('line', { i });`);
    expect(
      many
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l).i),
    ).toEqual(Array.from({ length: 5000 }, (_, i) => i));
    // A line logged, a turn of the event loop, then one logged right before the exit.
    const exiting = await child(
      `const log = createLogger('info'); log.info('first'); await Bun.sleep(5); log.warn('stopped'); process.exit(0);`,
    );
    expect(
      exiting
        .trimEnd()
        .split('\n')
        .map((l) => JSON.parse(l).msg),
    ).toEqual(['first', 'stopped']);
  });
});
