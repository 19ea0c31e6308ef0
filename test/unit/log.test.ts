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

  test('a line is the JSON of time, level, msg and the fields, in that order, whatever the fields hold', async () => {
    const writes: string[] = [];
    const original = process.stdout.write;
    process.stdout.write = ((chunk: string) => writes.push(chunk) > 0) as typeof process.stdout.write;
    const cases: [string, Record<string, unknown> | undefined][] = [
      ['request', { requestId: 'a"b', path: '/x\n\u2028', status: 200, ms: 0.25, login: undefined, nested: { a: [1, null] } }],
      ['no fields', undefined],
      ['all undefined', { login: undefined }],
      ['quote " and \\ in the message', { n: 1 }],
      ['overridden', { msg: 'instead', level: 'custom', extra: true }],
      ['time given', { time: 'then', n: 2 }],
    ];
    try {
      const log = createLogger('debug', 'journald');
      for (const [msg, fields] of cases) log.info(msg, fields);
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.stdout.write = original;
    }
    const lines = writes.join('').trimEnd().split('\n');
    expect(lines).toHaveLength(cases.length);
    lines.forEach((line, i) => {
      expect(line.startsWith('<6>')).toBe(true);
      const time = (JSON.parse(line.slice(3)) as { time: string }).time;
      const [msg, fields] = cases[i]!;
      const expected = JSON.stringify({ time: fields?.time === undefined ? time : 'unused', level: 'info', msg, ...fields });
      expect(line.slice(3)).toBe(expected);
      if (fields?.time === undefined) expect(Math.abs(Date.parse(time) - Date.now())).toBeLessThan(5000);
    });
  });
});
