import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dir, '..');

export interface BenchServer {
  url: string;
  dataDir: string;
  /** The server process, for its memory figures. */
  pid: number;
  /** Its standard error, when started with `stderr: 'pipe'`. */
  stderr: ReadableStream<Uint8Array> | null;
  stop(): Promise<void>;
}

/** Builds the executable users run (`npm run build`), so its memory and speed are what is measured. */
export function buildExecutable(): string {
  const build = Bun.spawnSync([process.execPath, 'run', 'build'], { cwd: ROOT, stdout: 'ignore', stderr: 'pipe' });
  if (build.exitCode !== 0) throw new Error(`npm run build failed: ${build.stderr.toString()}`);
  return path.join(ROOT, 'dist/coffer');
}

/** The executable a bench measures: dist/coffer, built first, or COFFER_BENCH_EXE (another build, to compare two). */
export const benchExecutable = (): string => process.env.COFFER_BENCH_EXE ?? buildExecutable();

/**
 * Flushes an executable and drops its pages from the page cache: a copy just written (a fresh build) maps about 4 MiB
 * more of itself at start than one read from disk (the seventh and fourteenth passes), which the idle RSS would count.
 */
export function dropFromPageCache(exe: string): void {
  Bun.spawnSync(['sync']);
  Bun.spawnSync(['dd', `if=${exe}`, 'iflag=nocache', 'count=0', 'status=none']);
}

/** Starts `command serve` on a random loopback port over `dataDir` and waits for /health (an exit or ~20 s without it throws). */
export async function spawnServer(
  command: string[],
  dataDir: string,
  env: Record<string, string>,
  stderr: 'inherit' | 'pipe' = 'inherit',
): Promise<{ url: string; port: number; proc: Bun.Subprocess<'ignore', 'ignore', 'inherit' | 'pipe'> }> {
  // Below Linux's ephemeral range (32768 on), so no client connection of a bench holds the port.
  const port = 30000 + Math.floor(Math.random() * 2700);
  const proc = Bun.spawn([...command, 'serve', '--port', String(port), '--host', '127.0.0.1', '--data-dir', dataDir], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...env },
    stdin: 'ignore',
    stdout: 'ignore',
    stderr,
  });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(`${url}/health`)).ok) return { url, port, proc };
    } catch {
      if (proc.exitCode !== null || i > 1000) throw new Error('the bench server did not start');
      await Bun.sleep(20);
    }
  }
}

/**
 * Runs `coffer serve` in its own process, on a temp data dir, as an admin would: from source, or with
 * `executable` the built dist/coffer (benchExecutable), whose CPU and memory are what users get.
 */
export async function startBenchServer(
  env: Record<string, string> = {},
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'coffer-bench-srv-')),
  opts: { keepDataDir?: boolean; executable?: boolean; stderr?: 'inherit' | 'pipe' } = {},
): Promise<BenchServer> {
  const command = opts.executable ? [benchExecutable()] : [process.execPath, path.join(ROOT, 'src/main.ts')];
  const { url, proc } = await spawnServer(command, dataDir, { LOG_LEVEL: 'info', ...env }, opts.stderr);
  return {
    url,
    dataDir,
    pid: proc.pid,
    stderr: proc.stderr instanceof ReadableStream ? proc.stderr : null,
    async stop() {
      proc.kill('SIGTERM');
      await proc.exited;
      if (!opts.keepDataDir) fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Signs up the first account and returns its token. */
export async function adminToken(url: string, email = 'bench@example.test', password = 'bench password'): Promise<string> {
  const res = await fetch(`${url}/api/signup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password, name: 'Bench' }),
  });
  if (!res.ok) throw new Error(`signup failed: ${res.status} ${await res.text()}`);
  return /token=([^;]+)/.exec(res.headers.get('set-cookie') ?? '')![1]!;
}

export interface WrkResult {
  requestsPerSec: number;
  p50: string;
  p99: string;
  non2xx: number;
  raw: string;
}

/** Runs wrk (Debian package `wrk`) with latency output and parses the figures. */
export function wrk(
  url: string,
  opts: { threads?: number; connections?: number; seconds?: number; headers?: Record<string, string> } = {},
): WrkResult {
  const args = ['wrk', `-t${opts.threads ?? 2}`, `-c${opts.connections ?? 4}`, `-d${opts.seconds ?? 10}s`, '--latency'];
  for (const [k, v] of Object.entries(opts.headers ?? {})) args.push('-H', `${k}: ${v}`);
  args.push(url);
  const r = Bun.spawnSync(args, { stdout: 'pipe', stderr: 'pipe' });
  if (r.exitCode !== 0) throw new Error(`wrk failed (is the Debian package 'wrk' installed?): ${r.stderr.toString()}`);
  const raw = r.stdout.toString();
  const num = (re: RegExp) => re.exec(raw)?.[1] ?? '?';
  return {
    requestsPerSec: Number(num(/Requests\/sec:\s+([\d.]+)/)),
    p50: num(/^\s+50%\s+(\S+)/m),
    p99: num(/^\s+99%\s+(\S+)/m),
    non2xx: Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(raw)?.[1] ?? 0),
    raw,
  };
}

/** Runs curl and reads its timing: seconds, bytes received, status and the body. */
export function curl(args: string[]): { seconds: number; bytes: number; status: number; body: string } {
  const out = Bun.spawnSync([...CURL_TIMED, ...args], {
    stdout: 'pipe',
    stderr: 'pipe',
  });
  return curlResult(out.stdout.toString());
}

/** The options curl runs with for `curlResult` to read its timing after the body. */
export const CURL_TIMED = ['curl', '-s', '-w', '\n%{time_total} %{size_download} %{http_code}'];

/** What curl run with CURL_TIMED printed: seconds, bytes received, status and the body. */
export function curlResult(text: string): { seconds: number; bytes: number; status: number; body: string } {
  const last = text.lastIndexOf('\n');
  const [seconds, bytes, status] = text
    .slice(last + 1)
    .trim()
    .split(' ')
    .map(Number);
  return { seconds: seconds!, bytes: bytes!, status: status!, body: text.slice(0, last) };
}

/** A 1 GiB file of random bytes (one random MiB repeated), flushed to disk, as the client's upload. */
export function writeRandomGiB(file: string): void {
  const handle = fs.openSync(file, 'w');
  const block = randomBytes(1024 ** 2);
  for (let i = 0; i < 1024; i++) fs.writeSync(handle, block);
  fs.fsyncSync(handle);
  fs.closeSync(handle);
}
