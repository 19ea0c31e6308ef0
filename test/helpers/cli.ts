import path from 'node:path';

export const MAIN = path.resolve(import.meta.dir, '../../src/main.ts');

/** `coffer` as the test runner built it for the suite (COFFER_TEST_EXECUTABLE: scripts/run-tests.ts), else from source. */
const COFFER = process.env.COFFER_TEST_EXECUTABLE ? [process.env.COFFER_TEST_EXECUTABLE] : [process.execPath, MAIN];

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a command under a uid and gid (setpriv), as that user would at a shell. */
const asUserPrefix = (uid?: number) => (uid === undefined ? [] : ['setpriv', `--reuid=${uid}`, `--regid=${uid}`, '--clear-groups', '--']);

/** Runs `coffer <args>` as its own process, as an admin would at a shell (`asUser`: as that uid). */
export async function runCli(
  args: string[],
  opts: { stdin?: string; env?: Record<string, string>; timeoutMs?: number; asUser?: number; cwd?: string } = {},
): Promise<CliResult> {
  const proc = Bun.spawn([...asUserPrefix(opts.asUser), ...COFFER, ...args], {
    cwd: opts.cwd,
    // An empty configuration file: a coffer.env installed on this machine must not reach the tests.
    env: { PATH: process.env.PATH!, LOG_LEVEL: 'silent', COFFER_CONFIG: '/dev/null', ...opts.env },
    stdin: opts.stdin === undefined ? 'ignore' : new TextEncoder().encode(opts.stdin),
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const timer = setTimeout(() => proc.kill('SIGKILL'), opts.timeoutMs ?? 30_000);
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  clearTimeout(timer);
  return { code, stdout, stderr };
}

export function parseJson<T = any>(r: CliResult): T {
  try {
    return JSON.parse(r.stdout) as T;
  } catch {
    throw new Error(`expected JSON on stdout (exit ${r.code}); stdout: ${r.stdout.slice(0, 300)} stderr: ${r.stderr.slice(0, 300)}`);
  }
}

export interface ServingCli {
  proc: Bun.Subprocess<'ignore', 'pipe', 'pipe'>;
  url: string;
  /** SIGTERM, then the exit code. */
  stop(): Promise<number>;
}

/**
 * `coffer serve <args>` from source as its own process, resolved once it logs that it listens.
 * `asUser` runs it under that uid and gid (setpriv), as a service user would; `preload` is run before it (`bun --preload`).
 */
export async function serveCli(
  args: string[],
  opts: { env?: Record<string, string>; asUser?: number; preload?: string } = {},
): Promise<ServingCli> {
  const preload = opts.preload ? ['--preload', opts.preload] : [];
  const proc = Bun.spawn([...asUserPrefix(opts.asUser), process.execPath, ...preload, MAIN, 'serve', ...args], {
    env: { PATH: process.env.PATH!, COFFER_CONFIG: '/dev/null', LOG_LEVEL: 'info', ...opts.env },
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const reader = proc.stdout.getReader();
  let out = '';
  while (!out.includes('"msg":"listening"')) {
    const { done, value } = await reader.read();
    if (done) throw new Error(`coffer serve exited: ${await new Response(proc.stderr).text()}`);
    out += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  return {
    proc,
    url: /"url":"([^"]+)"/.exec(out)![1]!,
    stop() {
      proc.kill('SIGTERM');
      return proc.exited;
    },
  };
}
