import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { seedItems } from './fixtures.ts';
import { flag } from './flags.ts';
import { adminToken, benchExecutable, CURL_TIMED, curlResult, dropFromPageCache, spawnServer, writeRandomGiB } from './server.ts';

const MiB = 1024 ** 2;
const ENV = { LOG_LEVEL: 'warn', COFFER_GENERAL_RATE_LIMIT: '1000000000', COFFER_UPLOAD_RATE_LIMIT: '1000000000' };
// The peers bench's phases (bench/peers.ts): 7 PROPFINDs of 10,000 items, 50 + 2,000 × 4 KiB from 8 clients, 3 big transfers.
const LISTED = 10_000;
const PROPFINDS = 7;
const SMALL_FILES = 2000;
const CLIENTS = 8;
const TRANSFERS = 3;
const f1 = (n: number) => n.toFixed(1);

/** Resident memory of `pid` in MiB: the peak so far (VmHWM), now, its anonymous and file-backed parts. */
function memory(pid: number): { hwm: number; rss: number; anon: number; file: number } {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string) => Number(new RegExp(`${name}:\\s+(\\d+) kB`).exec(status)![1]) / 1024;
  return { hwm: kb('VmHWM'), rss: kb('VmRSS'), anon: kb('RssAnon'), file: kb('RssFile') };
}

