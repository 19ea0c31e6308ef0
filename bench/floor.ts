import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { cpuSeconds, spreadTempDir } from './fixtures.ts';
import { compileBench } from './compile.ts';
import { flag } from './flags.ts';
import { adminToken, benchExecutable, spawnServer } from './server.ts';
import { median } from './streams.ts';

const STEPS = ['durable', 'sealed', 'row', 'indexed', 'grouped', 'intent'] as const;
const SHAPES = ['post', 'put', 'bulk'] as const;
type Shape = (typeof SHAPES)[number];
const CLIENTS = 8;
const fmt = (n: number, digits = 0) => (Number.isFinite(n) ? n.toFixed(digits) : '–');
const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');

/** A running server and how each request shape reaches it. */
interface Target {
  name: string;
  pid: number;
  post(name: string, content: Uint8Array): Promise<void>;
  put(name: string, content: Uint8Array): Promise<void>;
  bulk(names: string[], content: Uint8Array): Promise<void>;
  stop(): Promise<void>;
}

async function expect(res: Response, status: number, what: string): Promise<void> {
  if (res.status !== status) throw new Error(`${what}: ${res.status} ${await res.text()}`);
  await res.arrayBuffer();
}

/** The bare floor at `step` (bench/bare-floor.ts, compiled), on its own data directory. */
async function floorTarget(exe: string, dir: string, step: string): Promise<Target> {
  const port = 30000 + Math.floor(Math.random() * 2700);
  const server = Bun.spawn(
    [exe, 'serve', '--port', String(port), '--host', '127.0.0.1', '--data-dir', path.join(dir, step), '--step', step],
    {
      stdout: 'ignore',
      stderr: 'inherit',
    },
  );
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(base)).ok) break;
    } catch {
      if (server.exitCode !== null || i > 1000) throw new Error(`bare-floor --step ${step} did not start`);
      await Bun.sleep(20);
    }
  }
  return {
    name: step,
    pid: server.pid,
    async post(name, content) {
      const form = new FormData();
      form.append('file', new File([content], name));
      await expect(await fetch(`${base}/`, { method: 'POST', body: form }), 200, `${step} POST`);
    },
    async put(name, content) {
      await expect(await fetch(`${base}/${name}`, { method: 'PUT', body: content }), 201, `${step} PUT`);
    },
    async bulk(names, content) {
      const form = new FormData();
      for (const name of names) form.append('files', new File([content], name));
      await expect(await fetch(`${base}/bulk`, { method: 'POST', body: form }), 200, `${step} bulk`);
    },
    async stop() {
      server.kill('SIGTERM');
      await server.exited;
    },
  };
}

/** Coffer (the built executable): multipart to the API, raw PUT to WebDAV with an app password, the API's bulk route. */
async function cofferTarget(dir: string): Promise<Target> {
  const { url, proc } = await spawnServer([benchExecutable()], path.join(dir, 'coffer'), {
    LOG_LEVEL: 'info',
    COFFER_GENERAL_RATE_LIMIT: '1000000000',
    COFFER_UPLOAD_RATE_LIMIT: '1000000000',
  });
  const token = await adminToken(url);
  const cookie = { Cookie: `token=${token}` };
  const profile = (await (await fetch(`${url}/api/profile`, { headers: cookie })).json()) as { email: string };
  const created = await fetch(`${url}/api/user/app-passwords`, {
    method: 'POST',
    headers: { ...cookie, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'bench' }),
  });
  const { password } = (await created.json()) as { password: string };
  const basic = { authorization: `Basic ${Buffer.from(`${profile.email}:${password}`).toString('base64')}` };
  return {
    name: 'Coffer',
    pid: proc.pid,
    async post(name, content) {
      const form = new FormData();
      form.append('file', new File([content], name));
      await expect(await fetch(`${url}/api/files/upload`, { method: 'POST', headers: cookie, body: form }), 200, 'Coffer upload');
    },
    async put(name, content) {
      await expect(await fetch(`${url}/dav/${name}`, { method: 'PUT', headers: basic, body: content }), 201, 'Coffer WebDAV PUT');
    },
    async bulk(names, content) {
      const form = new FormData();
      for (const name of names) form.append('files', new File([content], name));
      const res = await fetch(`${url}/api/files/upload/bulk`, { method: 'POST', headers: cookie, body: form });
      const body = (await res.json()) as { successful: number };
      if (body.successful !== names.length) throw new Error(`Coffer bulk stored ${body.successful} of ${names.length}`);
    },
    async stop() {
      proc.kill('SIGTERM');
      await proc.exited;
    },
  };
}

interface Figure {
  perSec: number;
  cpuUs: number;
  /** Of it, the JavaScript thread's (the rest is the runtime's I/O threads, the collector and the JIT). */
  threadUs: number;
}

