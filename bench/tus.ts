import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import { Upload } from 'tus-js-client';
import { ServerProcess } from '../test/helpers/server-process.ts';
import { tcpProxy } from '../test/helpers/tcp-proxy.ts';
import { adminToken, benchExecutable, spawnServer } from './server.ts';
import { compileBench } from './compile.ts';
import { median } from './streams.ts';
import {
  cpuLine,
  cpuPerGiB,
  cpuTimes,
  jsThreadTimes,
  peakRssMiB,
  resetPeakRss,
  settleDisk,
  totalCpu,
  type CpuTimes,
} from './transfer-cpu.ts';
import { flag } from './flags.ts';

const GiB = 1024 ** 3;
const MiB = 1024 ** 2;

/** The PATCH size: 8 MiB (`--chunk-mib N` for another; the web app sends 50 MiB). */
const CHUNK = flag('chunk-mib', 8) * MiB;

const fmt = (n: number, digits = 1) => n.toFixed(digits);
const portOf = (url: string) => Number(new URL(url).port);

/** POST /api/files/upload (or `at`) of `file` by curl (the fastest client there is here); MiB/s, and curl's CPU s/GiB. */
async function multipartRun(
  url: string,
  token: string,
  file: string,
  at = '/api/files/upload',
): Promise<{ mibs: number; clientCpu: number }> {
  const proc = Bun.spawn(
    [
      'curl',
      '-s',
      '-o',
      '/dev/null',
      '-w',
      '%{time_total} %{http_code}',
      '-H',
      `Cookie: token=${token}`,
      '-F',
      `file=@${file};type=application/octet-stream`,
      `${url}${at}`,
    ],
    { stdout: 'pipe' },
  );
  const [seconds, status] = (await new Response(proc.stdout).text()).trim().split(' ').map(Number);
  await proc.exited;
  if (status !== 200) throw new Error(`multipart upload answered ${status}`);
  const used = proc.resourceUsage()!.cpuTime;
  return { mibs: GiB / MiB / seconds!, clientCpu: Number(used.user + used.system) / 1e6 };
}

/** One upload with tus-js-client in CHUNK-sized PATCHes; resolves with the created file's id. */
export function tusUpload(
  url: string,
  token: string,
  data: Buffer,
  opts: { retryDelays?: number[]; onAccepted?: (bytes: number) => void; patchMs?: number[]; endpoint?: string } = {},
): Promise<string> {
  let last = performance.now();
  return new Promise((resolve, reject) => {
    const upload = new Upload(data, {
      endpoint: opts.endpoint ?? `${url}/api/files/tus`,
      chunkSize: CHUNK,
      retryDelays: opts.retryDelays ?? null,
      metadata: { filename: 'one-gib.bin', filetype: 'application/octet-stream' },
      headers: { cookie: `token=${token}` },
      onChunkComplete: (_size, accepted) => {
        const now = performance.now();
        opts.patchMs?.push(now - last);
        last = now;
        opts.onAccepted?.(accepted);
      },
      onError: reject,
      onSuccess: ({ lastResponse }) => resolve(lastResponse.getHeader('Upload-Item-Id') ?? ''),
    });
    upload.start();
  });
}

async function sha256Of(url: string, token: string, id: string): Promise<string> {
  const res = await fetch(`${url}/api/files/${id}/download`, { headers: { cookie: `token=${token}` } });
  const hash = createHash('sha256');
  for await (const chunk of res.body!) hash.update(chunk);
  return hash.digest('hex');
}

/** A tus upload by a bare `fetch` loop (POST, then PATCHes of CHUNK bytes, each sent as one buffer), to weigh the client. */
async function fetchTusUpload(endpoint: string, data: Buffer, patchMs: number[]): Promise<void> {
  const tus = { 'Tus-Resumable': '1.0.0' };
  const made = await fetch(endpoint, { method: 'POST', headers: { ...tus, 'Upload-Length': String(data.byteLength) } });
  if (made.status !== 201) throw new Error(`tus POST answered ${made.status}`);
  const at = new URL(made.headers.get('location')!, endpoint).href;
  let last = performance.now();
  for (let offset = 0; offset < data.byteLength; offset += CHUNK) {
    const res = await fetch(at, {
      method: 'PATCH',
      headers: { ...tus, 'Upload-Offset': String(offset), 'Content-Type': 'application/offset+octet-stream' },
      body: data.subarray(offset, offset + CHUNK),
    });
    if (res.status !== 204) throw new Error(`tus PATCH answered ${res.status}`);
    const now = performance.now();
    patchMs.push(now - last);
    last = now;
  }
}

