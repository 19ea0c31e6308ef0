import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { spreadTempDir } from './fixtures.ts';
import { adminToken, spawnServer } from './server.ts';
import { median } from './streams.ts';
import { cpuTimes, totalCpu } from './transfer-cpu.ts';

const ROOT = path.resolve(import.meta.dir, '..');
const KiB = 1024;

interface Side {
  name: string;
  url: string;
  pid: number;
  token: string;
  stop(): Promise<void>;
}

/**
 * The comparison's base: main's HEAD (or COFFER_BENCH_BASE, a commit of /work/main's repository) checked out
 * in a temp clone sharing this tree's node_modules, run from source as this branch is.
 */
function baseCheckout(): { dir: string; commit: string } {
  const repo = process.env.COFFER_BENCH_BASE_REPO ?? '/work/main';
  const commit = Bun.spawnSync(['git', '-C', repo, 'rev-parse', process.env.COFFER_BENCH_BASE ?? 'HEAD'])
    .stdout.toString()
    .trim();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'coffer-bench-base-'));
  const clone = Bun.spawnSync(['git', 'clone', '--quiet', '--shared', '--no-checkout', repo, dir], { stderr: 'pipe' });
  if (clone.exitCode !== 0) throw new Error(`git clone failed: ${clone.stderr.toString()}`);
  Bun.spawnSync(['git', '-C', dir, 'checkout', '--quiet', commit]);
  fs.symlinkSync(fs.realpathSync(path.join(ROOT, 'node_modules')), path.join(dir, 'node_modules'));
  return { dir, commit };
}

async function start(name: string, checkout: string): Promise<Side> {
  const dataDir = spreadTempDir(`coffer-bench-changes-${name}-`);
  const { url, proc } = await spawnServer([process.execPath, path.join(checkout, 'src/main.ts')], dataDir, {
    LOG_LEVEL: 'warn',
  });
  return {
    name,
    url,
    pid: proc.pid,
    token: await adminToken(url),
    async stop() {
      proc.kill('SIGTERM');
      await proc.exited;
      fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** `count` uploads of one 4 KiB file each, `clients` at a time: uploads per second and server CPU seconds per upload. */
async function round(side: Side, count: number, clients: number, body: Uint8Array): Promise<{ rate: number; cpu: number }> {
  let next = 0;
  const client = async () => {
    while (next < count) {
      const i = next++;
      const form = new FormData();
      form.append('file', new File([body], `f${i}-${randomBytes(4).toString('hex')}.bin`));
      const res = await fetch(`${side.url}/api/files/upload`, { method: 'POST', headers: { cookie: `token=${side.token}` }, body: form });
      if (res.status !== 200) throw new Error(`${side.name} upload: ${res.status} ${await res.text()}`);
      await res.arrayBuffer();
    }
  };
  const cpu0 = totalCpu(cpuTimes(side.pid));
  const t0 = performance.now();
  await Promise.all(Array.from({ length: clients }, client));
  const seconds = (performance.now() - t0) / 1000;
  return { rate: count / seconds, cpu: (totalCpu(cpuTimes(side.pid)) - cpu0) / count };
}

/**
 * The change log's cost on the small-file upload path: 4 KiB uploads per second and the server's CPU
 * seconds per upload, this tree against main (run from source alike), rounds alternating which goes first.
 */
export async function runChangeLogBench(rounds = 8, perRound = 300, clients = 4): Promise<void> {
  const base = baseCheckout();
  const sides = [await start('main', base.dir), await start('changelog', ROOT)];
  const body = randomBytes(4 * KiB);
  const figures = new Map(sides.map((s) => [s.name, { rate: [] as number[], cpu: [] as number[] }]));
  try {
    // Warm-up: the first requests of each pay for compilation.
    for (const side of sides) await round(side, 50, clients, body);
    for (let r = 0; r < rounds; r++) {
      for (const side of r % 2 === 0 ? sides : [...sides].reverse()) {
        const f = await round(side, perRound, clients, body);
        figures.get(side.name)!.rate.push(f.rate);
        figures.get(side.name)!.cpu.push(f.cpu);
      }
    }
    const [off, on] = sides.map((s) => figures.get(s.name)!);
    const rateOff = median(off!.rate);
    const rateOn = median(on!.rate);
    const cpuOff = median(off!.cpu);
    const cpuOn = median(on!.cpu);
    const [load1] = os.loadavg();
    console.log(
      `change-log.uploads_per_s_4KiB with ${rateOn.toFixed(0)} without ${rateOff.toFixed(0)} cost ${(((rateOff - rateOn) / rateOff) * 100).toFixed(1)}% ` +
        `cpu_ms_per_upload with ${(cpuOn * 1000).toFixed(2)} without ${(cpuOff * 1000).toFixed(2)} cost ${(((cpuOn - cpuOff) / cpuOff) * 100).toFixed(1)}% ` +
        `(median of ${rounds} alternating rounds x ${perRound} uploads, ${clients} clients; without = main ${base.commit.slice(0, 10)} from source; ` +
        `rates with ${on!.rate.map((x) => x.toFixed(0)).join(',')} without ${off!.rate.map((x) => x.toFixed(0)).join(',')}; load ${load1!.toFixed(1)} on ${os.cpus().length} cores)`,
    );
  } finally {
    for (const side of sides) await side.stop();
    fs.rmSync(base.dir, { recursive: true, force: true });
  }
}

if (import.meta.main) await runChangeLogBench();
