import fs from 'node:fs';
import { freshInstance, memoryMiB, openCli, seedFiles } from './fixtures.ts';

/**
 * Orphan scan over N stored objects and N file rows (1% orphans on each side). The scan runs in a
 * child process so its peak RSS is the scan's own. `ORPHANS_BENCH_SIZES=100000,1000000` for more sizes.
 */
async function child(dir: string): Promise<void> {
  const ctx = openCli(dir);
  const before = memoryMiB();
  const t0 = performance.now();
  const report = await ctx.services.orphans.scan({ graceMinutes: 1440 });
  const seconds = (performance.now() - t0) / 1000;
  const after = memoryMiB();
  ctx.close();
  console.log(
    JSON.stringify({
      seconds,
      peakRssMiB: after.peak,
      rssBeforeMiB: before.now,
      storedObjects: report.totals.storedObjects,
      databaseRows: report.totals.databaseRows,
      storageOrphans: report.storageOrphans.count,
      databaseOrphans: report.databaseOrphans.count,
    }),
  );
}

export async function runOrphansBench(): Promise<void> {
  const sizes = (process.env.ORPHANS_BENCH_SIZES ?? '100000').split(',').map(Number);
  for (const n of sizes) {
    const { dir, ownerId } = await freshInstance('coffer-bench-orphans-');
    try {
      const orphans = Math.floor(n / 100);
      const t0 = performance.now();
      const ctx = openCli(dir);
      seedFiles(ctx, ownerId, { rows: n, objects: n, matched: n - orphans });
      ctx.close();
      const seedSeconds = (performance.now() - t0) / 1000;
      const proc = Bun.spawnSync([process.execPath, import.meta.path, '--child', dir], { stdout: 'pipe', stderr: 'pipe' });
      if (proc.exitCode !== 0) throw new Error(`scan child failed: ${proc.stderr.toString()}`);
      const r = JSON.parse(proc.stdout.toString()) as Record<string, number>;
      if (r.storageOrphans !== orphans || r.databaseOrphans !== orphans) throw new Error(`unexpected report ${JSON.stringify(r)}`);
      console.log(
        `orphans.scan objects=${r.storedObjects} rows=${r.databaseRows} seconds ${r.seconds!.toFixed(2)} peak_rss_MiB ${r.peakRssMiB!.toFixed(1)} ` +
          `(rss before scan ${r.rssBeforeMiB!.toFixed(1)}; found ${r.storageOrphans}+${r.databaseOrphans} orphans; seeding took ${seedSeconds.toFixed(1)} s)`,
      );
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }
}

if (import.meta.main) {
  const i = process.argv.indexOf('--child');
  if (i > 0) await child(process.argv[i + 1]!);
  else await runOrphansBench();
}
