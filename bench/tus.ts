import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import { Upload } from 'tus-js-client';
import { ServerProcess } from '../test/helpers/server-process.ts';
import { tcpProxy } from '../test/helpers/tcp-proxy.ts';
import { adminToken, benchExecutable } from './server.ts';
import { median } from './streams.ts';
import { cpuLine, cpuPerGiB, cpuTimes, peakRssMiB, resetPeakRss, settleDisk, totalCpu, type CpuTimes } from './transfer-cpu.ts';
import { flag } from './flags.ts';

const GiB = 1024 ** 3;
const MiB = 1024 ** 2;

/** `--<name> N`, a whole number of at least 1, or `fallback`. */
/** The PATCH size: 8 MiB (`--chunk-mib N` for another; the web app sends 50 MiB). */
const CHUNK = flag('chunk-mib', 8) * MiB;

const fmt = (n: number, digits = 1) => n.toFixed(digits);
const portOf = (url: string) => Number(new URL(url).port);

/** POST /api/files/upload of `file` by curl (the fastest client there is here); MiB/s. */
async function multipartRun(url: string, token: string, file: string): Promise<number> {
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
      `${url}/api/files/upload`,
    ],
    { stdout: 'pipe' },
  );
  const [seconds, status] = (await new Response(proc.stdout).text()).trim().split(' ').map(Number);
  await proc.exited;
  if (status !== 200) throw new Error(`multipart upload answered ${status}`);
  return GiB / MiB / seconds!;
}

/** One upload with tus-js-client in CHUNK-sized PATCHes; resolves with the created file's id. */
export function tusUpload(
  url: string,
  token: string,
  data: Buffer,
  opts: { retryDelays?: number[]; onAccepted?: (bytes: number) => void; patchMs?: number[] } = {},
): Promise<string> {
  let last = performance.now();
  return new Promise((resolve, reject) => {
    const upload = new Upload(data, {
      endpoint: `${url}/api/files/tus`,
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

/**
 * `npm run bench -- tus` (issue 17): 1 GiB through tus in 8 MiB chunks (`--chunk-mib N`) against the plain
 * multipart upload of the same file in the same run (the built executable, `--pairs N` pairs, alternating which goes first),
 * each pair's ratio of MiB/s and of server CPU per GiB and their medians (the CPU ratio is the figure the
 * machine's load moves least), the time tus PATCHes take over their median summed per GiB (what they waited for),
 * the server's peak RSS during the tus uploads, and the bytes a client sends
 * in all when the server is killed (SIGKILL) at 60% of an upload and restarted, counted on the wire by a
 * proxy in front of the server. COFFER_BENCH_EXE: that executable, not rebuilt.
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
  try {
    await server.start();
    const pid = server.proc!.pid;
    const token = await adminToken(server.url);
    // Warm-up, untimed, one of each: the first 1 GiB upload after the start was 40% slower whichever kind
    // it was (the route compiled, the heap grown into memory this VM had not handed the guest before).
    await tusUpload(server.url, token, data);
    await multipartRun(server.url, token, file);
    const multipart: number[] = [];
    const tus: number[] = [];
    const tusPeaks: number[] = [];
    const multipartPeaks: number[] = [];
    const tusCpu: CpuTimes[] = [];
    // Each PATCH's time from the answer before it to its own; the time over the median is what a PATCH waited.
    const patchWaits: number[] = [];
    const patchMedians: number[] = [];
    const multipartCpu: CpuTimes[] = [];
    let lastId = '';
    let dropped = false;
    const load: number[] = [os.loadavg()[0]!];
    for (let i = 0; i < pairs; i++) {
      const tusFirst = i % 2 === 0;
      const runTus = async () => {
        dropped = settleDisk();
        resetPeakRss(pid);
        const t = performance.now();
        const before = cpuTimes(pid);
        const patchMs: number[] = [];
        lastId = await tusUpload(server.url, token, data, { patchMs });
        const typical = median(patchMs);
        patchMedians.push(typical);
        patchWaits.push(patchMs.reduce((sum, ms) => sum + Math.max(0, ms - typical), 0));
        tusCpu.push(cpuPerGiB(pid, before, GiB));
        tus.push(GiB / MiB / ((performance.now() - t) / 1000));
        tusPeaks.push(peakRssMiB(pid));
      };
      if (tusFirst) await runTus();
      settleDisk();
      resetPeakRss(pid);
      const before = cpuTimes(pid);
      multipart.push(await multipartRun(server.url, token, file));
      multipartCpu.push(cpuPerGiB(pid, before, GiB));
      multipartPeaks.push(peakRssMiB(pid));
      if (!tusFirst) await runTus();
      load.push(os.loadavg()[0]!);
    }
    if ((await sha256Of(server.url, token, lastId)) !== expected)
      throw new Error('the file uploaded through tus differs from the one sent');
    const runs = (xs: number[], digits = 0) => xs.map((x) => fmt(x, digits)).join(', ');
    // Each tus run against the multipart run beside it: the disk's speed drifts by 30% between pairs.
    const paired = tus.map((x, i) => (x / multipart[i]!) * 100);
    const cpuPaired = tusCpu.map((c, i) => (100 * totalCpu(c)) / totalCpu(multipartCpu[i]!));
    console.log(
      `tus.upload_1GiB_${CHUNK / MiB}MiB_chunks_pct_of_multipart median ${fmt(median(paired))} (pairs ${runs(paired)}; goal >= 95); ` +
        `MiB/s tus median ${fmt(median(tus), 0)} (runs ${runs(tus)}), multipart median ${fmt(median(multipart), 0)} (runs ${runs(multipart)}); ` +
        `${dropped ? 'page cache dropped' : 'disk synced'} before each; load average ${fmt(Math.min(...load))}-${fmt(Math.max(...load))} on ${os.cpus().length} cores`,
    );
    console.log(
      `tus.upload_1GiB_server_cpu_pct_of_multipart median ${fmt(median(cpuPaired))} (pairs ${runs(cpuPaired)}; goal <= 110); ` +
        `s/GiB tus ${runs(tusCpu.map(totalCpu), 2)}, multipart ${runs(multipartCpu.map(totalCpu), 2)}`,
    );
    console.log(
      `tus.patch_ms_over_the_median_per_GiB median ${fmt(median(patchWaits), 0)} (runs ${runs(patchWaits)}); ` +
        `a PATCH's median ${runs(patchMedians, 1)} ms; ${GiB / CHUNK} PATCHes per GiB`,
    );
    console.log(`tus.upload_1GiB_server_cpu ${cpuLine(tusCpu)}  api.multipart_upload_1GiB_server_cpu ${cpuLine(multipartCpu)}`);
    console.log(
      `tus.server_peak_rss_during_1GiB_upload_MiB max ${fmt(Math.max(...tusPeaks))} median ${fmt(median(tusPeaks))} (runs ${runs(tusPeaks, 1)}; dist/coffer; goal < 130); ` +
        `the multipart uploads beside them: max ${fmt(Math.max(...multipartPeaks))} median ${fmt(median(multipartPeaks))} (runs ${runs(multipartPeaks, 1)})`,
    );
  } finally {
    await server.stop();
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
