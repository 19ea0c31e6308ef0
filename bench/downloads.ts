import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { adminToken, benchExecutable, curl, spawnServer } from './server.ts';
import { compileBench } from './compile.ts';
import { cpuPerGiB, cpuTimes, totalCpu, type CpuTimes } from './transfer-cpu.ts';
import { flag } from './flags.ts';

const MiB = 1024 ** 2;
const ENV = { LOG_LEVEL: 'warn', COFFER_GENERAL_RATE_LIMIT: '1000000000', COFFER_UPLOAD_RATE_LIMIT: '1000000000' };

export interface Server {
  name: string;
  pid: number;
  /** One download of the whole file: curl's seconds and bytes. */
  get(): { seconds: number; bytes: number };
  stop(): Promise<void>;
}

/** `bench/bare-download.ts` compiled as Coffer is, serving a sealed object of `mib` MiB. */
export async function startBare(dir: string, mib: number): Promise<Server> {
  const exe = compileBench('bare-download.ts', dir);
  const data = fs.mkdtempSync(path.join(dir, 'bare-download-'));
  const { url, proc } = await spawnServer([exe, '--mib', String(mib)], data, {});
  return {
    name: 'bare Bun (read, open, direct stream)',
    pid: proc.pid,
    get: () => curl(['-o', '/dev/null', `${url}/object`]),
    async stop() {
      proc.kill('SIGTERM');
      await proc.exited;
    },
  };
}

/** Coffer (`exe`) on a fresh data directory holding one uploaded file of `file`'s bytes, downloaded by id. */
async function startCoffer(name: string, exe: string, dir: string, file: string): Promise<Server> {
  const root = fs.mkdtempSync(path.join(dir, 'coffer-'));
  const { url, proc } = await spawnServer([exe], root, ENV);
  const token = await adminToken(url);
  const up = curl(['-H', `Cookie: token=${token}`, '-F', `file=@${file};type=application/octet-stream`, `${url}/api/files/upload`]);
  if (up.status !== 200) throw new Error(`${name}: upload ${up.status} ${up.body}`);
  const { id } = JSON.parse(up.body) as { id: string };
  return {
    name,
    pid: proc.pid,
    get: () => curl(['-H', `Cookie: token=${token}`, '-o', '/dev/null', `${url}/api/files/${id}/download`]),
    async stop() {
      proc.kill('SIGTERM');
      await proc.exited;
    },
  };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/**
 * `npm run bench -- downloads [--mib N] [--rounds N]`: the server CPU per GiB of a whole-file download from
 * the built executable against the runtime's floor for the same work (`bench/bare-download.ts`: read the
 * sealed segments, open them, stream the plaintext), the servers taking turns in each round so the load
 * weighs on each alike. With COFFER_BENCH_BEFORE_EXE=<path> a second build takes its turn too (before →
 * after).
 */
export async function runDownloadsBench(): Promise<void> {
  const mib = flag('mib', 256);
  const rounds = flag('rounds', 7);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'coffer-bench-downloads-'));
  const servers: Server[] = [];
  try {
    const file = path.join(dir, 'plain.bin');
    const fd = fs.openSync(file, 'w');
    const block = crypto.getRandomValues(new Uint8Array(MiB));
    for (let i = 0; i < mib; i++) fs.writeSync(fd, block);
    fs.closeSync(fd);
    servers.push(await startBare(dir, mib));
    if (process.env.COFFER_BENCH_BEFORE_EXE)
      servers.push(await startCoffer('Coffer before', process.env.COFFER_BENCH_BEFORE_EXE, dir, file));
    servers.push(await startCoffer(process.env.COFFER_BENCH_BEFORE_EXE ? 'Coffer after' : 'Coffer', benchExecutable(), dir, file));
    const cpu = new Map<Server, CpuTimes[]>(servers.map((s) => [s, []]));
    const rate = new Map<Server, number[]>(servers.map((s) => [s, []]));
    // One download each first: the page cache holds every object and each server has compiled its path.
    for (const s of servers) s.get();
    for (let r = 0; r < rounds; r++) {
      for (const s of servers) {
        const before = cpuTimes(s.pid);
        const got = s.get();
        if (got.bytes !== mib * MiB) throw new Error(`${s.name} sent ${got.bytes} bytes, not ${mib * MiB}`);
        cpu.get(s)!.push(cpuPerGiB(s.pid, before, got.bytes));
        rate.get(s)!.push(got.bytes / MiB / got.seconds);
      }
    }
    const floor = median(cpu.get(servers[0]!)!.map(totalCpu));
    const load = fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
    console.log(`downloads of ${mib} MiB, ${rounds} rounds, load average ${load}; CPU s/GiB median (user + system; runs):`);
    for (const s of servers) {
      const runs = cpu.get(s)!;
      const total = median(runs.map(totalCpu));
      console.log(
        `downloads.${s.name}: ${total.toFixed(2)} s/GiB (user ${median(runs.map((c) => c.user)).toFixed(2)} + system ${median(runs.map((c) => c.system)).toFixed(2)}; runs ${runs.map((c) => totalCpu(c).toFixed(2)).join(', ')}) ${median(rate.get(s)!).toFixed(0)} MiB/s, ${(total / floor).toFixed(2)}x the bare floor`,
      );
    }
  } finally {
    for (const s of servers) await s.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
