import path from 'node:path';

export const MAIN = path.resolve(import.meta.dir, '../../src/main.ts');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `coffer <args>` from source as its own process, as an admin would at a shell. */
export async function runCli(
  args: string[],
  opts: { stdin?: string; env?: Record<string, string>; timeoutMs?: number } = {},
): Promise<CliResult> {
  const proc = Bun.spawn([process.execPath, MAIN, ...args], {
    env: { PATH: process.env.PATH!, LOG_LEVEL: 'silent', ...opts.env },
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