function cpuSeconds(pid: number): number {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** curl without blocking this process, so the server's memory is sampled while it runs. */
async function curl(args: string[]): Promise<ReturnType<typeof curlResult>> {
  const proc = Bun.spawn([...CURL_TIMED, ...args], { stdout: 'pipe' });
  const text = await new Response(proc.stdout).text();
  await proc.exited;
  return curlResult(text);
}

/** How one door moves files, on a server signed in to. */
interface Door {
  putSmall(i: number, content: Uint8Array): Promise<void>;
  putBig(file: string, run: number): Promise<{ seconds: number; ok: boolean }>;
  getBig(run: number): Promise<{ seconds: number; bytes: number }>;
  propfind?: () => Promise<void>;
}

async function openDoor(url: string, dataDir: string, door: 'api' | 'dav'): Promise<Door> {
  const token = await adminToken(url);
  const signIn = await fetch(`${url}/api/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'bench@example.test', password: 'bench password' }),
  });
  if (!signIn.ok) throw new Error(`sign-in failed: ${signIn.status}`);
  const cookie = { Cookie: `token=${token}` };
  if (door === 'api') {
    const uploaded: string[] = [];
    return {
      async putSmall(i, content) {
        const form = new FormData();
        form.append('file', new File([content], `small-${i}.bin`));
        const res = await fetch(`${url}/api/files/upload`, { method: 'POST', headers: cookie, body: form });
        if (res.status !== 200) throw new Error(`small upload: ${res.status}`);
        await res.arrayBuffer();
      },
      async putBig(file) {
        const r = await curl([
          '-H',
          `Cookie: token=${token}`,
          '-F',
          `file=@${file};type=application/octet-stream`,
          `${url}/api/files/upload`,
        ]);
        if (r.status === 200) uploaded.push((JSON.parse(r.body) as { id: string }).id);
        return { seconds: r.seconds, ok: r.status === 200 };
      },
      getBig: (run) => curl(['-H', `Cookie: token=${token}`, '-o', '/dev/null', `${url}/api/files/${uploaded[run]}/download`]),
    };
  }
  const post = async (p: string, body: unknown) => {
    const res = await fetch(`${url}${p}`, {
      method: 'POST',
      headers: { ...cookie, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`${p}: ${res.status}`);
    return (await res.json()) as Record<string, any>;
  };
  const profile = (await (await fetch(`${url}/api/profile`, { headers: cookie })).json()) as { id: string; email: string };
  const { password } = await post('/api/user/app-passwords', { name: 'bench' });
  const folder = await post('/api/files/folder', { name: 'Ten thousand' });
  seedItems(
    path.join(dataDir, 'coffer.db'),
    profile.id,
    (i) => ({ parentId: folder.id, name: `photo ${String(i).padStart(5, '0')}.jpg` }),
    LISTED,
  );
  const authorization = `Basic ${Buffer.from(`${profile.email}:${password}`).toString('base64')}`;
  return {
    async putSmall(i, content) {
      const res = await fetch(`${url}/dav/small-${i}.bin`, { method: 'PUT', headers: { authorization }, body: content });
      if (res.status !== 201 && res.status !== 204) throw new Error(`PUT ${res.status}`);
      await res.arrayBuffer();
    },
    async putBig(file, run) {
      const r = await curl(['-H', `authorization: ${authorization}`, '-T', file, `${url}/dav/big-${run}.bin`]);
      return { seconds: r.seconds, ok: r.status === 201 || r.status === 204 };
    },
    getBig: (run) => curl(['-H', `authorization: ${authorization}`, '-o', '/dev/null', `${url}/dav/big-${run}.bin`]),
    async propfind() {
      const res = await fetch(`${url}/dav/Ten%20thousand/`, { method: 'PROPFIND', headers: { authorization, depth: '1' } });
      await res.arrayBuffer();
      if (res.status !== 207) throw new Error(`PROPFIND ${res.status}`);
    },
  };
}

/** One server of `exe` through `door`, the peers bench's phases in order: a line per phase. */
async function run(label: string, exe: string, door: 'api' | 'dav', bigFile: string, bigBytes: number): Promise<number> {
  dropFromPageCache(exe);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'coffer-bench-peak-'));
  const { url, proc } = await spawnServer([exe], dataDir, ENV);
  const pid = proc.pid;
  let sampling: { anon: number; rss: number } | null = null;
  const sampler = setInterval(() => {
    if (!sampling) return;
    const m = memory(pid);
    sampling.anon = Math.max(sampling.anon, m.anon);
    sampling.rss = Math.max(sampling.rss, m.rss);
  }, 20);
  const line = (phase: string, extra: string) => {
    const m = memory(pid);
    console.log(
      `peak.${door} ${label} ${phase}: VmHWM ${f1(m.hwm)} RSS ${f1(m.rss)} (anonymous ${f1(m.anon)}, file ${f1(m.file)}) ${extra}`,
    );
  };
  try {
    const target = await openDoor(url, dataDir, door);
    await Bun.sleep(1000);
    line('idle', '');
    if (target.propfind) {
      const cpu = cpuSeconds(pid);
      for (let i = 0; i < PROPFINDS; i++) await target.propfind();
      line('PROPFINDs', `CPU ${f1(((cpuSeconds(pid) - cpu) * 1000) / PROPFINDS)} ms each`);
    }
    const content = randomBytes(4096);
    for (let i = 0; i < 50; i++) await target.putSmall(SMALL_FILES + i, content);
    let next = 0;
    const cpu = cpuSeconds(pid);
    const t = performance.now();
    sampling = { anon: 0, rss: 0 };
    await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        while (next < SMALL_FILES) await target.putSmall(next++, content);
      }),
    );
    const most = sampling;
    sampling = null;
    line(
      '4 KiB files',
      `${f1(SMALL_FILES / ((performance.now() - t) / 1000))}/s, CPU ${(((cpuSeconds(pid) - cpu) * 1000) / SMALL_FILES).toFixed(2)} ms each, anonymous at most ${f1(most.anon)}`,
    );
    const transfer = async (name: string, move: () => Promise<{ seconds: number }>) => {
      const start = memory(pid);
      const before = cpuSeconds(pid);
      sampling = { anon: start.anon, rss: start.rss };
      const { seconds } = await move();
      const most = sampling;
      sampling = null;
      const gib = bigBytes / 1024 ** 3;
      line(
        name,
        `anonymous ${f1(start.anon)} at its start, at most ${f1(most.anon)} (+${f1(most.anon - start.anon)}); ${f1(bigBytes / MiB / seconds)} MiB/s, CPU ${((cpuSeconds(pid) - before) / gib).toFixed(2)} s/GiB`,
      );
    };
    for (let i = 0; i < TRANSFERS; i++) {
      Bun.spawnSync(['sync']);
      await transfer(`upload ${i + 1}`, async () => {
        const up = await target.putBig(bigFile, i);
        if (!up.ok) throw new Error('the big upload failed');
        return up;
      });
      Bun.spawnSync(['sync']);
      await transfer(`download ${i + 1}`, async () => {
        const down = await target.getBig(i);
        if (down.bytes !== bigBytes) throw new Error(`the download sent ${down.bytes} bytes`);
        return down;
      });
    }
    const peak = memory(pid).hwm;
    console.log(
      `peak.${door} ${label}: peak ${f1(peak)} MiB (load average ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')})`,
    );
    return peak;
  } finally {
    clearInterval(sampler);
    proc.kill('SIGTERM');
    await proc.exited;
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

/**
 * `npm run bench -- peak [--pairs N] [--mib N] [--door api|dav]`: the peers bench's phases against Coffer's
 * WebDAV door (or its API), one fresh server each, printing the peak (VmHWM), RSS and its anonymous part after
 * each phase, and for each big transfer the anonymous memory at its start and at most during it (sampled every
 * 20 ms), its MiB/s and CPU per GiB. COFFER_BENCH_BEFORE_EXE alternates a second build with it, the order
 * swapped each pair (A B, B A, ...).
 */
export async function runPeakBench(): Promise<void> {
  const pairs = flag('pairs', 1);
  const bigBytes = flag('mib', 1024) * MiB;
  const door = process.argv.includes('--door') && process.argv[process.argv.indexOf('--door') + 1] === 'api' ? 'api' : 'dav';
  const exe = benchExecutable();
  const before = process.env.COFFER_BENCH_BEFORE_EXE;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'coffer-bench-peak-'));
  try {
    const bigFile = path.join(dir, 'big.bin');
    if (bigBytes === 1024 ** 3) writeRandomGiB(bigFile);
    else fs.writeFileSync(bigFile, randomBytes(bigBytes));
    const peaks: Record<string, number[]> = { before: [], after: [] };
    for (let pair = 0; pair < pairs; pair++) {
      const order: Array<['before' | 'after', string]> = before
        ? [
            ['after', exe],
            ['before', before],
          ]
        : [['after', exe]];
      if (pair % 2 === 1) order.reverse();
      for (const [label, which] of order) peaks[label]!.push(await run(label, which, door, bigFile, bigBytes));
    }
    for (const [label, xs] of Object.entries(peaks))
      if (xs.length) console.log(`peak.${door} ${label}: peaks ${xs.map(f1).join(', ')} MiB`);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.main) await runPeakBench();
