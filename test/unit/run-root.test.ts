import { afterAll, expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import { removeStaleRoots, tempDir } from '../helpers/run-root.ts';

const base = tempDir('coffer-run-roots-');
afterAll(() => fs.rmSync(base, { recursive: true, force: true }));

/** A test run in a process of its own whose temp dir is `base`: it makes its root, says where, and runs until its stdin closes. */
async function run(): Promise<{ proc: Bun.Subprocess<'pipe', 'pipe', 'pipe'>; root: string }> {
  const script = `import path from 'node:path';
import { tempDir } from ${JSON.stringify(path.resolve(import.meta.dir, '../helpers/run-root.ts'))};
console.log(path.dirname(tempDir()));
for await (const _ of Bun.stdin.stream());`;
  const proc = Bun.spawn([process.execPath, '-e', script], {
    env: { PATH: process.env.PATH!, TMPDIR: base },
    stdin: 'pipe',
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const reader = proc.stdout.getReader();
  let out = '';
  while (!out.includes('\n')) {
    const { done, value } = await reader.read();
    if (done) throw new Error(`the run ended early: ${await new Response(proc.stderr).text()}`);
    out += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  return { proc, root: out.trim() };
}

test("a run killed part-way leaves its root, the next run's start removes it; a live run's root stays, and goes as that run ends", async () => {
  const killed = await run();
  fs.mkdirSync(path.join(killed.root, 'coffer-s3-abc'));
  fs.writeFileSync(path.join(killed.root, 'coffer-s3-abc', 'object'), 'bytes');
  killed.proc.kill('SIGKILL');
  await killed.proc.exited;
  expect(fs.existsSync(killed.root)).toBe(true);

  // The next run's start removes it.
  const live = await run();
  expect(fs.existsSync(killed.root)).toBe(false);
  // A root whose pid now names another process (this one), a run's root not yet claimed, and one left unclaimed long ago.
  const reused = fs.mkdtempSync(path.join(base, 'coffer-run-1-'));
  fs.writeFileSync(path.join(reused, 'owner.json'), JSON.stringify({ pid: process.pid, started: 'an earlier process' }));
  const claiming = fs.mkdtempSync(path.join(base, 'coffer-run-2-'));
  const abandoned = fs.mkdtempSync(path.join(base, 'coffer-run-3-'));
  const old = new Date(Date.now() - 10 * 60_000);
  fs.utimesSync(abandoned, old, old);
  const other = fs.mkdtempSync(path.join(base, 'coffer-s3-'));

  expect(removeStaleRoots(base).sort()).toEqual([reused, abandoned].sort());
  expect([live.root, claiming, other].map((d) => fs.existsSync(d))).toEqual([true, true, true]);

  live.proc.stdin.end();
  expect(await live.proc.exited).toBe(0);
  expect(fs.existsSync(live.root)).toBe(false);
});
