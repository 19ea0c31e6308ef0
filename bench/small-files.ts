import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spreadTempDir } from './fixtures.ts';
import { median } from './streams.ts';
import { adminToken, spawnServer } from './server.ts';
import { flag } from './flags.ts';

const FILES = 1500;
const WARM_UP = 100;
const CLIENTS = 8;
const ENV = { LOG_LEVEL: 'warn', COFFER_GENERAL_RATE_LIMIT: '1000000000', COFFER_UPLOAD_RATE_LIMIT: '1000000000' };

/** User plus system CPU seconds of a process (`/proc/<pid>/stat`) or of one of its threads (`/proc/<pid>/task/<tid>/stat`). */
function cpuOf(statFile: string): number {
  const fields = fs.readFileSync(statFile, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

interface Run {
  perSec: number;
  processMs: number;
  threadMs: number;
  /** Upload time as a client sees it: a commit that stalls the request thread stalls every upload in flight. */
  p99Ms: number;
  maxMs: number;
}

type Door = 'api' | 'dav' | 'bare PUT' | 'bare multipart' | 'api bulk' | 'bare bulk';

// Files per request of the bulk doors (`--bulk N`: N such requests per run), as `npm run bench -- requests` sends.
const BULK_FILES = 1000;

/**
 * One fresh server: Coffer from `source` (a checkout with node_modules) through its API or WebDAV, or the
 * bare write-and-fsync reference (bench/bare-durable.ts, from source too) by PUT or multipart POST.
 */
async function run(source: string, door: Door): Promise<Run> {
  const dataDir = spreadTempDir('coffer-bench-small-');
  const bare = door.startsWith('bare');
  const entry = bare ? path.join(import.meta.dir, 'bare-durable.ts') : path.join(source, 'src/main.ts');
  const { url, proc } = await spawnServer([process.execPath, entry], dataDir, ENV);
  try {
    let put: (i: number, content: Uint8Array) => Promise<void>;
    const cookie: Record<string, string> = bare ? {} : { Cookie: `token=${await adminToken(url)}` };
    if (door === 'bare PUT') {
      put = async (i, content) => {
        const res = await fetch(`${url}/${i}`, { method: 'PUT', body: content });
        if (res.status !== 201) throw new Error(`bare PUT: ${res.status}`);
        await res.arrayBuffer();
      };
    } else if (door === 'bare multipart') {
      put = async (i, content) => {
        const form = new FormData();
        form.append('file', new File([content], `small-${i}.bin`));
        const res = await fetch(`${url}/`, { method: 'POST', body: form });
        if (res.status !== 200) throw new Error(`bare POST: ${res.status}`);
        await res.arrayBuffer();
      };
    } else if (door === 'bare bulk' || door === 'api bulk') {
      const route = door === 'bare bulk' ? `${url}/bulk` : `${url}/api/files/upload/bulk`;
      put = async (i, content) => {
        const form = new FormData();
        for (let f = 0; f < BULK_FILES; f++) {
          form.append('relativePaths', `bulk-${i}/file-${f}.bin`);
          form.append('files', new File([content], `file-${f}.bin`));
        }
        const res = await fetch(route, { method: 'POST', headers: cookie, body: form });
        if (res.status !== 200) throw new Error(`bulk upload: ${res.status} ${await res.text()}`);
        const body = (await res.json()) as { stored?: number; successful?: number };
        if ((body.stored ?? body.successful) !== BULK_FILES) throw new Error(`bulk upload stored ${JSON.stringify(body).slice(0, 200)}`);
      };
    } else if (door === 'api') {
      put = async (i, content) => {
        const form = new FormData();
        form.append('file', new File([content], `small-${i}.bin`));
        const res = await fetch(`${url}/api/files/upload`, { method: 'POST', headers: cookie, body: form });
        if (res.status !== 200) throw new Error(`upload: ${res.status} ${await res.text()}`);
        await res.arrayBuffer();
      };
    } else {
      const created = await fetch(`${url}/api/user/app-passwords`, {
        method: 'POST',
        headers: { ...cookie, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'bench' }),
      });
      const { password } = (await created.json()) as { password: string };
      const auth = { authorization: `Basic ${Buffer.from(`bench@example.test:${password}`).toString('base64')}` };
      put = async (i, content) => {
        const res = await fetch(`${url}/dav/small-${i}.bin`, { method: 'PUT', headers: auth, body: content });
        if (res.status !== 201) throw new Error(`PUT: ${res.status} ${await res.text()}`);
        await res.arrayBuffer();
      };
    }
    const content = randomBytes(4096);
    const bulk = door.endsWith('bulk');
    if (bulk) {
      // The server warmed as for single uploads, then its bulk path once.
      const form = () => {
        const f = new FormData();
        f.append('file', new File([content], 'warm.bin'));
        return f;
      };
      for (let i = 0; i < WARM_UP; i++)
        await (await fetch(bare ? `${url}/` : `${url}/api/files/upload`, { method: 'POST', headers: cookie, body: form() })).arrayBuffer();
      await put(-1, content);
    } else for (let i = 0; i < WARM_UP; i++) await put(FILES + i, content);
    const requests = bulk ? flag('bulk', 4) : flag('files', FILES);
    const files = bulk ? requests * BULK_FILES : requests;
    let next = 0;
    const times: number[] = [];
    const processBefore = cpuOf(`/proc/${proc.pid}/stat`);
    const threadBefore = cpuOf(`/proc/${proc.pid}/task/${proc.pid}/stat`);
    const t = performance.now();
    await Promise.all(
      Array.from({ length: bulk ? 1 : CLIENTS }, async () => {
        while (next < requests) {
          const started = performance.now();
          await put(next++, content);
          times.push(performance.now() - started);
        }
      }),
    );
    const seconds = (performance.now() - t) / 1000;
    times.sort((a, b) => a - b);
    return {
      p99Ms: times[Math.floor(times.length * 0.99)]!,
      maxMs: times.at(-1)!,
      perSec: files / seconds,
      processMs: ((cpuOf(`/proc/${proc.pid}/stat`) - processBefore) * 1000) / files,
      threadMs: ((cpuOf(`/proc/${proc.pid}/task/${proc.pid}/stat`) - threadBefore) * 1000) / files,
    };
  } finally {
    proc.kill('SIGTERM');
    await proc.exited;
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

/**
 * `npm run bench -- small-files [--rounds N] [--files N] [--bulk N]`: 4 KiB uploads from 8 clients through the API
 * and WebDAV, run from source (with `--bulk N`: N bulk requests of 1,000 × 4 KiB each instead, one at a time, the
 * builds' order turned each round); with COFFER_BENCH_BEFORE_SRC (other checkouts with node_modules, separated
 * by `:`, each named by its folder) they alternate with this one in each round, as does the bare reference
 * (bench/bare-durable.ts) by PUT and by multipart. Prints files/s and the server's CPU ms per file, of the
 * process and of its JavaScript thread (the figures least moved by other load on the machine).
 */
export async function runSmallFilesBench(): Promise<void> {
  const before = (process.env.COFFER_BENCH_BEFORE_SRC ?? '').split(':').filter(Boolean);
  const sources: Array<[string, string]> = [
    ...before.map((dir): [string, string] => [path.basename(dir), path.resolve(dir)]),
    ['this checkout', path.resolve(import.meta.dir, '..')],
  ];
  const rounds = flag('rounds', 3);
  const bulk = process.argv.includes('--bulk');
  const results = new Map<string, Run[]>();
  for (let r = 0; r < rounds; r++) {
    const runs: Array<[string, string, Door]> = bulk
      ? [
          ...sources.map(([name, source]): [string, string, Door] => [`${name} API bulk`, source, 'api bulk']),
          ['bare reference, bulk', '', 'bare bulk'],
        ]
      : [
          ...(['api', 'dav'] as const).flatMap((door) =>
            sources.map(([name, source]): [string, string, Door] => [`${name} ${door === 'api' ? 'API' : 'WebDAV'}`, source, door]),
          ),
          ['bare reference, multipart', '', 'bare multipart'],
          ['bare reference, PUT', '', 'bare PUT'],
        ];
    // Bulk runs take turns first: a run's place in the round moved its figure by about 9% (docs/performance.md).
    if (bulk) runs.push(...runs.splice(0, r % runs.length));
    for (const [key, source, door] of runs) {
      const one = await run(source, door);
      results.set(key, [...(results.get(key) ?? []), one]);
      console.log(
        `round ${r + 1} ${key}: ${one.perSec.toFixed(0)} files/s, process ${one.processMs.toFixed(2)} ms/file, JS thread ${one.threadMs.toFixed(2)} ms/file, upload p99 ${one.p99Ms.toFixed(1)} ms, max ${one.maxMs.toFixed(1)} ms`,
      );
    }
  }
  const work = bulk
    ? `${flag('bulk', 4)} requests of ${BULK_FILES} × 4 KiB, one at a time`
    : `${flag('files', FILES)} × 4 KiB from ${CLIENTS} clients`;
  console.log(
    `\n| ${rounds} rounds, ${work} (medians) | files/s | process CPU ms/file | JS thread CPU ms/file | request p99 ms | request max ms |`,
  );
  console.log('|---|---|---|---|---|---|');
  for (const [key, runs] of results) {
    const m = (pick: (r: Run) => number) => median(runs.map(pick));
    console.log(
      `| ${key} | ${m((r) => r.perSec).toFixed(0)} | ${m((r) => r.processMs).toFixed(2)} | ${m((r) => r.threadMs).toFixed(2)} | ${m((r) => r.p99Ms).toFixed(1)} | ${m((r) => r.maxMs).toFixed(1)} |`,
    );
  }
  // Issue 49's goal: single 4 KiB uploads at 70% of the bare reference's rate, round by round (the load moves between rounds).
  const ratio = (coffer: string, bare: string) => {
    const c = results.get(coffer)!;
    const b = results.get(bare)!;
    const rates = c.map((x, i) => x.perSec / b[i]!.perSec);
    const cpu = c.map((x, i) => x.processMs / b[i]!.processMs);
    return `${(100 * median(rates)).toFixed(0)}% of its files/s, ${median(cpu).toFixed(2)}× its CPU per file`;
  };
  if (bulk) {
    // Issue 49's goal: bulk uploads at 85% of the bare reference's bulk rate.
    console.log(`this checkout API bulk against the bare bulk reference: ${ratio('this checkout API bulk', 'bare reference, bulk')}`);
    for (const [name] of sources.slice(0, -1)) {
      const c = results.get('this checkout API bulk')!;
      const b = results.get(`${name} API bulk`)!;
      const cpu = c.map((x, i) => x.processMs / b[i]!.processMs);
      const lower = cpu.filter((x) => x < 1).length;
      console.log(
        `this checkout API bulk against ${name}: ${median(cpu).toFixed(3)}× its process CPU per file (median of the rounds), lower in ${lower} of ${cpu.length} rounds`,
      );
    }
  } else {
    console.log(`this checkout API against the bare multipart reference: ${ratio('this checkout API', 'bare reference, multipart')}`);
    console.log(`this checkout WebDAV against the bare PUT reference: ${ratio('this checkout WebDAV', 'bare reference, PUT')}`);
  }
  console.log(
    `load average ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
}
