import { Database } from 'bun:sqlite';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { indexedText } from '../src/services/search/text.ts';
import { makeDocument, seedIndex, type DocKind } from './search-docs.ts';
import { flag } from './flags.ts';
import { adminToken, type BenchServer, benchExecutable, spawnServer, startBenchServer } from './server.ts';

const MiB = 1024 ** 2;

/** CPU seconds (user + system) the process (or with `tid` one of its threads) has used so far, from /proc. */
function cpuSeconds(pid: number, tid?: number): number {
  const file = tid === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${tid}/stat`;
  const fields = fs.readFileSync(file, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

interface ThreadFacts {
  cpu: number;
  nice: number;
  name: string;
  written: number;
  /** Seconds since boot when the thread started (/proc/<pid>/task/<tid>/stat, field 22). */
  startedAt: number;
  /** Times it gave up its core to wait for something (a message, a lock, the disk). */
  sleeps: number;
}

/** Seconds since boot, the clock of a thread's start time. */
const uptime = () => Number(fs.readFileSync('/proc/uptime', 'utf8').split(' ')[0]);

/** Each thread's CPU seconds so far, nice value, name, bytes written, start and sleeps, by thread id. */
function threadCpu(pid: number): Map<number, ThreadFacts> {
  const out = new Map<number, ThreadFacts>();
  for (const tid of fs.readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const fields = stat.split(') ')[1]!.split(' ');
      const written = Number(/^wchar: (\d+)$/m.exec(fs.readFileSync(`/proc/${pid}/task/${tid}/io`, 'utf8'))?.[1] ?? 0);
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const sleeps = Number(
        /^voluntary_ctxt_switches:\s+(\d+)$/m.exec(fs.readFileSync(`/proc/${pid}/task/${tid}/status`, 'utf8'))?.[1] ?? 0,
      );
      out.set(Number(tid), {
        cpu: (Number(fields[11]) + Number(fields[12])) / 100,
        nice: Number(fields[16]),
        name,
        written,
        startedAt: Number(fields[19]) / 100,
        sleeps,
      });
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return out;
}

/** A thread's time on a core and waiting in the run queue for one so far, in ms (/proc/<pid>/task/<tid>/schedstat). */
function schedMs(pid: number, tid: number): { run: number; wait: number } {
  const [run, wait] = fs.readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ').map(Number);
  return { run: run! / 1e6, wait: wait! / 1e6 };
}

/** The machine's CPU time so far, busy and all, in clock ticks (/proc/stat, every core's). */
function machineTicks(): { busy: number; all: number } {
  const ticks = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0]!.split(/\s+/).slice(1, 9).map(Number);
  const all = ticks.reduce((a, b) => a + b, 0);
  return { busy: all - ticks[3]! - ticks[4]!, all };
}

/**
 * The request thread's collections, from the runtime's log (`BUN_JSC_logGC=1`) read as it comes: the first heap to
 * collect is the request thread's (the workers' heaps start later). Other lines pass through to this bench's stderr.
 */
function collections(stderr: ReadableStream<Uint8Array>): { between(from: number, to: number): { young: number; full: number } } {
  const seen: Array<{ at: number; full: boolean }> = [];
  let heap: string | undefined;
  void (async () => {
    const decoder = new TextDecoder();
    let pending = '';
    for await (const chunk of stderr) {
      pending += decoder.decode(chunk, { stream: true });
      for (let end = pending.indexOf('\n'); end >= 0; end = pending.indexOf('\n')) {
        const line = pending.slice(0, end);
        pending = pending.slice(end + 1);
        const started = /^\[GC<(0x[0-9a-f]+)>: START \w+ \d+kb => (Eden|Full)Collection/.exec(line);
        if (started) {
          heap ??= started[1];
          if (started[1] === heap) seen.push({ at: performance.now(), full: started[2] === 'Full' });
        } else if (!line.startsWith('[GC<') && !line.startsWith('GC END')) process.stderr.write(`${line}\n`);
      }
    }
  })();
  return {
    between(from, to) {
      const inside = seen.filter((c) => c.at >= from && c.at <= to);
      return { young: inside.filter((c) => !c.full).length, full: inside.filter((c) => c.full).length };
    },
  };
}

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
const ms = (n: number) => n.toFixed(1);

async function api(server: BenchServer, token: string, pathAndQuery: string, init: RequestInit = {}): Promise<Response> {
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  if (typeof init.body === 'string') headers['content-type'] = 'application/json';
  return fetch(`${server.url}${pathAndQuery}`, { ...init, headers });
}

async function progress(server: BenchServer, token: string) {
  return (await (await api(server, token, '/api/user/content-search-config')).json()) as {
    indexed: number;
    pending: number;
    textBytes: number;
  };
}

/** Times `count` sequential requests; returns sorted milliseconds. */
async function timed(count: number, fn: () => Promise<Response>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < count; i++) {
    const t0 = performance.now();
    const res = await fn();
    await res.arrayBuffer();
    if (!res.ok) throw new Error(`status ${res.status}`);
    out.push(performance.now() - t0);
  }
  return out.sort((a, b) => a - b);
}

/** Uploads the mix (text, PDF, DOCX, XLSX in turn) from 4 clients with content search off; returns its bytes. */
async function uploadMix(server: BenchServer, token: string, docs: number, docBytes: number): Promise<number> {
  const kinds: DocKind[] = ['txt', 'pdf', 'docx', 'xlsx'];
  let bytes = 0;
  const t0 = performance.now();
  const queue = Array.from({ length: docs }, (_, i) => i);
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      for (let i = queue.shift(); i !== undefined; i = queue.shift()) {
        const kind = kinds[i % kinds.length]!;
        const body = makeDocument(kind, i, docBytes);
        bytes += body.length;
        const form = new FormData();
        form.append('file', new File([body], `doc-${i}.${kind}`));
        const res = await api(server, token, '/api/files/upload', { method: 'POST', body: form });
        if (!res.ok) throw new Error(`upload ${i}: ${res.status}`);
      }
    }),
  );
  console.log(
    `search.upload ${docs} documents, ${(bytes / MiB).toFixed(0)} MiB in ${((performance.now() - t0) / 1000).toFixed(1)} s (search off)`,
  );
  return bytes;
}

/** Waits until the server's background work (thumbnails of the PDFs) is done, so the CPU measured after is indexing's. */
async function settle(server: BenchServer): Promise<void> {
  const settleStart = performance.now();
  for (let before = cpuSeconds(server.pid); performance.now() - settleStart < 5 * 60_000; ) {
    await Bun.sleep(2000);
    const now = cpuSeconds(server.pid);
    if (now - before < 0.1) break;
    before = now;
  }
  console.log(`search.settle ${((performance.now() - settleStart) / 1000).toFixed(1)} s until the server was idle`);
}

/**
 * Part 1, on the built executable (COFFER_BENCH_EXE to compare two builds): uploads a mix of text, PDF, DOCX and XLSX over HTTP with content search off, turns it on and
 * times the backfill (documents/s, server CPU), while GET /api/files is timed every 50 ms.
 */
async function indexing(docs: number, docBytes: number): Promise<void> {
  // SEARCH_BENCH_GC=1: the request thread's collections while indexing too, the runtime logging each. Its timer that
  // collects once a second whatever is allocated is off, so what is counted is what allocation set off (the other
  // figures of such a run are then not those of the server as it runs).
  const countCollections = process.env.SEARCH_BENCH_GC === '1';
  const server = await startBenchServer(
    {
      COFFER_GENERAL_RATE_LIMIT: '1000000000',
      COFFER_UPLOAD_RATE_LIMIT: '1000000000',
      LOG_LEVEL: 'warn',
      // The extraction threads to measure, else the server's default (one per core but one).
      ...(process.env.SEARCH_WORKERS ? { SEARCH_WORKERS: process.env.SEARCH_WORKERS } : {}),
      ...(countCollections ? { BUN_JSC_logGC: '1', BUN_GC_TIMER_DISABLE: '1' } : {}),
    },
    undefined,
    { executable: true, stderr: countCollections ? 'pipe' : 'inherit' },
  );
  const gc = server.stderr && collections(server.stderr);
  try {
    const token = await adminToken(server.url);
    const bytes = await uploadMix(server, token, docs, docBytes);
    await settle(server);

    // The same probe with nothing indexing first, on the same box in the same run: what the load of the machine costs alone.
    // Each answer's time with what the request thread did meanwhile (on a core, or runnable and waiting for one), and
    // how long this bench's own thread waited for a core (on a loaded box the client is late too).
    const answers: Array<{ ms: number; run: number; wait: number; client: number }> = [];
    const probe = async (until: () => boolean) => {
      const out: number[] = [];
      while (!until()) {
        const s0 = schedMs(server.pid, server.pid);
        const c0 = schedMs(process.pid, process.pid);
        const t = performance.now();
        const res = await api(server, token, '/api/files?limit=50');
        await res.arrayBuffer();
        const took = performance.now() - t;
        const s1 = schedMs(server.pid, server.pid);
        const c1 = schedMs(process.pid, process.pid);
        out.push(took);
        answers.push({ ms: took, run: s1.run - s0.run, wait: s1.wait - s0.wait, client: c1.wait - c0.wait });
        await Bun.sleep(50);
      }
      return out.sort((a, b) => a - b);
    };
    const idleFrom = performance.now();
    const idleUntil = idleFrom + 15_000;
    const idleCpu0 = cpuSeconds(server.pid, server.pid);
    const idle = await probe(() => performance.now() > idleUntil);
    // What one probe costs the request thread, so its share of indexing can be told from the probe's.
    const probeCpu = (cpuSeconds(server.pid, server.pid) - idleCpu0) / idle.length;
    answers.length = 0;

    const cpu0 = cpuSeconds(server.pid);
    const mainCpu0 = cpuSeconds(server.pid, server.pid);
    const threads0 = threadCpu(server.pid);
    const start = performance.now();
    await api(server, token, '/api/user/content-search-config', { method: 'PUT', body: JSON.stringify({ enabled: true }) });
    let done = false;
    const prober = probe(() => done);
    // Bounded: at most 30 minutes, whatever the box. Looked at every 100 ms, so the end of indexing is known to that.
    // Each look also tells whether every core of the machine was busy since the last (idle under 10%).
    let windows = 0;
    let saturated = 0;
    for (let last = machineTicks(); ; ) {
      const p = await progress(server, token);
      const now = machineTicks();
      windows++;
      if (now.all > last.all && (now.busy - last.busy) / (now.all - last.all) >= 0.9) saturated++;
      last = now;
      if (p.pending === 0 && p.indexed >= docs) break;
      if (performance.now() - start > 30 * 60_000) throw new Error(`indexing did not finish in 30 minutes (${p.indexed} of ${docs})`);
      await Bun.sleep(100);
    }
    done = true;
    const indexedAt = performance.now();
    const endedAt = uptime();
    // Threads started by indexing, read before they are let go: the index writer is the one that wrote the most (the
    // database), the extraction workers are the other niced ones.
    const started = [...threadCpu(server.pid)].filter(([tid]) => !threads0.has(tid));
    const [writerTid, writer] = started.reduce<(typeof started)[number] | [undefined, undefined]>(
      (w, t) => (w[1] && w[1].written >= t[1].written ? w : t),
      [undefined, undefined],
    );
    const writerSched = writerTid === undefined ? undefined : schedMs(server.pid, writerTid);
    const extractorsSched = started
      .filter(([tid, t]) => tid !== writerTid && t.nice > 0)
      .flatMap(([tid, t]) => {
        try {
          return [{ ...schedMs(server.pid, tid), lifeMs: (endedAt - t.startedAt) * 1000 }];
        } catch {
          // Ended since the listing (its heap grew too large after a document).
          return [];
        }
      });
    const listing = await prober;
    const seconds = (performance.now() - start) / 1000;
    const cpu = cpuSeconds(server.pid) - cpu0;
    const mainCpu = cpuSeconds(server.pid, server.pid) - mainCpu0;
    const p = await progress(server, token);
    const db = new Database(path.join(server.dataDir, 'coffer.db'), { readonly: true });
    const indexBytes = db.query<{ b: number }, []>(`SELECT sum(pgsize) AS b FROM dbstat WHERE name LIKE 'content_%'`).get()?.b ?? 0;
    db.close();
    console.log(
      `search.index_docs_per_s ${(docs / seconds).toFixed(1)} (${docs} documents, ${(bytes / MiB).toFixed(0)} MiB: text, PDF, DOCX, XLSX in turn; ${seconds.toFixed(1)} s)`,
    );
    console.log(
      `search.index_server_cpu ${cpu.toFixed(1)} s CPU over ${seconds.toFixed(1)} s (${((cpu / seconds) * 100).toFixed(0)}% of one core)`,
    );
    console.log(
      `search.index_cpu_per_doc ${((cpu / docs) * 1000).toFixed(1)} ms, of which the request thread ${((mainCpu / docs) * 1000).toFixed(1)} ms (the rest in the extraction workers and the index writer; load average ${os.loadavg()[0]!.toFixed(1)})`,
    );
    const perDoc = (seconds: number) => `${((seconds / docs) * 1000).toFixed(2)} ms`;
    const extractors = started.filter(([, t]) => t !== writer && t.nice > 0).reduce((a, [, t]) => a + t.cpu, 0);
    console.log(
      `search.index_thread_cpu_per_doc request thread ${perDoc(mainCpu - listing.length * probeCpu)} without the probe's ${listing.length} requests (${(probeCpu * 1000).toFixed(2)} ms each, measured idle), extraction workers ${perDoc(extractors)}, index writer ${perDoc(writer?.cpu ?? 0)} (nice ${writer?.nice ?? '-'})`,
    );
    if (writer && writerSched) {
      // From its start (its first write) to the end of indexing: what it was not on a core nor waiting for one it was asleep,
      // mostly waiting for the next texts (its commits do not fsync; a checkpoint's fsync is the rest).
      const lifeMs = (endedAt - writer.startedAt) * 1000;
      const asleep = lifeMs - writerSched.run - writerSched.wait;
      console.log(
        `search.index_writer_time asleep ${ms(asleep)} ms (${(asleep / docs).toFixed(2)} ms per document, ${writer.sleeps} sleeps), on a core ${ms(writerSched.run)} ms, waiting for one ${ms(writerSched.wait)} ms, of its ${ms(lifeMs)} ms from its first write to the end of indexing`,
      );
    }
    if (extractorsSched.length > 0) {
      // The extraction workers alive at the end, each from its start: asleep is the time it had no document (waiting for
      // the next one to be read and sent, or for the writer to catch up).
      const sum = (f: (t: (typeof extractorsSched)[number]) => number) => extractorsSched.reduce((a, t) => a + f(t), 0);
      const life = sum((t) => t.lifeMs);
      console.log(
        `search.index_extraction_time asleep ${ms(life - sum((t) => t.run + t.wait))} ms, on a core ${ms(sum((t) => t.run))} ms, waiting for one ${ms(sum((t) => t.wait))} ms, of ${ms(life)} ms from their start to the end of indexing (${extractorsSched.length} workers alive at the end)`,
      );
    }
    console.log(
      `search.index_cores the server used ${(cpu / seconds).toFixed(2)} cores on average; every core of the machine busy in ${((saturated / Math.max(1, windows)) * 100).toFixed(0)}% of ${windows} looks (load average ${os.loadavg()[0]!.toFixed(1)})`,
    );
    console.log(
      `search.index_size ${(indexBytes / MiB).toFixed(1)} MiB for ${(p.textBytes / MiB).toFixed(1)} MiB of text (${(indexBytes / Math.max(1, p.textBytes)).toFixed(2)}x; FTS5 keeps a copy of the text for snippets)`,
    );
    console.log(
      `search.files_list_while_indexing p50 ${ms(quantile(listing, 0.5))} ms p99 ${ms(quantile(listing, 0.99))} ms (${listing.length} requests of GET /api/files, goal p99 < 20 ms)`,
    );
    const slowest = answers.sort((a, b) => b.ms - a.ms).slice(0, Math.max(1, Math.ceil(answers.length / 100)));
    console.log(
      `search.files_list_slowest ${slowest.map((a) => `${ms(a.ms)} ms (request thread on a core ${ms(a.run)}, waiting for one ${ms(a.wait)}; the bench's thread waiting for one ${ms(a.client)})`).join(', ')}`,
    );
    if (gc) {
      const { young, full } = gc.between(start, indexedAt);
      const idle = gc.between(idleFrom, idleUntil);
      console.log(
        `search.index_request_thread_collections young ${young}, full ${full} while indexing ${docs} documents in ${seconds.toFixed(1)} s (idle, the probe alone: ${idle.young + idle.full} in 15 s; BUN_JSC_logGC, BUN_GC_TIMER_DISABLE)`,
      );
    }
    console.log(
      `search.files_list_idle p50 ${ms(quantile(idle, 0.5))} ms p99 ${ms(quantile(idle, 0.99))} ms (${idle.length} requests before indexing, same server, same run)`,
    );
  } finally {
    await server.stop();
  }
}

