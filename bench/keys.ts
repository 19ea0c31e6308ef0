import fs from 'node:fs';
import path from 'node:path';
import { freshInstance, openCli, seedFiles } from './fixtures.ts';

const MAIN = path.resolve(import.meta.dir, '../src/main.ts');

/** `coffer keys rotate` over N files (the CLI process, start-up included). `KEYS_BENCH_FILES` overrides N. */
export async function runKeysBench(): Promise<void> {
  const n = Number(process.env.KEYS_BENCH_FILES ?? 100_000);
  const { dir, ownerId } = await freshInstance('coffer-bench-keys-');
  try {
    const ctx = openCli(dir);
    seedFiles(ctx, ownerId, { rows: n, objects: 0, matched: 0 });
    ctx.close();
    const t0 = performance.now();
    const proc = Bun.spawnSync([process.execPath, MAIN, 'keys', 'rotate', '--json', '--data-dir', dir], { stdout: 'pipe', stderr: 'pipe' });
    const seconds = (performance.now() - t0) / 1000;
    if (proc.exitCode !== 0) throw new Error(`keys rotate failed: ${proc.stderr.toString()}`);
    const r = JSON.parse(proc.stdout.toString()) as { itemsRewrapped: number; completed: boolean };
    if (r.itemsRewrapped !== n || !r.completed) throw new Error(`unexpected result ${proc.stdout.toString()}`);
    console.log(`keys.rotate files=${n} seconds ${seconds.toFixed(2)} (${Math.round(n / seconds)} files/s, CLI start-up included)`);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.main) await runKeysBench();
