import { describe, expect, spyOn, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import { buildProgram } from '../../cli/program.ts';

const ROOT = path.resolve(import.meta.dir, '../..');

describe('the JIT policy the executable starts with (×64, scripts/build.ts)', () => {
  test("every worker thread's module sets it back at its top level", () => {
    const build = fs.readFileSync(path.join(ROOT, 'scripts/build.ts'), 'utf8');
    // The executable's entry points other than src/main.ts are the worker threads' modules.
    const workers = [...build.matchAll(/^\s*'(src\/[^']+\.ts)',$/gm)].map((m) => m[1]!).filter((f) => f !== 'src/main.ts');
    expect(workers.length).toBe(5);
    for (const file of workers) {
      const source = fs.readFileSync(path.join(ROOT, file), 'utf8');
      expect({ file, resets: /^jitAtFullSpeed\(\);$/m.test(source) }).toEqual({ file, resets: true });
    }
  });

  test('every command but serve sets it back before its action', async () => {
    const setPolicy = spyOn(Bun.unsafe, 'setJITPolicy');
    try {
      const program = buildProgram([]);
      let ran = false;
      program.command('probe').action(() => {
        ran = true;
      });
      await program.parseAsync(['bun', 'coffer', 'probe']);
      expect(ran).toBe(true);
      expect(setPolicy.mock.calls).toEqual([[1]]);
    } finally {
      setPolicy.mockRestore();
    }
  });
});