/** One backfill of an uploaded data directory by `exe`, timed as in `indexing`, with GET /api/files timed every 50 ms. */
async function indexOnce(exe: string, dataDir: string, token: string, docs: number) {
  const { url, proc } = await spawnServer([exe], dataDir, {
    COFFER_GENERAL_RATE_LIMIT: '1000000000',
    LOG_LEVEL: 'warn',
    ...(process.env.SEARCH_WORKERS ? { SEARCH_WORKERS: process.env.SEARCH_WORKERS } : {}),
  });
  const server: BenchServer = { url, dataDir, pid: proc.pid, stderr: null, stop: async () => {} };
  try {
    await settle(server);
    const threads0 = threadCpu(server.pid);
    const mainCpu0 = cpuSeconds(server.pid, server.pid);
    const start = performance.now();
    await api(server, token, '/api/user/content-search-config', { method: 'PUT', body: JSON.stringify({ enabled: true }) });
    let done = false;
    const listing = (async () => {
      const out: number[] = [];
      while (!done) {
        const t = performance.now();
        await (await api(server, token, '/api/files?limit=50')).arrayBuffer();
        out.push(performance.now() - t);
        await Bun.sleep(50);
      }
      return out.sort((a, b) => a - b);
    })();
    for (;;) {
      const p = await progress(server, token);
      if (p.pending === 0 && p.indexed >= docs) break;
      if (performance.now() - start > 30 * 60_000) throw new Error(`indexing did not finish in 30 minutes (${p.indexed} of ${docs})`);
      await Bun.sleep(100);
    }
    done = true;
    const seconds = (performance.now() - start) / 1000;
    const endedAt = uptime();
    const started = [...threadCpu(server.pid)].filter(([tid]) => !threads0.has(tid));
    const [writerTid, writer] = started.reduce<(typeof started)[number] | [undefined, undefined]>(
      (w, t) => (w[1] && w[1].written >= t[1].written ? w : t),
      [undefined, undefined],
    );
    const sched = writerTid === undefined ? { run: 0, wait: 0 } : schedMs(server.pid, writerTid);
    const times = await listing;
    return {
      docsPerS: docs / seconds,
      writerAsleepMs: writer ? (endedAt - writer.startedAt) * 1000 - sched.run - sched.wait : 0,
      writerCpuMs: ((writer?.cpu ?? 0) / docs) * 1000,
      extractionCpuMs: (started.filter(([, t]) => t !== writer && t.nice > 0).reduce((a, [, t]) => a + t.cpu, 0) / docs) * 1000,
      requestCpuMs: ((cpuSeconds(server.pid, server.pid) - mainCpu0) / docs) * 1000,
      p99: quantile(times, 0.99),
      load: os.loadavg()[0]!,
    };
  } finally {
    proc.kill('SIGTERM');
    await proc.exited;
  }
}

