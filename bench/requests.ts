import fs from 'node:fs';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { Database } from 'bun:sqlite';
import { newId } from '../src/lib/ids.ts';
import { cpuSeconds, fileCreationMicros, seedItems, spreadTempDir } from './fixtures.ts';
import { AS_COFFER, compileBench } from './compile.ts';
import { adminToken, benchExecutable, spawnServer, type WrkResult, wrk } from './server.ts';
import { median } from './streams.ts';

const fmt = (n: number, digits = 1) => n.toFixed(digits);

/** The built executable (benchExecutable) on `dataDir`, with the general and upload limiters raised so they do not cut a run short. */
async function startExecutable(dataDir: string): Promise<{ url: string; pid: number; stop(): Promise<void> }> {
  const { url, proc } = await spawnServer([benchExecutable()], dataDir, {
    LOG_LEVEL: 'info',
    COFFER_GENERAL_RATE_LIMIT: '1000000000',
    COFFER_UPLOAD_RATE_LIMIT: '1000000000',
  });
  return {
    url,
    pid: proc.pid,
    async stop() {
      proc.kill('SIGTERM');
      await proc.exited;
    },
  };
}

/**
 * The unavoidable work of a durable small upload, in bare Bun on the same disk: a Bun.serve that takes a
 * multipart body, writes each file to a temp file, fsyncs it, renames it into a directory of its own and
 * fsyncs that directory (as the local driver does; no encryption, no database). The bulk route stores up
 * to 16 files at once, as Coffer does. Returns files/s for 8 clients of one file each and for one bulk request.
 */
async function bareBunSmallUploads(dir: string, content: Uint8Array): Promise<{ single: number; bulk: number }> {
  const root = fs.mkdtempSync(path.join(dir, 'bare-'));
  fs.mkdirSync(path.join(root, 'tmp'));
  let n = 0;
  const storeOne = async (file: File) => {
    const id = n++;
    const temp = path.join(root, 'tmp', String(id));
    const handle = await fs.promises.open(temp, 'wx', 0o600);
    await handle.write(new Uint8Array(await file.arrayBuffer()));
    await handle.sync();
    await handle.close();
    const target = path.join(root, String(id % 4096));
    await fs.promises.mkdir(target, { recursive: true });
    await fs.promises.rename(temp, path.join(target, String(id)));
    const d = await fs.promises.open(target, 'r');
    await d.sync();
    await d.close();
  };
  const server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    async fetch(req) {
      const files = (await req.formData()).getAll(new URL(req.url).pathname === '/bulk' ? 'files' : 'file') as File[];
      const inFlight = new Set<Promise<void>>();
      for (const file of files) {
        const p = storeOne(file).finally(() => inFlight.delete(p));
        inFlight.add(p);
        if (inFlight.size >= 16) await Promise.race(inFlight);
      }
      await Promise.all(inFlight);
      return Response.json({ stored: files.length });
    },
  });
  try {
    const base = `http://127.0.0.1:${server.port}`;
    const count = 2000;
    let next = 0;
    let t = performance.now();
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next++ < count) {
          const form = new FormData();
          form.append('file', new File([content], 'small.bin'));
          await (await fetch(`${base}/one`, { method: 'POST', body: form })).arrayBuffer();
        }
      }),
    );
    const single = count / ((performance.now() - t) / 1000);
    const form = new FormData();
    for (let i = 0; i < 1000; i++) form.append('files', new File([content], `file-${i}.bin`));
    t = performance.now();
    await (await fetch(`${base}/bulk`, { method: 'POST', body: form })).arrayBuffer();
    return { single, bulk: 1000 / ((performance.now() - t) / 1000) };
  } finally {
    await server.stop(true);
    fs.rmSync(root, { recursive: true, force: true });
  }
}

/** A bare server of bench/bare-read.ts or bench/bare-elysia.ts on a free loopback port, once it answers its profile route. */
async function startBare(name: string, command: string[], accountId: string, headers: Record<string, string>, mode?: string) {
  const port = 30000 + Math.floor(Math.random() * 2700);
  const proc = Bun.spawn([...command, String(port), accountId, ...(mode ? [mode] : [])], { stdout: 'ignore', stderr: 'inherit' });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(`${url}/profile`, { headers })).ok) return { name, proc, url, headers };
    } catch {
      if (proc.exitCode !== null || i > 500) throw new Error(`the ${name} server did not start`);
      await Bun.sleep(20);
    }
  }
}

