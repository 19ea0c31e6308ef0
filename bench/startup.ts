import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { newId } from '../src/lib/ids.ts';
import { freshInstance, seedItems } from './fixtures.ts';
import { compileBench } from './compile.ts';

const ROOT = path.resolve(import.meta.dir, '..');

/** Milliseconds from spawning `exe serve` on `dataDir` to the first 200 from /health. */
async function timeToHealth(exe: string, dataDir: string, cwd: string): Promise<number> {
  // Below Linux's ephemeral range (32768 on), as in bench/server.ts: a port above may be a client connection's.
  const port = 30000 + Math.floor(Math.random() * 2700);
  const t0 = performance.now();
  const proc = Bun.spawn([exe, 'serve', '--port', String(port), '--host', '127.0.0.1', '--data-dir', dataDir], {
    cwd,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LOG_LEVEL: 'silent' },
    stdout: 'ignore',
    stderr: 'ignore',
  });
  for (;;) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/health`)).status === 200) break;
    } catch {
      if (proc.exitCode !== null) throw new Error(`coffer serve exited with ${proc.exitCode} during start-up`);
      await Bun.sleep(1);
    }
  }
  const ms = performance.now() - t0;
  proc.kill('SIGTERM');
  await proc.exited;
  return ms;
}

/**
 * Cold start of the built executable in an empty directory, then issue 28's goal 7: a data directory of
 * 100,000 items, warm cache (one unmeasured start first), each until /health answers 200.
 */
export async function runStartupBench(runs = 10): Promise<void> {
  const build = Bun.spawnSync([process.execPath, 'run', 'build'], { cwd: ROOT, stdout: 'ignore', stderr: 'pipe' });
  if (build.exitCode !== 0) throw new Error(`build failed: ${build.stderr.toString()}`);
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'coffer-cold-'));
    const exe = path.join(dir, 'coffer');
    fs.copyFileSync(path.join(ROOT, 'dist/coffer'), exe);
    fs.chmodSync(exe, 0o755);
    times.push(await timeToHealth(exe, path.join(dir, 'data'), dir));
    fs.rmSync(dir, { recursive: true, force: true });
  }
  times.sort((a, b) => a - b);
  const median = times[Math.floor(times.length / 2)]!;
  console.log(`startup.cold_start_to_health_ms median ${median.toFixed(1)} max ${times.at(-1)!.toFixed(1)} (runs ${runs}, goal < 200)`);

  const { dir, ownerId } = await freshInstance('coffer-startup-100k-');
  try {
    const root = newId();
    seedItems(
      path.join(dir, 'coffer.db'),
      ownerId,
      (i) => (i === 0 ? { id: root, parentId: null, name: 'hundred-thousand', type: 'folder' } : { parentId: root, name: `file-${i}.txt` }),
      100_000,
    );
    const exe = path.join(ROOT, 'dist/coffer');
    // The runtime's own floor: a compiled Bun program that only answers /health, started the same way.
    const bareSource = path.join(dir, 'bare-health.ts');
    fs.writeFileSync(
      bareSource,
      "const port = Number(process.argv[process.argv.indexOf('--port') + 1]);\n" +
        "Bun.serve({ port, hostname: '127.0.0.1', fetch: () => new Response('ok') });\n",
    );
    const bareExe = compileBench(bareSource, dir);
    await timeToHealth(exe, dir, dir);
    await timeToHealth(bareExe, dir, dir);
    const warm: number[] = [];
    const bare: number[] = [];
    for (let i = 0; i < runs; i++) {
      warm.push(await timeToHealth(exe, dir, dir));
      bare.push(await timeToHealth(bareExe, dir, dir));
    }
    warm.sort((a, b) => a - b);
    bare.sort((a, b) => a - b);
    console.log(
      `startup.warm_start_100k_items_to_health_ms median ${warm[Math.floor(runs / 2)]!.toFixed(1)} min ${warm[0]!.toFixed(1)} max ${warm.at(-1)!.toFixed(1)} (built executable, 100,000 items, page cache warm, runs ${runs}, goal < 100); bare compiled Bun answering /health median ${bare[Math.floor(runs / 2)]!.toFixed(1)} min ${bare[0]!.toFixed(1)}`,
    );
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.main) await runStartupBench();
