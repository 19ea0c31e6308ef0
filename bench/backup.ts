import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { freshInstance, openCli, seedFiles } from './fixtures.ts';

const MAIN = path.resolve(import.meta.dir, '../src/main.ts');
const MiB = 1024 ** 2;
const FILE_MIB = 4;

function cli(args: string[]): number {
  const t0 = performance.now();
  const proc = Bun.spawnSync([process.execPath, MAIN, ...args], { stdout: 'pipe', stderr: 'pipe' });
  if (proc.exitCode !== 0) throw new Error(`coffer ${args[0]} failed: ${proc.stderr.toString()}`);
  return (performance.now() - t0) / 1000;
}

function dirBytes(dir: string): number {
  let total = 0;
  for (const e of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (e.isFile()) total += fs.statSync(path.join(e.parentPath, e.name)).size;
  }
  return total;
}

/**
 * `coffer backup --full` and `coffer restore` of a data directory of BACKUP_BENCH_MIB (default 2048) MiB
 * in 4 MiB files, each a CLI process (start-up included), on the same disk, page cache warm.
 */
export async function runBackupBench(): Promise<void> {
  const totalMiB = Number(process.env.BACKUP_BENCH_MIB ?? 2048);
  const files = Math.max(1, Math.round(totalMiB / FILE_MIB));
  const { dir, ownerId } = await freshInstance('coffer-bench-backup-');
  const out = fs.mkdtempSync(path.join(path.dirname(dir), 'coffer-bench-backup-out-'));
  try {
    const ctx = openCli(dir);
    seedFiles(ctx, ownerId, { rows: files, objects: files, matched: files, content: randomBytes(FILE_MIB * MiB) });
    ctx.close();
    const source = dirBytes(dir);
    const archive = path.join(out, 'full.tar');
    const backupSeconds = cli(['backup', '--full', archive, '--data-dir', dir]);
    const archiveBytes = fs.statSync(archive).size;
    const target = path.join(out, 'restored');
    const restoreSeconds = cli(['restore', archive, '--data-dir', target]);
    const mib = (bytes: number) => (bytes / MiB).toFixed(0);
    console.log(`backup.data_dir MiB ${mib(source)} (${files} files of ${FILE_MIB} MiB); archive MiB ${mib(archiveBytes)}`);
    console.log(`backup.full seconds ${backupSeconds.toFixed(2)} (${(archiveBytes / MiB / backupSeconds).toFixed(0)} MiB/s)`);
    console.log(`backup.restore seconds ${restoreSeconds.toFixed(2)} (${(archiveBytes / MiB / restoreSeconds).toFixed(0)} MiB/s)`);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
    fs.rmSync(out, { recursive: true, force: true });
  }
}

if (import.meta.main) await runBackupBench();
