import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { benchExecutable, spawnServer } from './server.ts';

export interface LiveServer {
  url: string;
  port: number;
  dataDir: string;
  pid: number;
  /** The process's exit, so a bench can tell a crash from a slow answer. */
  exited: Promise<number>;
  stop(): Promise<void>;
}

/**
 * Starts the built executable (benchExecutable: `dist/coffer`, or `COFFER_BENCH_EXE`), under `prlimit` when it needs more descriptors than this shell allows.
 */
export async function startLiveServer(env: Record<string, string>, opts: { nofile?: number } = {}): Promise<LiveServer> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'coffer-bench-live-'));
  // prlimit sets the limit and execs the server in the same process, so the pid stays the server's.
  const limit = opts.nofile && opts.nofile > descriptorLimit().soft ? ['prlimit', `--nofile=${opts.nofile}:${opts.nofile}`] : [];
  const { url, port, proc } = await spawnServer([...limit, benchExecutable()], dataDir, { LOG_LEVEL: 'warn', ...env });
  return {
    url,
    port,
    dataDir,
    pid: proc.pid,
    exited: proc.exited,
    async stop() {
      proc.kill('SIGTERM');
      await proc.exited;
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** This process's descriptor limit (what a child inherits). */
export function descriptorLimit(): { soft: number; hard: number } {
  const line = /Max open files\s+(\d+)\s+(\d+)/.exec(fs.readFileSync('/proc/self/limits', 'utf8'))!;
  return { soft: Number(line[1]), hard: Number(line[2]) };
}

/** Whether a child may be given `n` descriptors: within the hard limit, or raising it is permitted (CAP_SYS_RESOURCE). */
export function canRaiseDescriptors(n: number): boolean {
  return n <= descriptorLimit().hard || Bun.spawnSync(['prlimit', `--nofile=${n}:${n}`, 'true'], { stderr: 'ignore' }).exitCode === 0;
}

/** The process's resident memory now and its peak, in MiB. */
export function rssMiB(pid: number): { rss: number; peak: number } {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(status)![1]);
  return { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 };
}

/** The process's CPU seconds so far, user and system apart. */
export function cpuSeconds(pid: number): { user: number; system: number } {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  const tick = 100;
  return { user: Number(fields[11]) / tick, system: Number(fields[12]) / tick };
}

export const openDescriptors = (pid: number): number => fs.readdirSync(`/proc/${pid}/fd`).length;

/** The value at quantile q (0..1) of unsorted samples. */
export function quantile(xs: number[], q: number): number {
  if (xs.length === 0) return Number.NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(s.length * q))]!;
}