/**
 * `--pairs N` with COFFER_BENCH_BEFORE_EXE: the mix uploaded once (by COFFER_BENCH_EXE), then N pairs of backfills of a
 * copy of that data directory, one by each build, alternating which goes first; so two builds are compared seconds
 * apart on a shared box, without the uploads and their thumbnails between them. The request thread's figure includes the
 * probe's requests (about 1 ms each) in both builds alike.
 */
async function indexingPairs(docs: number, docBytes: number, pairs: number): Promise<void> {
  const before = process.env.COFFER_BENCH_BEFORE_EXE;
  if (!before) throw new Error('--pairs needs COFFER_BENCH_BEFORE_EXE: the build to compare with');
  const after = benchExecutable();
  const seed = await startBenchServer({ COFFER_UPLOAD_RATE_LIMIT: '1000000000', LOG_LEVEL: 'warn' }, undefined, {
    executable: true,
    keepDataDir: true,
  });
  type Run = Awaited<ReturnType<typeof indexOnce>>;
  const results: { before: Run[]; after: Run[] } = { before: [], after: [] };
  try {
    let token: string;
    try {
      token = await adminToken(seed.url);
      await uploadMix(seed, token, docs, docBytes);
      await settle(seed);
    } finally {
      await seed.stop();
    }
    for (let i = 0; i < pairs; i++) {
      for (const which of i % 2 === 0 ? (['before', 'after'] as const) : (['after', 'before'] as const)) {
        const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'coffer-bench-srv-'));
        fs.cpSync(seed.dataDir, dataDir, { recursive: true });
        try {
          const r = await indexOnce(which === 'before' ? before : after, dataDir, token, docs);
          results[which].push(r);
          console.log(
            `search.pair ${i + 1} ${which}: ${r.docsPerS.toFixed(1)} documents/s, index writer asleep ${ms(r.writerAsleepMs)} ms; CPU per document: index writer ${r.writerCpuMs.toFixed(2)} ms, extraction workers ${r.extractionCpuMs.toFixed(2)}, request thread ${r.requestCpuMs.toFixed(2)} (with the probe's); p99 of GET /api/files ${ms(r.p99)} ms; load average ${r.load.toFixed(1)}`,
          );
        } finally {
          fs.rmSync(dataDir, { recursive: true, force: true });
        }
      }
    }
  } finally {
    fs.rmSync(seed.dataDir, { recursive: true, force: true });
  }
  const paired = (f: (r: Run) => number) =>
    results.after.map((a, i) => `${f(results.before[i]!).toFixed(1)} → ${f(a).toFixed(1)}`).join(', ');
  console.log(`search.pairs documents/s before → after: ${paired((r) => r.docsPerS)}`);
  console.log(`search.pairs index writer asleep ms before → after: ${paired((r) => r.writerAsleepMs)}`);
  console.log(`search.pairs p99 ms before → after: ${paired((r) => r.p99)}`);
}