/** Builds bench/bare-tus.ts as Coffer is built (`bun build --compile`) and starts it on a data dir of its own. */
async function startBareTus(dir: string): Promise<{ url: string; pid: number; stop(): Promise<void> }> {
  const exe = compileBench('bare-tus.ts', dir);
  const { url, proc } = await spawnServer([exe], path.join(dir, 'bare-data'), {});
  return {
    url,
    pid: proc.pid,
    async stop() {
      proc.kill('SIGTERM');
      await proc.exited;
    },
  };
}

/** One server's side of the comparison: where its tus and multipart uploads go, and their figures. */
interface Side {
  url: string;
  pid: number;
  token: string;
  endpoint: string;
  uploadAt: string;
  tus: number[];
  multipart: number[];
  tusCpu: CpuTimes[];
  multipartCpu: CpuTimes[];
  /** The JavaScript thread's share of the server's CPU (the request thread), s/GiB. */
  tusJs: number[];
  multipartJs: number[];
  tusPeaks: number[];
  multipartPeaks: number[];
  /** Each tus upload's PATCH time over the median summed, and its median PATCH. */
  patchWaits: number[];
  patchMedians: number[];
  /** The client's CPU s/GiB: tus-js-client's (this process), curl's. */
  tusClientCpu: number[];
  multipartClientCpu: number[];
}

const sideOf = (url: string, pid: number, token: string, endpoint: string, uploadAt: string): Side => ({
  url,
  pid,
  token,
  endpoint,
  uploadAt,
  tus: [],
  multipart: [],
  tusCpu: [],
  multipartCpu: [],
  tusJs: [],
  multipartJs: [],
  tusPeaks: [],
  multipartPeaks: [],
  patchWaits: [],
  patchMedians: [],
  tusClientCpu: [],
  multipartClientCpu: [],
});

const clientSeconds = (since: NodeJS.CpuUsage) => {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1e6;
};

/**
 * `npm run bench -- tus` (issue 17): 1 GiB through tus in 8 MiB chunks (`--chunk-mib N`) against the plain
 * multipart upload of the same file in the same run (the built executable, `--pairs N` pairs, alternating which goes first),
 * each pair's ratio of MiB/s and of server CPU per GiB and their medians (the CPU ratio is the figure the
 * machine's load moves least), the time tus PATCHes take over their median summed per GiB (what they waited for),
 * the server's peak RSS during the tus uploads, and the bytes a client sends
 * in all when the server is killed (SIGKILL) at 60% of an upload and restarted, counted on the wire by a
 * proxy in front of the server. COFFER_BENCH_EXE: that executable, not rebuilt.
 * Beside each pair, the same two uploads with the same clients to the protocol's floor (bench/bare-tus.ts,
 * compiled: sealing, writes and syncs as Coffer's, nothing else), and one tus upload to it by a bare `fetch`
 * loop, so what tus costs with this client, what tus-js-client costs, and what Coffer adds are told apart.
 * With COFFER_BENCH_BEFORE_EXE=<path> that build takes its turn in every pair too (before, then after, in one order
 * and then the reverse) and `tus.before_after` gives both builds' figures pair by pair.
 */
