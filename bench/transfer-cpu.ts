import fs from 'node:fs';
import path from 'node:path';

const GiB = 1024 ** 3;

/** A process's CPU seconds so far, user and system apart (Linux: /proc/<pid>/stat, 100 ticks a second). */
export interface CpuTimes {
  user: number;
  system: number;
}

function statCpu(file: string): CpuTimes {
  const fields = fs.readFileSync(file, 'utf8').split(') ')[1]!.split(' ');
  return { user: Number(fields[11]) / 100, system: Number(fields[12]) / 100 };
}

export function cpuTimes(pid: number | 'self'): CpuTimes {
  return statCpu(`/proc/${pid}/stat`);
}

/**
 * The CPU seconds so far of a Bun server's JavaScript thread (its first): apart from the runtime's I/O threads,
 * whose system time copying an upload into the page cache moves 0.4-2 s per GiB with the machine, not the server.
 */
export function jsThreadTimes(pid: number): CpuTimes {
  return statCpu(`/proc/${pid}/task/${pid}/stat`);
}

/** CPU seconds per GiB moved since `before` (`now`: the process's times, or another reading such as jsThreadTimes). */
export function cpuPerGiB(pid: number | 'self', before: CpuTimes, bytes: number, now = cpuTimes(pid)): CpuTimes {
  return { user: ((now.user - before.user) * GiB) / bytes, system: ((now.system - before.system) * GiB) / bytes };
}

export const totalCpu = (c: CpuTimes) => c.user + c.system;

/** Median of each part apart and of the total: `total 0.71 s/GiB (user 0.42 + system 0.29)`. */
export function cpuLine(runs: CpuTimes[]): string {
  const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const list = runs.map((r) => totalCpu(r).toFixed(2)).join(', ');
  return `${med(runs.map(totalCpu)).toFixed(2)} s/GiB (user ${med(runs.map((r) => r.user)).toFixed(2)} + system ${med(runs.map((r) => r.system)).toFixed(2)}; runs ${list})`;
}

export const medianCpu = (runs: CpuTimes[]) => [...runs.map(totalCpu)].sort((a, b) => a - b)[Math.floor(runs.length / 2)]!;

/**
 * Before each timed upload: earlier uploads' dirty pages written out and, as root and unless `keepCache`,
 * the page cache dropped, so no run pays for the one before it (on this VM a run that follows another without
 * it was 30-60% slower, whichever kind it was). Returns whether the cache was dropped.
 */
export function settleDisk(keepCache = false): boolean {
  Bun.spawnSync(['sync']);
  if (keepCache) return false;
  try {
    fs.writeFileSync('/proc/sys/vm/drop_caches', '3');
    return true;
  } catch {
    return false;
  }
}

/** Peak RSS (VmHWM) of a process in MiB, and its reset to the current RSS so a peak is one phase's own. */
export function peakRssMiB(pid: number): number {
  return Number(/VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;
}

export function resetPeakRss(pid: number): void {
  fs.writeFileSync(`/proc/${pid}/clear_refs`, '5');
}

/** Runs `bench/bare-sealed.ts` (the encrypted bare reference) in its own Bun process storing at `file`. */
export async function startBareSealed(file: string): Promise<{ url: string; pid: number; stop(): Promise<void> }> {
  const proc = Bun.spawn([process.execPath, path.join(import.meta.dir, 'bare-sealed.ts'), file], { stdout: 'pipe', stderr: 'inherit' });
  const reader = proc.stdout.getReader();
  let text = '';
  while (!text.includes('\n')) {
    const { value, done } = await reader.read();
    if (done) throw new Error('bare reference exited before listening');
    text += new TextDecoder().decode(value);
  }
  reader.releaseLock();
  return {
    url: `http://127.0.0.1:${Number(text.trim())}/`,
    pid: proc.pid,
    async stop() {
      proc.kill('SIGTERM');
      await proc.exited;
      fs.rmSync(file, { force: true });
    },
  };
}
