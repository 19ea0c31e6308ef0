import fs from 'node:fs';
import path from 'node:path';
import { spreadTempDir } from './fixtures.ts';
import { quantile, rssMiB, startLiveServer } from './live-server.ts';
import { adminToken, curl, writeRandomGiB } from './server.ts';
import { cpuLine, cpuPerGiB, cpuTimes, type CpuTimes, medianCpu, resetPeakRss } from './transfer-cpu.ts';

const GiB = 1024 ** 3;
const FILES = Number(process.env.LIBRARY_BENCH_FILES ?? 100_000);
// LIBRARY_BENCH_PARTS=scan runs only those (scan, rescan, watch, download); the first scan always runs.
const PARTS = new Set((process.env.LIBRARY_BENCH_PARTS ?? 'scan,rescan,watch,download').split(','));
const PER_FOLDER = 1000;
const fmt = (n: number, digits = 1) => n.toFixed(digits);
const load = () => fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

/** `FILES` small files in folders of 1,000, written by "another program" (this process). */
function generateTree(root: string): void {
  for (let i = 0; i < FILES; i++) {
    const dir = path.join(root, `folder-${String(Math.floor(i / PER_FOLDER)).padStart(3, '0')}`);
    if (i % PER_FOLDER === 0) fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, `file-${i}.txt`), `file ${i} of the bench library\n`);
  }
}

/** The system calls a process makes while `during` runs, counted by `strace -c -f`. */
async function syscallsDuring(pid: number, during: () => Promise<void>): Promise<{ total: number; top: string }> {
  const out = path.join(spreadTempDir('coffer-bench-strace-'), 'strace.txt');
  const strace = Bun.spawn(['strace', '-c', '-f', '-p', String(pid), '-o', out], { stdout: 'ignore', stderr: 'ignore' });
  await Bun.sleep(500);
  await during();
  strace.kill('SIGINT');
  await strace.exited;
  const text = fs.readFileSync(out, 'utf8');
  fs.rmSync(path.dirname(out), { recursive: true, force: true });
  const rows = [...text.matchAll(/^\s*[\d.]+\s+[\d.]+\s+\d+\s+(\d+)\s+(?:\d+\s+)?(\w+)$/gm)].map((m) => ({
    calls: Number(m[1]),
    name: m[2]!,
  }));
  const total = Number(/^\s*100\.00\s+[\d.]+\s+\d+\s+(\d+)/m.exec(text)?.[1] ?? Number.NaN);
  const top = rows
    .filter((r) => r.name !== 'total')
    .sort((a, b) => b.calls - a.calls)
    .slice(0, 5)
    .map((r) => `${r.name} ${r.calls}`)
    .join(', ');
  return { total, top };
}

/**
 * `npm run bench -- libraries`: the built executable scanning a library of FILES files (files per second, the
 * server's CPU and peak RSS), a rescan with nothing changed (time, CPU, system calls), a change made by another
 * program until the API shows it (inotify), and a 1 GiB library file downloaded beside the same file from the
 * encrypted store (server CPU per GiB, alternated). LIBRARY_BENCH_FILES sets the tree's size, LIBRARY_BENCH_PARTS the parts.
 */
