import { afterAll, expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import { tempDir } from '../helpers/run-root.ts';

const dir = tempDir('coffer-embedded-');
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

test('a compiled executable finds its embedded file by prefix without the collector counting every embedded file', async () => {
  const bytes = 64 * 1024;
  const other = 16 * 1024 * 1024;
  fs.writeFileSync(path.join(dir, 'payload.bin'), new Uint8Array(bytes).fill(7));
  fs.writeFileSync(path.join(dir, 'other.bin'), new Uint8Array(other).fill(9));
  fs.writeFileSync(
    path.join(dir, 'main.ts'),
    `import { heapStats } from 'bun:jsc';
import { embeddedFile } from ${JSON.stringify(path.resolve(import.meta.dir, '../../src/lib/embedded-file.ts'))};
Bun.gc(true);
const before = heapStats().extraMemorySize;
const found = embeddedFile('payload');
Bun.gc(true);
const grown = heapStats().extraMemorySize - before;
const data = new Uint8Array(await found!.file.arrayBuffer());
console.log(JSON.stringify({ name: found!.name, size: data.length, sevens: data.every((b) => b === 7), grown, none: embeddedFile('absent') === undefined }));
`,
  );
  const exe = path.join(dir, 'app');
  const build = Bun.spawnSync([process.execPath, 'build', '--compile', 'main.ts', 'payload.bin', 'other.bin', '--outfile', exe], {
    cwd: dir,
    stderr: 'pipe',
  });
  expect(build.exitCode, build.stderr.toString()).toBe(0);
  const run = Bun.spawnSync([exe], { stderr: 'pipe' });
  expect(run.exitCode, run.stderr.toString()).toBe(0);
  const out = JSON.parse(run.stdout.toString()) as { name: string; size: number; sevens: boolean; grown: number; none: boolean };
  expect(out.name).toMatch(/^payload-\w+\.bin$/);
  expect(out.size).toBe(bytes);
  expect(out.sevens).toBe(true);
  expect(out.none).toBe(true);
  // Bun.embeddedFiles would add the other file's 16 MiB to what the collector counts, for the process's life.
  expect(out.grown).toBeLessThan(other / 8);
}, 60_000);