export async function runTusBench(): Promise<void> {
  // How many tus and multipart uploads, alternating which goes first.
  const pairs = flag('pairs', 7);
  const binary = benchExecutable();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'coffer-tus-bench-'));
  // The client's copy lives in memory, so reading it does not compete with the server's disk writes.
  const clientDir = fs.existsSync('/dev/shm') ? fs.mkdtempSync('/dev/shm/coffer-tus-bench-') : dir;
  const file = path.join(clientDir, 'one-gib.bin');
  const data = randomBytes(GiB);
  fs.writeFileSync(file, data);
  const expected = createHash('sha256').update(data).digest('hex');

  const server = new ServerProcess(path.join(dir, 'speed'), binary, { LOG_LEVEL: 'warn' });
  const bare = await startBareTus(dir);
  const beforeExe = process.env.COFFER_BENCH_BEFORE_EXE;
  const beforeServer = beforeExe ? new ServerProcess(path.join(dir, 'before'), beforeExe, { LOG_LEVEL: 'warn' }) : null;
  try {
    await server.start();
    const pid = server.proc!.pid;
    const token = await adminToken(server.url);
    const coffer = sideOf(server.url, pid, token, `${server.url}/api/files/tus`, '/api/files/upload');
    const floor = sideOf(bare.url, bare.pid, '', `${bare.url}/tus`, '/upload');
    let before: Side | null = null;
    if (beforeServer) {
      await beforeServer.start();
      const url = beforeServer.url;
      before = sideOf(url, beforeServer.proc!.pid, await adminToken(url), `${url}/api/files/tus`, '/api/files/upload');
    }
    // Warm-up, untimed, one of each: the first 1 GiB upload after the start was 40% slower whichever kind
    // it was (the route compiled, the heap grown into memory this VM had not handed the guest before).
    for (const side of before ? [before, coffer, floor] : [coffer, floor]) {
      await tusUpload(side.url, side.token, data, { endpoint: side.endpoint });
      await multipartRun(side.url, side.token, file, side.uploadAt);
    }
    await fetchTusUpload(floor.endpoint, data, []);
    const fetchTus: number[] = [];
    const fetchTusCpu: CpuTimes[] = [];
    const fetchClientCpu: number[] = [];
    const fetchWaits: number[] = [];
    const fetchMedians: number[] = [];
    let lastId = '';
    let dropped = false;
    const load: number[] = [os.loadavg()[0]!];
    const runTus = async (side: Side) => {
      dropped = settleDisk();
      resetPeakRss(side.pid);
      const t = performance.now();
      const before = cpuTimes(side.pid);
      const beforeJs = jsThreadTimes(side.pid);
      const client = process.cpuUsage();
      const patchMs: number[] = [];
      const id = await tusUpload(side.url, side.token, data, { patchMs, endpoint: side.endpoint });
      side.tusClientCpu.push(clientSeconds(client));
      if (side === coffer) lastId = id;
      const typical = median(patchMs);
      side.patchMedians.push(typical);
      side.patchWaits.push(patchMs.reduce((sum, ms) => sum + Math.max(0, ms - typical), 0));
      side.tusJs.push(totalCpu(cpuPerGiB(side.pid, beforeJs, GiB, jsThreadTimes(side.pid))));
      side.tusCpu.push(cpuPerGiB(side.pid, before, GiB));
      side.tus.push(GiB / MiB / ((performance.now() - t) / 1000));
      side.tusPeaks.push(peakRssMiB(side.pid));
    };
    const runMultipart = async (side: Side) => {
      settleDisk();
      resetPeakRss(side.pid);
      const before = cpuTimes(side.pid);
      const beforeJs = jsThreadTimes(side.pid);
      const { mibs, clientCpu } = await multipartRun(side.url, side.token, file, side.uploadAt);
      side.multipartJs.push(totalCpu(cpuPerGiB(side.pid, beforeJs, GiB, jsThreadTimes(side.pid))));
      side.multipart.push(mibs);
      side.multipartClientCpu.push(clientCpu);
      side.multipartCpu.push(cpuPerGiB(side.pid, before, GiB));
      side.multipartPeaks.push(peakRssMiB(side.pid));
    };
    const runFetchTus = async () => {
      settleDisk();
      const t = performance.now();
      const before = cpuTimes(floor.pid);
      const client = process.cpuUsage();
      const patchMs: number[] = [];
      await fetchTusUpload(floor.endpoint, data, patchMs);
      fetchClientCpu.push(clientSeconds(client));
      const typical = median(patchMs);
      fetchMedians.push(typical);
      fetchWaits.push(patchMs.reduce((sum, ms) => sum + Math.max(0, ms - typical), 0));
      fetchTusCpu.push(cpuPerGiB(floor.pid, before, GiB));
      fetchTus.push(GiB / MiB / ((performance.now() - t) / 1000));
    };
    for (let i = 0; i < pairs; i++) {
      // Coffer's pair (the build before's first, when given), then the floor's, in one order and then the reverse,
      // each tus run beside its multipart run.
      const order = [() => runTus(coffer), () => runMultipart(coffer), () => runTus(floor), () => runMultipart(floor), runFetchTus];
      if (before)
        order.unshift(
          () => runTus(before),
          () => runMultipart(before),
        );
      for (const run of i % 2 === 0 ? order : order.reverse()) await run();
      load.push(os.loadavg()[0]!);
    }
    if ((await sha256Of(server.url, token, lastId)) !== expected)
      throw new Error('the file uploaded through tus differs from the one sent');
    const runs = (xs: number[], digits = 0) => xs.map((x) => fmt(x, digits)).join(', ');
    const pct = (xs: number[], of: number[]) => xs.map((x, i) => (x / of[i]!) * 100);
    const cpuPct = (xs: CpuTimes[], of: CpuTimes[]) => xs.map((c, i) => (100 * totalCpu(c)) / totalCpu(of[i]!));
    // Each tus run against the multipart run beside it: the disk's speed drifts by 30% between pairs.
    const paired = pct(coffer.tus, coffer.multipart);
    const cpuPaired = cpuPct(coffer.tusCpu, coffer.multipartCpu);
    const loads = `load average ${fmt(Math.min(...load))}-${fmt(Math.max(...load))} on ${os.cpus().length} cores`;
    console.log(
      `tus.upload_1GiB_${CHUNK / MiB}MiB_chunks_pct_of_multipart median ${fmt(median(paired))} (pairs ${runs(paired)}; goal >= 95); ` +
        `MiB/s tus median ${fmt(median(coffer.tus), 0)} (runs ${runs(coffer.tus)}), multipart median ${fmt(median(coffer.multipart), 0)} (runs ${runs(coffer.multipart)}); ` +
        `${dropped ? 'page cache dropped' : 'disk synced'} before each; ${loads} (after each pair: ${runs(load.slice(1), 1)})`,
    );
    console.log(
      `tus.upload_1GiB_server_cpu_pct_of_multipart median ${fmt(median(cpuPaired))} (pairs ${runs(cpuPaired)}; goal <= 110); ` +
        `s/GiB tus ${runs(coffer.tusCpu.map(totalCpu), 2)}, multipart ${runs(coffer.multipartCpu.map(totalCpu), 2)}`,
    );
    console.log(
      `tus.patch_ms_over_the_median_per_GiB median ${fmt(median(coffer.patchWaits), 0)} (runs ${runs(coffer.patchWaits)}); ` +
        `a PATCH's median ${runs(coffer.patchMedians, 1)} ms; ${GiB / CHUNK} PATCHes per GiB`,
    );
    console.log(
      `tus.upload_1GiB_server_cpu ${cpuLine(coffer.tusCpu)}  api.multipart_upload_1GiB_server_cpu ${cpuLine(coffer.multipartCpu)}`,
    );
    console.log(
      `tus.server_peak_rss_during_1GiB_upload_MiB max ${fmt(Math.max(...coffer.tusPeaks))} median ${fmt(median(coffer.tusPeaks))} (runs ${runs(coffer.tusPeaks, 1)}; dist/coffer; goal < 130); ` +
        `the multipart uploads beside them: max ${fmt(Math.max(...coffer.multipartPeaks))} median ${fmt(median(coffer.multipartPeaks))} (runs ${runs(coffer.multipartPeaks, 1)})`,
    );
    const barePaired = pct(floor.tus, floor.multipart);
    console.log(
      `tus.floor_upload_1GiB_pct_of_floor_multipart median ${fmt(median(barePaired))} (pairs ${runs(barePaired)}; bench/bare-tus.ts, the same clients); ` +
        `MiB/s bare tus median ${fmt(median(floor.tus), 0)} (runs ${runs(floor.tus)}), bare multipart median ${fmt(median(floor.multipart), 0)} (runs ${runs(floor.multipart)})`,
    );
    console.log(
      `tus.floor_server_cpu_pct_of_floor_multipart median ${fmt(median(cpuPct(floor.tusCpu, floor.multipartCpu)))} (pairs ${runs(cpuPct(floor.tusCpu, floor.multipartCpu))}); ` +
        `s/GiB bare tus ${runs(floor.tusCpu.map(totalCpu), 2)}, bare multipart ${runs(floor.multipartCpu.map(totalCpu), 2)}; ` +
        `PATCH time over the median ${runs(floor.patchWaits)} ms per GiB, a PATCH's median ${runs(floor.patchMedians, 1)} ms`,
    );
    const tusOfFloor = pct(coffer.tus, floor.tus);
    const multipartOfFloor = pct(coffer.multipart, floor.multipart);
    console.log(
      `tus.coffer_pct_of_floor MiB/s: tus median ${fmt(median(tusOfFloor))} (pairs ${runs(tusOfFloor)}), multipart median ${fmt(median(multipartOfFloor))} (pairs ${runs(multipartOfFloor)}); ` +
        `server CPU: tus median ${fmt(median(cpuPct(coffer.tusCpu, floor.tusCpu)))}, multipart median ${fmt(median(cpuPct(coffer.multipartCpu, floor.multipartCpu)))}`,
    );
    const jsOverFloor = coffer.tusJs.map((c, i) => c - floor.tusJs[i]!);
    console.log(
      `tus.js_thread_cpu_s_per_GiB (the request thread) Coffer: tus median ${fmt(median(coffer.tusJs), 2)} (runs ${runs(coffer.tusJs, 2)}), ` +
        `multipart median ${fmt(median(coffer.multipartJs), 2)} (runs ${runs(coffer.multipartJs, 2)}); floor: tus median ${fmt(median(floor.tusJs), 2)} ` +
        `(runs ${runs(floor.tusJs, 2)}), multipart median ${fmt(median(floor.multipartJs), 2)} (runs ${runs(floor.multipartJs, 2)}); ` +
        `Coffer's tus over the floor's, pair by pair: ${jsOverFloor.map((d) => (d >= 0 ? '+' : '') + fmt(d, 2)).join(', ')}`,
    );
    const clientCpu = [...coffer.tusClientCpu, ...floor.tusClientCpu];
    const curlCpu = [...coffer.multipartClientCpu, ...floor.multipartClientCpu];
    const fetchPaired = pct(fetchTus, floor.multipart);
    console.log(
      `tus.client_cpu_s_per_GiB tus-js-client median ${fmt(median(clientCpu), 2)} (runs ${runs(clientCpu, 2)}), curl -F median ${fmt(median(curlCpu), 2)} (runs ${runs(curlCpu, 2)}), ` +
        `a fetch loop median ${fmt(median(fetchClientCpu), 2)} (runs ${runs(fetchClientCpu, 2)})`,
    );
    console.log(
      `tus.floor_by_a_fetch_loop_pct_of_floor_multipart median ${fmt(median(fetchPaired))} (pairs ${runs(fetchPaired)}); MiB/s ${runs(fetchTus)}; ` +
        `bare server CPU ${runs(fetchTusCpu.map(totalCpu), 2)} s/GiB; PATCH time over the median ${runs(fetchWaits)} ms per GiB, a PATCH's median ${runs(fetchMedians, 1)} ms`,
    );
    if (before) {
      const beforeRatio = pct(before.tus, before.multipart);
      const lower = coffer.tusJs.filter((c, i) => c < before.tusJs[i]!).length;
      console.log(
        `tus.before_after (COFFER_BENCH_BEFORE_EXE, then COFFER_BENCH_EXE, in each pair) request thread s/GiB: tus before ${runs(before.tusJs, 2)}, ` +
          `after ${runs(coffer.tusJs, 2)} (after lower in ${lower} of ${pairs}); multipart before ${runs(before.multipartJs, 2)}, after ${runs(coffer.multipartJs, 2)}; ` +
          `tus % of multipart MiB/s before median ${fmt(median(beforeRatio))} (pairs ${runs(beforeRatio)}), after median ${fmt(median(paired))}; ` +
          `tus MiB/s before ${runs(before.tus)}, after ${runs(coffer.tus)}; multipart MiB/s before ${runs(before.multipart)}, after ${runs(coffer.multipart)}; ` +
          `tus peak RSS MiB before ${runs(before.tusPeaks, 1)}, after ${runs(coffer.tusPeaks, 1)}`,
      );
    }
  } finally {
    await server.stop();
    await beforeServer?.stop();
    await bare.stop();
  }

  // Resume overhead: the server is killed at 60% of the upload and started again; the client retries on its own.
  const killed = new ServerProcess(path.join(dir, 'resume'), binary, { LOG_LEVEL: 'warn' });
  try {
    await killed.start();
    const token = await adminToken(killed.url);
    const proxy = await tcpProxy(portOf(killed.url));
    const via = `http://127.0.0.1:${proxy.port}`;
    let killedAt = 0;
    let acknowledged = 0;
    let restart: Promise<void> | null = null;
    const watch = setInterval(() => {
      if (restart || proxy.sent < 0.6 * GiB) return;
      killedAt = proxy.sent;
      restart = (async () => {
        await killed.kill();
        await killed.start();
        proxy.target = portOf(killed.url);
      })();
    }, 2);
    let id: string;
    try {
      id = await tusUpload(via, token, data, {
        retryDelays: [0, 250, 500, 1000, 1000, 2000, 2000, 4000, 4000, 8000],
        onAccepted: (bytes) => {
          acknowledged = bytes;
        },
      });
    } finally {
      clearInterval(watch);
      proxy.close();
    }
    if (!restart) throw new Error('the upload ended before the server was killed');
    if ((await sha256Of(killed.url, token, id)) !== expected) throw new Error('the resumed file differs from the one sent');
    console.log(
      `tus.resume_after_kill_at_60pct total_sent_over_file_size ${fmt(proxy.sent / GiB, 4)} (goal <= 1.05; ${fmt(proxy.sent / MiB, 1)} MiB on the wire, ` +
        `headers included; killed after ${fmt(killedAt / MiB, 1)} MiB; the file is byte-exact; ${fmt(acknowledged / MiB, 0)} MiB acknowledged in all)`,
    );
  } finally {
    await killed.stop();
    fs.rmSync(dir, { recursive: true, force: true });
    fs.rmSync(clientDir, { recursive: true, force: true });
  }
}
