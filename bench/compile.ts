import path from 'node:path';

/** scripts/build.ts's flags for the runtime's code: a floor measured against Coffer's memory or instructions is built with them. */
export const AS_COFFER = ['--minify', '--bytecode', '--format=esm'];

/** `source` (a path, or a file name under bench/) compiled with `bun build --compile` and `flags` into `dir`; the executable's path. */
export function compileBench(source: string, dir: string, flags: string[] = []): string {
  const entry = path.isAbsolute(source) ? source : path.join(import.meta.dir, source);
  const exe = path.join(dir, path.basename(entry, '.ts'));
  const built = Bun.spawnSync([process.execPath, 'build', '--compile', ...flags, entry, '--outfile', exe], {
    stdout: 'ignore',
    stderr: 'pipe',
  });
  if (built.exitCode !== 0) throw new Error(`bun build --compile ${path.basename(entry)} failed: ${built.stderr.toString()}`);
  return exe;
}