/** bench/bare-elysia.ts compiled as Coffer is (scripts/build.ts's flags for the runtime's code), into `dir`. */
export function compileBareElysia(dir: string): string {
  return compileBench('bare-elysia.ts', dir, AS_COFFER);
}

/** Server CPU (user + system) spent while `work` runs, in seconds. */
async function serverCpu<T>(pid: number, work: () => Promise<T>): Promise<{ result: T; cpu: number }> {
  const before = cpuSeconds(pid);
  const result = await work();
  return { result, cpu: cpuSeconds(pid) - before };
}

/**
 * `npm run bench -- requests`: issue 28's goals 3 and 4 on the built executable: the 200-item folder page
 * and the profile at wrk -t2 -c32, PROPFIND Depth 1 of 10,000 items, 4 KiB uploads from 8 clients and one
 * bulk upload of 1,000 × 4 KiB.
 */
export async function runRequestsBench(): Promise<void> {
  const dir = spreadTempDir('coffer-bench-requests-');
  const server = await startExecutable(dir);
  try {
    const token = await adminToken(server.url);
    const cookie = { Cookie: `token=${token}` };
    const profile = (await (await fetch(`${server.url}/api/profile`, { headers: cookie })).json()) as { id: string; email: string };
    const dbPath = path.join(dir, 'coffer.db');

    const folder = newId();
    seedItems(
      dbPath,
      profile.id,
      (i) => (i === 0 ? { id: folder, parentId: null, name: 'two-hundred', type: 'folder' } : { parentId: folder, name: `doc-${i}.pdf` }),
      201,
    );
    const listUrl = `${server.url}/api/files?parentId=${folder}`;
    wrk(listUrl, { threads: 2, connections: 32, seconds: 2, headers: cookie });
    const list = await serverCpu(server.pid, async () => wrk(listUrl, { threads: 2, connections: 32, seconds: 10, headers: cookie }));
    if (list.result.non2xx) throw new Error(`${list.result.non2xx} non-2xx responses listing the folder`);
    const listRequests = list.result.requestsPerSec * 10;
    console.log(
      `requests.list_200_item_page_c32 ${fmt(list.result.requestsPerSec, 0)} req/s p50 ${list.result.p50} p99 ${list.result.p99} server CPU ${fmt((list.cpu / listRequests) * 1e6, 0)} µs per request (wrk -t2 -c32 -d10s, goal >= 12000 req/s and p99 < 5 ms)`,
    );

    // The profile against its floors, each in its own process over the same database, taking turns (order reversed
    // every other round) so that each round's figures saw the same load: bare Bun doing the same read (bench/bare-read.ts,
    // the goal's 1.2×), the same asking the runtime for the peer's address (what Coffer's per-address limits need), and Elysia compiled as Coffer is (bench/bare-elysia.ts), alone and with minimal forms of the
    // hooks Coffer runs on every request, which look up this run's session.
    const readDb = new Database(dbPath, { readonly: true });
    const session = readDb.query<{ id: string }, [string]>('SELECT id FROM sessions WHERE user_id = ?').get(profile.id)!.id;
    readDb.close();
    const elysia = compileBareElysia(dir);
    const bares = await Promise.all(
      (
        [
          ['bare_bun', [process.execPath, path.join(import.meta.dir, 'bare-read.ts'), dbPath], {}],
          ['bare_bun_with_peer', [process.execPath, path.join(import.meta.dir, 'bare-read.ts'), dbPath], {}, 'peer'],
          ['bare_elysia', [elysia, dbPath], {}, 'bare'],
          ['elysia_with_hooks', [elysia, dbPath], { authorization: `Bearer ${session}` }, 'hooks'],
        ] as const
      ).map(([name, command, headers, mode]) => startBare(name, [...command], profile.id, headers, mode)),
    );
    try {
      const targets = [
        { name: 'coffer', pid: server.pid, url: `${server.url}/api/profile`, headers: { authorization: `Bearer ${token}` } },
        ...bares.map((b) => ({ name: b.name, pid: b.proc.pid, url: `${b.url}/profile`, headers: b.headers })),
      ];
      const rounds = 3;
      const seconds = 5;
      const figures = new Map(targets.map((t) => [t.name, [] as Array<{ cpu: number; rps: number; wrk: WrkResult }>]));
      for (const t of targets) wrk(t.url, { threads: 2, connections: 32, seconds: 2, headers: t.headers });
      for (let round = 0; round < rounds; round++) {
        for (const t of round % 2 === 0 ? targets : [...targets].reverse()) {
          const r = await serverCpu(t.pid, async () => wrk(t.url, { threads: 2, connections: 32, seconds, headers: t.headers }));
          if (r.result.non2xx) throw new Error(`${r.result.non2xx} non-2xx responses from the ${t.name} profile`);
          figures
            .get(t.name)!
            .push({ cpu: (r.cpu / (r.result.requestsPerSec * seconds)) * 1e6, rps: r.result.requestsPerSec, wrk: r.result });
        }
      }
      const cpus = (name: string) => figures.get(name)!.map((f) => f.cpu);
      const coffer = figures.get('coffer')!;
      const last = coffer.at(-1)!.wrk;
      console.log(
        `requests.profile_c32 ${fmt(median(coffer.map((f) => f.rps)), 0)} req/s p50 ${last.p50} p99 ${last.p99} server CPU ${fmt(median(cpus('coffer')), 0)} µs per request (rounds ${cpus(
          'coffer',
        )
          .map((c) => fmt(c, 0))
          .join(', ')}; wrk -t2 -c32 -d${seconds}s, ${rounds} rounds taking turns with the floors below, goal >= 25000 req/s)`,
      );
      for (const b of bares) {
        const ratios = cpus('coffer').map((c, i) => c / cpus(b.name)[i]!);
        console.log(
          `requests.${b.name}_profile_c32 ${fmt(median(figures.get(b.name)!.map((f) => f.rps)), 0)} req/s server CPU ${fmt(median(cpus(b.name)), 0)} µs per request (rounds ${cpus(
            b.name,
          )
            .map((c) => fmt(c, 0))
            .join(
              ', ',
            )}); Coffer ${fmt(median(cpus('coffer')) / median(cpus(b.name)), 2)}× its CPU per request (rounds ${ratios.map((r) => fmt(r, 2)).join(', ')})${b.name === 'bare_bun' ? ' (goal: within 1.2×)' : ''}`,
        );
      }
      const bareBun = bares[0]!;
      const bareListUrl = `${bareBun.url}/list?parentId=${folder}`;
      wrk(bareListUrl, { threads: 2, connections: 32, seconds: 2 });
      const b = await serverCpu(bareBun.proc.pid, async () => wrk(bareListUrl, { threads: 2, connections: 32, seconds: 10 }));
      if (b.result.non2xx) throw new Error(`${b.result.non2xx} non-2xx responses from the bare list route`);
      const perRequest = (r: { result: { requestsPerSec: number }; cpu: number }) => (r.cpu / (r.result.requestsPerSec * 10)) * 1e6;
      console.log(
        `requests.bare_bun_list_200_item_page_c32 ${fmt(b.result.requestsPerSec, 0)} req/s server CPU ${fmt(perRequest(b), 0)} µs per request; Coffer ${fmt(perRequest(list) / perRequest(b), 2)}× its CPU per request and ${fmt(list.result.requestsPerSec / b.result.requestsPerSec, 2)}× its req/s (goal: within 1.2×)`,
      );
    } finally {
      for (const b of bares) b.proc.kill('SIGTERM');
      await Promise.all(bares.map((b) => b.proc.exited));
    }

    const appPassword = await fetch(`${server.url}/api/user/app-passwords`, {
      method: 'POST',
      headers: { ...cookie, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'bench' }),
    });
    const { password } = (await appPassword.json()) as { password: string };
    const basic = `Basic ${Buffer.from(`${profile.email}:${password}`).toString('base64')}`;
    const big = newId();
    seedItems(
      dbPath,
      profile.id,
      (i) =>
        i === 0
          ? { id: big, parentId: null, name: 'Ten thousand', type: 'folder' }
          : { parentId: big, name: `photo ${String(i).padStart(5, '0')}.jpg` },
      10_001,
    );
    const propfind = async () => {
      const t = performance.now();
      const res = await fetch(`${server.url}/dav/Ten%20thousand/`, { method: 'PROPFIND', headers: { authorization: basic, depth: '1' } });
      const text = await res.text();
      if (res.status !== 207) throw new Error(`PROPFIND ${res.status}`);
      if (text.split('<D:response>').length - 1 !== 10_001) throw new Error('PROPFIND did not list 10,000 items');
      return performance.now() - t;
    };
    for (let i = 0; i < 3; i++) await propfind();
    const runs: number[] = [];
    const dav = await serverCpu(server.pid, async () => {
      for (let i = 0; i < 10; i++) runs.push(await propfind());
    });
    console.log(
      `requests.propfind_depth1_10000_items_ms median ${fmt(median(runs))} server CPU ${fmt((dav.cpu / 10) * 1000, 0)} ms per request (runs ${runs.map((r) => fmt(r, 0)).join(', ')}, goal < 30)`,
    );

    // What creating a file costs on this disk right now: the floor under every small upload (see spreadTempDir).
    console.log(`requests.file_create_us ${fmt(fileCreationMicros(dir))} (one empty file, median of 200, beside the data directory)`);
    const content = randomBytes(4096);
    const uploadOne = async (n: number) => {
      const form = new FormData();
      form.append('file', new File([content], `small-${n}.bin`));
      const res = await fetch(`${server.url}/api/files/upload`, { method: 'POST', headers: cookie, body: form });
      if (res.status !== 200) throw new Error(`small upload: ${res.status} ${await res.text()}`);
      await res.arrayBuffer();
    };
    for (let i = 0; i < 50; i++) await uploadOne(-i - 1);
    const count = 2000;
    let next = 0;
    const t = performance.now();
    const small = await serverCpu(server.pid, () =>
      Promise.all(
        Array.from({ length: 8 }, async () => {
          while (next < count) await uploadOne(next++);
        }),
      ),
    );
    console.log(
      `requests.small_uploads_4KiB_files_s ${fmt(count / ((performance.now() - t) / 1000), 0)} server CPU ${fmt((small.cpu / count) * 1e6, 0)} µs per upload (8 concurrent clients, ${count} uploads, goal >= 1000)`,
    );

    const bulkRuns: number[] = [];
    let bulkCpu = 0;
    for (let run = 0; run < 3; run++) {
      const form = new FormData();
      for (let i = 0; i < 1000; i++) {
        form.append('relativePaths', `bulk-${run}/file-${i}.bin`);
        form.append('files', new Blob([content]), `file-${i}.bin`);
      }
      const tb = performance.now();
      const bulk = await serverCpu(server.pid, async () => {
        const res = await fetch(`${server.url}/api/files/upload/bulk`, { method: 'POST', headers: cookie, body: form });
        return (await res.json()) as { successful: number };
      });
      bulkRuns.push(1000 / ((performance.now() - tb) / 1000));
      bulkCpu += bulk.cpu;
      if (bulk.result.successful !== 1000) throw new Error(`bulk upload stored ${bulk.result.successful}`);
    }
    console.log(
      `requests.bulk_upload_1000x4KiB_files_s median ${fmt(median(bulkRuns), 0)} server CPU ${fmt((bulkCpu / 3000) * 1e6, 0)} µs per file (one multipart request of 1,000 files, runs ${bulkRuns.map((r) => fmt(r, 0)).join(', ')}, goal >= 2000)`,
    );
    // The disk's own ceiling for the same durability, in the same run (the server is idle meanwhile).
    const bare = await bareBunSmallUploads(dir, content);
    console.log(
      `requests.bare_bun_small_uploads_4KiB_files_s ${fmt(bare.single, 0)} (8 clients); bulk_1000x4KiB_files_s ${fmt(bare.bulk, 0)} (bare Bun: multipart, write, fsync, rename, fsync of the directory; no encryption, no database)`,
    );
  } finally {
    await server.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.main) await runRequestsBench();
