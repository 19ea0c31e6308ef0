import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { seedItems } from './fixtures.ts';
import { AS_COFFER, compileBench } from './compile.ts';
import { cpuSeconds, rssMiB } from './live-server.ts';
import { adminToken, benchExecutable, dropFromPageCache, spawnServer } from './server.ts';

const ENV = { LOG_LEVEL: 'warn', COFFER_GENERAL_RATE_LIMIT: '1000000000', COFFER_UPLOAD_RATE_LIMIT: '1000000000' };
const LISTED = 10_000;
const PROPFINDS = 30;
// The peers bench's small-file phase: 2,000 files of 4 KiB from 8 clients.
const SMALL_FILES = 2000;
const CLIENTS = 8;

const fmt = (n: number) => n.toFixed(1);
const range = (xs: number[]) => `${fmt(Math.min(...xs))}–${fmt(Math.max(...xs))}`;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Where a process's resident memory is, in MiB, from /proc/<pid>/smaps: its executable's pages apart from the rest. */
interface Breakdown {
  code: number;
  data: number;
  anonymous: number;
  other: number;
  rss: number;
}

function breakdown(pid: number): Breakdown {
  const exe = fs.readlinkSync(`/proc/${pid}/exe`);
  const b: Breakdown = { code: 0, data: 0, anonymous: 0, other: 0, rss: 0 };
  let into: keyof Breakdown = 'other';
  for (const line of fs.readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const header = /^[0-9a-f]+-[0-9a-f]+ (\S{4}) \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (header) {
      const [, perms, file] = header;
      if (file === exe) into = perms!.includes('x') ? 'code' : 'data';
      else into = !file || file.startsWith('[heap') || file.startsWith('[anon') ? 'anonymous' : 'other';
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss) {
      b[into] += Number(rss[1]) / 1024;
      b.rss += Number(rss[1]) / 1024;
    }
  }
  return b;
}

/**
 * The floors Coffer's idle RSS is read against, compiled as Coffer is (bench/bare-durable.ts: the runtime and a
 * server; bench/bare-stack.ts: Coffer's libraries and schema at start, none of its code).
 */
function compileBares(dir: string): Array<[string, string]> {
  return (['bare-durable', 'bare-stack'] as const).map((name) => [
    name === 'bare-durable' ? 'bare Bun' : 'bare stack',
    compileBench(`${name}.ts`, dir, AS_COFFER),
  ]);
}

/** A bare server's RSS one second after start and one request (its /health), and where it is. */
async function bareIdle(exe: string): Promise<Breakdown> {
  dropFromPageCache(exe);
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'coffer-bench-memory-bare-'));
  const { proc } = await spawnServer([exe], root, {});
  try {
    await Bun.sleep(1000);
    return breakdown(proc.pid);
  } finally {
    proc.kill('SIGTERM');
    await proc.exited;
    fs.rmSync(root, { recursive: true, force: true });
  }
}

/** A server of `exe` on a fresh data directory, signed up to once; stopped and removed by `stop`. */
async function started(exe: string) {
  dropFromPageCache(exe);
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'coffer-bench-memory-'));
  const { url, proc } = await spawnServer([exe], root, ENV);
  const token = await adminToken(url);
  return {
    url,
    root,
    pid: proc.pid,
    cookie: { Cookie: `token=${token}` },
    async stop() {
      proc.kill('SIGTERM');
      await proc.exited;
      fs.rmSync(root, { recursive: true, force: true });
    },
  };
}

