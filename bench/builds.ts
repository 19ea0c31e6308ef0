import fs from 'node:fs';
import path from 'node:path';
import { BUILD_TARGETS } from '../scripts/targets.ts';

const ROOT = path.resolve(import.meta.dir, '..');

function build(args: string[]): void {
  const proc = Bun.spawnSync([process.execPath, 'run', 'build', ...args], { cwd: ROOT, stdout: 'pipe', stderr: 'pipe' });
  if (proc.exitCode !== 0) throw new Error(`build ${args.join(' ')} failed: ${proc.stderr.toString()}`);
}

/** The size of the executable `npm run build` makes for this machine and for each cross target. */
export async function runBuildsBench(): Promise<void> {
  build([]);
  const names = Object.keys(BUILD_TARGETS);
  build(['--', '--target', names.join(',')]);
  const mib = (file: string) => (fs.statSync(path.join(ROOT, 'dist', file)).size / 1024 ** 2).toFixed(1);
  console.log(`builds.native dist/coffer MiB ${mib('coffer')}`);
  for (const name of names) console.log(`builds.${name} dist/coffer-${name} MiB ${mib(`coffer-${name}`)}`);
}

if (import.meta.main) await runBuildsBench();