/** CPU seconds (user + system) of a process's main thread, the one that runs JavaScript. */
function threadCpuSeconds(pid: number): number {
  const fields = fs.readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** `files` uploads of `shape` to `target`, names unique to the round: files per second and server CPU µs per file. */
async function measure(target: Target, shape: Shape, round: number, files: number, content: Uint8Array): Promise<Figure> {
  const name = (i: number) => `${shape}-${round}-${i}.bin`;
  const before = cpuSeconds(target.pid);
  const threadBefore = threadCpuSeconds(target.pid);
  const t = performance.now();
  if (shape === 'bulk') {
    for (let at = 0; at < files; at += 1000)
      await target.bulk(
        Array.from({ length: Math.min(1000, files - at) }, (_, i) => name(at + i)),
        content,
      );
  } else {
    let next = 0;
    await Promise.all(
      Array.from({ length: CLIENTS }, async () => {
        while (next < files) await target[shape](name(next++), content);
      }),
    );
  }
  const seconds = (performance.now() - t) / 1000;
  return {
    perSec: files / seconds,
    cpuUs: ((cpuSeconds(target.pid) - before) / files) * 1e6,
    threadUs: ((threadCpuSeconds(target.pid) - threadBefore) / files) * 1e6,
  };
}

/**
 * `npm run bench -- floor [--rounds 3] [--files 2000] [--stored 0] [--warmup 100] [--rewarm 0]`: Coffer's 4 KiB uploads (API multipart, WebDAV PUT,
 * the API's bulk route) beside the floor with Coffer's guarantees added one at a time (bench/bare-floor.ts, compiled),
 * every target measured in each round, the order reversed every other round; each Coffer figure printed as a multiple
 * of each step's from the same rounds. `--stored N`: every target first holds N files (by bulk), so the rounds measure
 * a server that already holds files rather than an empty data directory. `--warmup N`: N single POSTs and PUTs to each
 * target before the rounds (bulk: N files in requests of 1,000), so Coffer's larger program is measured after its JIT
 * has compiled it rather than while it does. `--rewarm N`: N uploads of the shape (bulk: at least 1,000) sent to a
 * target just before each of its measured batches: the runtime lets optimized code go once a process has had no active
 * collection for `optimizedCodeAgingQuietSeconds` (30 s), and each target waits minutes while the others are measured.
 */
export async function runFloorBench(): Promise<void> {
  const rounds = flag('rounds', 3);
  const files = flag('files', 2000);
  const stored = flag('stored', 0);
  const warmup = flag('warmup', 100);
  const rewarm = flag('rewarm', 0);
  const dir = spreadTempDir('coffer-bench-floor-');
  const exe = compileBench('bare-floor.ts', dir);
  const targets: Target[] = [];
  try {
    targets.push(await cofferTarget(dir));
    for (const step of STEPS) targets.push(await floorTarget(exe, dir, step));
    const content = randomBytes(4096);
    if (stored > 0) for (const target of targets) await measure(target, 'bulk', -2, stored, content);
    for (const target of targets)
      for (const shape of SHAPES) await measure(target, shape, -1, shape === 'bulk' ? Math.max(1000, warmup) : warmup, content);
    const figures = new Map<string, Figure[]>();
    for (let round = 0; round < rounds; round++) {
      const order = round % 2 === 0 ? targets : [...targets].reverse();
      const loadBefore = load();
      for (const target of order)
        for (const shape of SHAPES) {
          if (rewarm > 0) await measure(target, shape, -3 - round, shape === 'bulk' ? Math.max(1000, rewarm) : rewarm, content);
          const f = await measure(target, shape, round, files, content);
          const key = `${target.name} ${shape}`;
          figures.set(key, [...(figures.get(key) ?? []), f]);
          console.log(
            `floor.round_${round} ${key}: ${fmt(f.perSec)} files/s, ${fmt(f.cpuUs)} µs CPU per file (JavaScript thread ${fmt(f.threadUs)})`,
          );
        }
      console.log(`floor.round_${round} load average ${loadBefore} before, ${load()} after`);
    }
    const span = (xs: number[], digits = 0) => `${fmt(Math.min(...xs), digits)}–${fmt(Math.max(...xs), digits)}`;
    console.log(
      `\n| shape | server | files/s | CPU µs per file | of it the JavaScript thread's | Coffer's files/s as a multiple | Coffer's CPU as a multiple |`,
    );
    console.log(`|---|---|---|---|---|---|---|`);
    for (const shape of SHAPES) {
      const coffer = figures.get(`Coffer ${shape}`)!;
      for (const target of targets) {
        const f = figures.get(`${target.name} ${shape}`)!;
        const rate = f.map((x, i) => coffer[i]!.perSec / x.perSec);
        const cpu = f.map((x, i) => coffer[i]!.cpuUs / x.cpuUs);
        console.log(
          `| ${shape} | ${target.name} | ${span(f.map((x) => x.perSec))} (median ${fmt(median(f.map((x) => x.perSec)))}) | ${span(f.map((x) => x.cpuUs))} (median ${fmt(median(f.map((x) => x.cpuUs)))}) | ${span(f.map((x) => x.threadUs))} (median ${fmt(median(f.map((x) => x.threadUs)))}) | ${target.name === 'Coffer' ? '' : `${fmt(median(rate), 2)} (${span(rate, 2)})`} | ${target.name === 'Coffer' ? '' : `${fmt(median(cpu), 2)} (${span(cpu, 2)})`} |`,
        );
      }
    }
    console.log(
      `\nfloor: ${rounds} rounds of ${files} × 4 KiB per shape (post, put: ${CLIENTS} clients; bulk: requests of 1,000), the order reversed every other round, ${stored} files stored in each server first, ${warmup} of each shape to warm up, ${rewarm} before each measured batch; load average ${load()} at the end`,
    );
  } finally {
    for (const target of targets) await target.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.main) await runFloorBench();