const signIn = (url: string) =>
  fetch(`${url}/api/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'bench@example.test', password: 'bench password' }),
  }).then((r) => {
    if (!r.ok) throw new Error(`sign-in failed: ${r.status}`);
  });

/** RSS one second after start, sign-up and one sign-in (as the peers bench reads it), and the peak so far. */
async function idle(exe: string): Promise<{ rss: number; peak: number; where: Breakdown }> {
  const s = await started(exe);
  try {
    await signIn(s.url);
    await Bun.sleep(1000);
    return { ...rssMiB(s.pid), where: breakdown(s.pid) };
  } finally {
    await s.stop();
  }
}

/** The peak while four sign-ins arrive at once (each an argon2id hash of 19 MiB), and how long all four took. */
async function signInBurst(exe: string): Promise<{ peak: number; ms: number }> {
  const s = await started(exe);
  try {
    await Bun.sleep(500);
    const t0 = performance.now();
    await Promise.all(Array.from({ length: 4 }, () => signIn(s.url)));
    return { peak: rssMiB(s.pid).peak, ms: performance.now() - t0 };
  } finally {
    await s.stop();
  }
}

/** PROPFIND Depth 1 of a 10,000-item folder PROPFINDS times: the peak after them and the server's CPU per PROPFIND. */
async function propfinds(exe: string): Promise<{ peak: number; cpuMs: number }> {
  const s = await started(exe);
  try {
    const post = async (p: string, body: unknown) => {
      const res = await fetch(`${s.url}${p}`, {
        method: 'POST',
        headers: { ...s.cookie, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      if (!res.ok) throw new Error(`${p}: ${res.status}`);
      return (await res.json()) as Record<string, string>;
    };
    const profile = (await (await fetch(`${s.url}/api/profile`, { headers: s.cookie })).json()) as { id: string; email: string };
    const { password } = await post('/api/user/app-passwords', { name: 'bench' });
    const folder = await post('/api/files/folder', { name: 'Ten thousand' });
    seedItems(
      path.join(s.root, 'coffer.db'),
      profile.id,
      (i) => ({ parentId: folder.id!, name: `photo ${String(i).padStart(5, '0')}.jpg` }),
      LISTED,
    );
    const headers = { authorization: `Basic ${Buffer.from(`${profile.email}:${password}`).toString('base64')}`, depth: '1' };
    const before = cpuSeconds(s.pid);
    for (let i = 0; i < PROPFINDS; i++) {
      const res = await fetch(`${s.url}/dav/Ten%20thousand/`, { method: 'PROPFIND', headers });
      const text = await res.text();
      if (res.status !== 207 || text.split('<D:response>').length !== LISTED + 2) throw new Error(`PROPFIND answered ${res.status}`);
    }
    const after = cpuSeconds(s.pid);
    return { peak: rssMiB(s.pid).peak, cpuMs: ((after.user + after.system - before.user - before.system) * 1000) / PROPFINDS };
  } finally {
    await s.stop();
  }
}

/** SMALL_FILES uploads of 4 KiB from CLIENTS clients: the peak after them and the server's CPU per upload. */
async function smallUploads(exe: string): Promise<{ peak: number; cpuMs: number }> {
  const s = await started(exe);
  try {
    const content = randomBytes(4096);
    let next = 0;
    const before = cpuSeconds(s.pid);
    await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        while (next < SMALL_FILES) {
          const form = new FormData();
          form.append('file', new File([content], `small-${next++}.bin`));
          const res = await fetch(`${s.url}/api/files/upload`, { method: 'POST', headers: s.cookie, body: form });
          if (res.status !== 200) throw new Error(`upload answered ${res.status}`);
          await res.arrayBuffer();
        }
      }),
    );
    const after = cpuSeconds(s.pid);
    return { peak: rssMiB(s.pid).peak, cpuMs: ((after.user + after.system - before.user - before.system) * 1000) / SMALL_FILES };
  } finally {
    await s.stop();
  }
}

/**
 * `npm run bench -- memory`: the built executable's idle RSS (three starts) beside the compiled bare Bun server's
 * and the bare stack's, each split by where it is; its peak over four sign-ins at once, over 2,000 uploads of
 * 4 KiB (twice) and over 30 PROPFINDs of 10,000 items. With COFFER_BENCH_BEFORE_EXE=<path> the two executables alternate, so a change is
 * measured before → after in one run on a loaded machine.
 */
export async function runMemoryBench(): Promise<void> {
  const exes: Array<[string, string]> = [['after', benchExecutable()]];
  if (process.env.COFFER_BENCH_BEFORE_EXE) exes.unshift(['before', process.env.COFFER_BENCH_BEFORE_EXE]);
  const bareDir = fs.mkdtempSync(path.join(os.tmpdir(), 'coffer-bench-bare-'));
  const bares = compileBares(bareDir);
  const idles = new Map<string, { rss: number; peak: number; where: Breakdown }[]>(exes.map(([n]) => [n, []]));
  const bareIdles = new Map<string, Breakdown[]>(bares.map(([n]) => [n, []]));
  const bursts = new Map<string, { peak: number; ms: number }[]>(exes.map(([n]) => [n, []]));
  const load = os.loadavg()[0]!.toFixed(1);
  for (let run = 0; run < 3; run++) {
    for (const [name, exe] of bares) bareIdles.get(name)!.push(await bareIdle(exe));
    for (const [name, exe] of exes) {
      idles.get(name)!.push(await idle(exe));
      bursts.get(name)!.push(await signInBurst(exe));
    }
  }
  fs.rmSync(bareDir, { recursive: true, force: true });
  const columns: Array<[string, Breakdown[]]> = [
    ...bares.map(([n]): [string, Breakdown[]] => [n, bareIdles.get(n)!]),
    ...exes.map(([n]): [string, Breakdown[]] => [`Coffer ${n}`, idles.get(n)!.map((i) => i.where)]),
  ];
  const rows: Array<[string, keyof Breakdown]> = [
    ["the runtime's code (pages of the executable touched)", 'code'],
    ["the executable's data and embedded bytecode", 'data'],
    ["anonymous (the JavaScript heap, the allocator's)", 'anonymous'],
    ['shared libraries and the rest', 'other'],
    ['total RSS', 'rss'],
  ];
  console.log('memory.idle_where (MiB, median of 3 starts; Coffer after sign-up and one sign-in, the bare servers after one request):');
  console.log(`| | ${columns.map(([n]) => n).join(' | ')} |`);
  console.log(`|---|${columns.map(() => '---|').join('')}`);
  for (const [label, key] of rows) console.log(`| ${label} | ${columns.map(([, bs]) => fmt(median(bs.map((b) => b[key])))).join(' | ')} |`);
  const floor = median(bareIdles.get('bare Bun')!.map((b) => b.rss));
  const stack = median(bareIdles.get('bare stack')!.map((b) => b.rss));
  for (const [name] of exes) {
    const coffer = median(idles.get(name)!.map((i) => i.rss));
    console.log(
      `memory.idle_ratio ${name}: Coffer ${fmt(coffer)} MiB = ${(coffer / floor).toFixed(2)}× bare Bun (${fmt(floor)}), ${(coffer / stack).toFixed(2)}× the bare stack (${fmt(stack)}; the stack alone ${(stack / floor).toFixed(2)}× bare Bun); goal ≤ 1.5× bare Bun`,
    );
  }
  for (const [name, exe] of exes) {
    const i = idles.get(name)!;
    const b = bursts.get(name)!;
    console.log(
      `memory.idle_rss_MiB ${name} (${exe}): ${range(i.map((x) => x.rss))}, peak after sign-up and sign-in ${range(i.map((x) => x.peak))}`,
    );
    console.log(
      `memory.sign_in_burst_peak_MiB ${name}: 4 at once peak ${range(b.map((x) => x.peak))}, all four in ${range(b.map((x) => x.ms))} ms`,
    );
  }
  for (let run = 0; run < 2; run++)
    for (const [name, exe] of exes) {
      const u = await smallUploads(exe);
      console.log(
        `memory.small_uploads_peak_MiB ${name}: ${fmt(u.peak)} after ${SMALL_FILES} × 4 KiB from ${CLIENTS} clients, server CPU ${u.cpuMs.toFixed(2)} ms each`,
      );
    }
  for (const [name, exe] of exes) {
    const p = await propfinds(exe);
    console.log(`memory.propfind_10000_peak_MiB ${name}: ${fmt(p.peak)} after ${PROPFINDS} PROPFINDs, server CPU ${fmt(p.cpuMs)} ms each`);
  }
  console.log(`(load average ${load} → ${os.loadavg()[0]!.toFixed(1)} on ${os.cpus().length} cores)`);
}