export async function runLibrariesBench(): Promise<void> {
  console.log(`libraries: load average before ${load()} on ${navigator.hardwareConcurrency} cores`);
  const root = spreadTempDir('coffer-bench-library-');
  const made = performance.now();
  generateTree(root);
  console.log(`libraries: generated ${FILES.toLocaleString('en-US')} files in ${fmt((performance.now() - made) / 1000)} s`);
  const server = await startLiveServer({ LIBRARY_RESCAN_MINUTES: '0', LIBRARY_WATCH: '1' });
  try {
    const token = await adminToken(server.url);
    const headers = { Cookie: `token=${token}`, 'content-type': 'application/json' };
    const api = async (method: string, route: string, body?: unknown) => {
      const res = await fetch(`${server.url}${route}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
      if (!res.ok) throw new Error(`${method} ${route}: ${res.status} ${await res.text()}`);
      return res.json() as Promise<any>;
    };
    const waitScan = async (id: string, after: string | null) => {
      for (;;) {
        const view = await api('GET', `/api/admin/libraries/${id}`);
        if (view.scanning === null && view.scannedAt !== null && view.scannedAt !== after) return view;
        // A scan now lets requests in, and each look counts the whole library: every 20 ms, that was the server's work.
        await Bun.sleep(250);
      }
    };

    // 1. The first scan.
    const idle = rssMiB(server.pid).rss;
    resetPeakRss(server.pid);
    let cpu = cpuTimes(server.pid);
    let t = performance.now();
    const { library } = await api('POST', '/api/admin/libraries', { path: root, name: 'Bench', owner: 'bench@example.test' });
    const first = await waitScan(library.id, null);
    let seconds = (performance.now() - t) / 1000;
    let used = cpuTimes(server.pid);
    if (first.files !== FILES) throw new Error(`the scan found ${first.files} files, not ${FILES}`);
    console.log(
      `libraries.scan_${FILES / 1000}k_files ${fmt(FILES / seconds, 0)} files/s (${fmt(seconds)} s; server CPU ${fmt(used.user - cpu.user)} user + ${fmt(used.system - cpu.system)} system s, ${fmt(((used.user - cpu.user + used.system - cpu.system) * 1e6) / FILES)} µs a file; peak RSS ${fmt(rssMiB(server.pid).peak, 0)} MiB, ${fmt(idle, 0)} MiB before the scan)`,
    );

    // 2. A rescan with nothing changed: timed alone, then again under strace for its system calls.
    if (PARTS.has('rescan')) {
      cpu = cpuTimes(server.pid);
      t = performance.now();
      await api('POST', `/api/admin/libraries/${library.id}/rescan`);
      const again = await waitScan(library.id, first.scannedAt);
      seconds = (performance.now() - t) / 1000;
      used = cpuTimes(server.pid);
      let last = again.scannedAt;
      const calls = await syscallsDuring(server.pid, async () => {
        await api('POST', `/api/admin/libraries/${library.id}/rescan`);
        last = (await waitScan(library.id, last)).scannedAt;
      });
      console.log(
        `libraries.rescan_unchanged_${FILES / 1000}k ${fmt(seconds, 2)} s (server CPU ${fmt(used.user - cpu.user + used.system - cpu.system, 2)} s); system calls ${calls.total.toLocaleString('en-US')} = ${fmt(calls.total / FILES, 2)} a file (top: ${calls.top})`,
      );
    }

    // 3. A change by another program until the API shows it (the watch; no periodic rescan runs).
    if (PARTS.has('watch')) {
      const delays: number[] = [];
      for (let i = 0; i < 7; i++) {
        const name = `arrived-${i}-${Date.now()}.txt`;
        t = performance.now();
        fs.writeFileSync(path.join(root, `folder-${String((i * 13) % Math.ceil(FILES / PER_FOLDER)).padStart(3, '0')}`, name), 'new');
        for (;;) {
          const hits = await api('GET', `/api/files/search?q=${name}`);
          if (hits.length > 0) break;
          if (performance.now() - t > 30_000) throw new Error('a new file did not show within 30 s');
          await Bun.sleep(10);
        }
        delays.push(performance.now() - t);
      }
      console.log(
        `libraries.change_visible_ms median ${fmt(quantile(delays, 0.5), 0)}, max ${fmt(Math.max(...delays), 0)} (7 new files in a ${FILES / 1000}k-file library, polled through search; goal < 2000; runs ${delays.map((d) => fmt(d, 0)).join(', ')})`,
      );
    }

    // 4. 1 GiB from the library (read as it is) against the same bytes from the encrypted store, alternated.
    if (PARTS.has('download')) {
      const big = path.join(root, 'big.bin');
      writeRandomGiB(big);
      let bigItem: { id: string } | undefined;
      for (t = performance.now(); !bigItem; await Bun.sleep(50)) {
        bigItem = (await api('GET', '/api/files/search?q=big.bin'))[0];
        if (performance.now() - t > 60_000) throw new Error('big.bin did not show within 60 s');
      }
      const up = curl(['-H', `Cookie: token=${token}`, '-F', `file=@${big}`, `${server.url}/api/files/upload`]);
      if (up.status !== 200) throw new Error(`upload to the store: ${up.status} ${up.body}`);
      const stored = JSON.parse(up.body) as { id: string };
      const libraryCpu: CpuTimes[] = [];
      const storeCpu: CpuTimes[] = [];
      for (let i = 0; i < 3; i++) {
        for (const [id, runs] of [
          [bigItem.id, libraryCpu],
          [stored.id, storeCpu],
        ] as const) {
          const before = cpuTimes(server.pid);
          const down = curl(['-H', `Cookie: token=${token}`, '-o', '/dev/null', `${server.url}/api/files/${id}/download`]);
          if (down.status !== 200 || down.bytes !== GiB) throw new Error(`download ${id}: ${down.status}, ${down.bytes} bytes`);
          runs.push(cpuPerGiB(server.pid, before, GiB));
        }
      }
      console.log(`libraries.download_1GiB_server_cpu library ${cpuLine(libraryCpu)}`);
      console.log(
        `libraries.download_1GiB_server_cpu encrypted store ${cpuLine(storeCpu)}; library / store ${fmt(medianCpu(libraryCpu) / medianCpu(storeCpu), 2)}`,
      );
    }
  } finally {
    await server.stop();
    fs.rmSync(root, { recursive: true, force: true });
    console.log(`libraries: load average after ${load()}`);
  }
}
