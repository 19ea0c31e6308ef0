import path from 'node:path';
import fs from 'node:fs';
import { tempDir } from './server.ts';
import { freePort, upOrExited } from './server-process.ts';

/**
 * Builds dist/coffer (or dist/coffer-<target>) with `npm run build`, as a user would. For this machine, the
 * executable the test runner built with the same steps (COFFER_TEST_EXECUTABLE) when there is one: not a second build.
 */
export async function ensureBinary(target?: string): Promise<string> {
  if (!target && process.env.COFFER_TEST_EXECUTABLE) return process.env.COFFER_TEST_EXECUTABLE;
  const proc = Bun.spawn([process.execPath, 'run', 'build', ...(target ? ['--', '--target', target] : [])], {
    cwd: path.resolve(import.meta.dir, '../..'),
    stdout: 'pipe',
    stderr: 'pipe',
  });
  if ((await proc.exited) !== 0) throw new Error(`build failed: ${await new Response(proc.stderr).text()}`);
  return path.resolve(import.meta.dir, `../../dist/coffer${target ? `-${target}` : ''}`);
}

export interface RunningBinary {
  url: string;
  dir: string;
  proc: ReturnType<typeof Bun.spawn>;
  stop(): Promise<number>;
}

export interface BinaryOptions {
  env?: Record<string, string>;
  /** The executable, as ensureBinary names it. */
  binary: string;
  /** Runs the executable through this command (an emulator), e.g. ['qemu-aarch64-static']. */
  runner?: string[];
  startTimeoutMs?: number;
}

/** Runs `coffer serve` from the built executable, alone in an empty directory, and waits for /health. */
export async function startBinary({ env = {}, binary, runner = [], startTimeoutMs = 10_000 }: BinaryOptions): Promise<RunningBinary> {
  const dir = tempDir('coffer-bin-');
  const exe = path.join(dir, 'coffer');
  fs.copyFileSync(binary, exe);
  fs.chmodSync(exe, 0o755);
  const port = freePort();
  const proc = Bun.spawn([...runner, exe, 'serve', '--port', String(port), '--host', '127.0.0.1'], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LOG_LEVEL: 'warn', ...env },
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const url = `http://127.0.0.1:${port}`;
  if ((await upOrExited(url, proc, startTimeoutMs)) === 'exited')
    throw new Error(`binary exited: ${await new Response(proc.stderr).text()}`);
  return {
    url,
    dir,
    proc,
    async stop() {
      proc.kill('SIGTERM');
      const code = await proc.exited;
      fs.rmSync(dir, { recursive: true, force: true });
      return code;
    },
  };
}