/** Part 2: 100,000 documents' text seeded into the index beside the server, then queries over HTTP. */
async function queries(docs: number): Promise<void> {
  const server = await startBenchServer({ COFFER_GENERAL_RATE_LIMIT: '1000000000', LOG_LEVEL: 'warn' });
  try {
    const token = await adminToken(server.url);
    await api(server, token, '/api/user/content-search-config', { method: 'PUT', body: JSON.stringify({ enabled: true }) });
    const me = (await (await api(server, token, '/api/profile')).json()) as { id: string };
    const t0 = performance.now();
    seedIndex(path.join(server.dataDir, 'coffer.db'), me.id, docs, indexedText);
    console.log(`search.seed ${docs} documents of about 1 KiB of text in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    const cases: Array<[string, string]> = [
      ['common word', 'the'],
      ['rare word', 'zymurgy'],
      ['phrase', '"boiler pressure"'],
      ['prefix', 'inv*'],
    ];
    for (const [label, q] of cases) {
      const url = `/api/files/search?q=${encodeURIComponent(q)}&content=true&limit=50`;
      const first = (await (await api(server, token, url)).json()) as unknown[];
      // Every case matches seeded text: none found means the seeding no longer reaches the index, and the times measure nothing.
      if (first.length === 0) throw new Error(`search.query ${label}: no result over ${docs} seeded documents`);
      // Names only, interleaved with the content queries: what the box and the name search cost without the index.
      const names: number[] = [];
      const times: number[] = [];
      for (let i = 0; i < 200; i++) {
        names.push(...(await timed(1, () => api(server, token, url.replace('&content=true', '')))));
        times.push(...(await timed(1, () => api(server, token, url))));
      }
      names.sort((a, b) => a - b);
      times.sort((a, b) => a - b);
      console.log(
        `search.query ${label} (${q}): p50 ${ms(quantile(times, 0.5))} ms p99 ${ms(quantile(times, 0.99))} ms, ${first.length} results; names only p50 ${ms(quantile(names, 0.5))} ms p99 ${ms(quantile(names, 0.99))} ms (200 requests each; goal p50 < 30, p99 < 100)`,
      );
    }
  } finally {
    await server.stop();
  }
}

/**
 * `npm run bench -- search`: content search indexing speed and cost, and query latency. Sizes from
 * SEARCH_BENCH_DOCS (default 10000; 0 skips indexing), SEARCH_BENCH_DOC_KIB (100) and SEARCH_BENCH_QUERY_DOCS (100000).
 */
export async function runSearchBench(): Promise<void> {
  const docs = Number(process.env.SEARCH_BENCH_DOCS ?? 10_000);
  const docBytes = Number(process.env.SEARCH_BENCH_DOC_KIB ?? 100) * 1024;
  // --pairs N: two builds' backfills alternated over one upload (COFFER_BENCH_BEFORE_EXE), instead of one build's run.
  const pairs = flag('pairs', 0);
  if (docs > 0) await (pairs > 0 ? indexingPairs(docs, docBytes, pairs) : indexing(docs, docBytes));
  await queries(Number(process.env.SEARCH_BENCH_QUERY_DOCS ?? 100_000));
}
