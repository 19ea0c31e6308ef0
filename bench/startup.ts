import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dir, '..');

/** Cold start of the built executable in an empty directory until /health answers 200. */
export async function runStartupBench(runs = 10): Promise<void> {
  const build = Bun.spawnSync([process.execPath, 'run', 'build'], { cwd: ROOT, stdout: 'ignore', stderr: 'pipe' });
  if (build.exitCode !== 0) throw new Error(`build failed: ${build.stderr.toString()}`);
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'coffer-cold-'));
    const exe = path.join(dir, 'coffer');
    fs.copyFileSync(path.join(ROOT, 'dist/coffer'), exe);
    fs.chmodSync(exe, 0o755);
    const port = 30000 + Math.floor(Math.random() * 20000);
    const t0 = performance.now();
    const proc = Bun.spawn([exe, 'serve', '--port', String(port), '--host', '127.0.0.1'], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LOG_LEVEL: 'silent' },
      stdout: 'ignore',
      stderr: 'ignore',
    });
    for (;;) {
      try {
        if ((await fetch(`http://127.0.0.1:${port}/health`)).status === 200) break;
      } catch {
        await Bun.sleep(2);
      }
    }
    times.push(performance.now() - t0);
    proc.kill('SIGTERM');
    await proc.exited;
    fs.rmSync(dir, { recursive: true, force: true });
  }
  times.sort((a, b) => a - b);
  const median = times[Math.floor(times.length / 2)]!;
  console.log(`startup.cold_start_to_health_ms median ${median.toFixed(1)} max ${times.at(-1)!.toFixed(1)} (runs ${runs}, goal < 200)`);
}

if (import.meta.main) await runStartupBench();
