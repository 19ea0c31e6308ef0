import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import { ServerProcess } from '../test/helpers/server-process.ts';
import { adminToken, benchExecutable } from './server.ts';
import { cpuLine, cpuPerGiB, cpuTimes, type CpuTimes, medianCpu, peakRssMiB, resetPeakRss, settleDisk } from './transfer-cpu.ts';
import { tusUpload } from './tus.ts';

const GiB = 1024 ** 3;
const MiB = 1024 ** 2;
const CHUNK = 10 * MiB;
/** Alternations of a chunked and a tus upload (NC_CHUNKING_BENCH_RUNS). */
const RUNS = Number(process.env.NC_CHUNKING_BENCH_RUNS ?? 5);

const fmt = (n: number, digits = 1) => n.toFixed(digits);

/** An app password and the login's id (cloud/user's), as a Nextcloud client signs in. */
async function nextcloudLogin(url: string, token: string): Promise<{ id: string; authorization: string }> {
  const res = await fetch(`${url}/api/user/app-passwords`, {
    method: 'POST',
    headers: { cookie: `token=${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'bench' }),
  });
  const { password } = (await res.json()) as { password: string };
  const authorization = `Basic ${Buffer.from(`bench@example.test:${password}`).toString('base64')}`;
  const user = await fetch(`${url}/ocs/v2.php/cloud/user?format=json`, { headers: { authorization } });
  return { id: ((await user.json()) as { ocs: { data: { id: string } } }).ocs.data.id, authorization };
}

type Login = { id: string; authorization: string };

async function davCall(login: Login, method: string, target: string, extra: Record<string, string> = {}, body?: Uint8Array) {
  const res = await fetch(target, { method, headers: { authorization: login.authorization, ...extra }, body });
  if (res.status >= 300) throw new Error(`${method} ${target}: ${res.status} ${await res.text()}`);
}

/** The Nextcloud clients' chunked upload up to its MOVE: MKCOL, then 10 MiB chunks in order. */
async function sendChunks(url: string, login: Login, data: Buffer, name: string) {
  const folder = `${url}/remote.php/dav/uploads/${login.id}/${name}`;
  const destination = `${url}/remote.php/dav/files/${login.id}/${name}.bin`;
  await davCall(login, 'MKCOL', folder, { 'oc-total-length': String(data.length), destination });
  for (let at = 0, n = 1; at < data.length; at += CHUNK, n++)
    await davCall(login, 'PUT', `${folder}/${n}`, { destination }, data.subarray(at, at + CHUNK));
}

/** The final MOVE of .file with OC-Checksum, as the desktop client sends it (its chunk PUTs carry no checksum). */
async function moveChunks(url: string, login: Login, name: string, sha1: string) {
  const folder = `${url}/remote.php/dav/uploads/${login.id}/${name}`;
  const destination = `${url}/remote.php/dav/files/${login.id}/${name}.bin`;
  await davCall(login, 'MOVE', `${folder}/.file`, { destination, 'oc-checksum': `SHA1:${sha1}`, 'x-oc-mtime': '1700000000' });
}

async function chunkedUpload(url: string, login: Login, data: Buffer, name: string, sha1: string) {
  await sendChunks(url, login, data, name);
  await moveChunks(url, login, name, sha1);
}

/** Current RSS of a process in MiB. */
function rssMiB(pid: number): number {
  return Number(/VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;
}

/** This process's CPU seconds for the SHA1 of `data` (Bun.CryptoHasher, as the server hashes): the checksum's own cost. */
function sha1CpuPerGiB(data: Buffer): number {
  const before = cpuTimes('self');
  const hash = new Bun.CryptoHasher('sha1');
  for (let at = 0; at < data.length; at += 128 * 1024) hash.update(data.subarray(at, at + 128 * 1024));
  hash.digest();
  const c = cpuPerGiB('self', before, data.length);
  return c.user + c.system;
}

/**
 * `npm run bench -- nc-chunking` (issue 42): 1 GiB through the Nextcloud clients' chunked upload in
 * 10 MiB chunks, with its SHA1 checked, against a tus upload of the same file in the same run (the built
 * executable, runs alternating): the server's CPU per GiB and its peak RSS, each kind's. Then the floor: the
 * SHA1 of 1 GiB alone, and what hashing at the MOVE instead would cost (the chunks sent, the server
 * restarted so the streamed hash is lost, the MOVE's CPU). COFFER_BENCH_EXE: that executable, not rebuilt.
 */
export async function runNcChunkingBench(): Promise<void> {
  const binary = benchExecutable();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'coffer-nc-chunking-bench-'));
  const data = randomBytes(GiB);
  const sha1 = createHash('sha1').update(data).digest('hex');
  const server = new ServerProcess(path.join(dir, 'data'), binary, { LOG_LEVEL: 'warn' });
  try {
    await server.start();
    const pid = server.proc!.pid;
    const token = await adminToken(server.url);
    const login = await nextcloudLogin(server.url, token);
    // Warm-up, untimed, one of each (the first 1 GiB after the start is slower whichever kind it is).
    await chunkedUpload(server.url, login, data, 'warm-up', sha1);
    await tusUpload(server.url, token, data);
    const chunked: CpuTimes[] = [];
    const tus: CpuTimes[] = [];
    const peaks = { chunked: [] as number[], tus: [] as number[] };
    const starts = { chunked: [] as number[], tus: [] as number[] };
    const seconds: number[] = [];
    const load = os.loadavg();
    const measured = async (kind: 'chunked' | 'tus', upload: () => Promise<unknown>) => {
      settleDisk();
      resetPeakRss(pid);
      starts[kind].push(rssMiB(pid));
      const before = cpuTimes(pid);
      const t = performance.now();
      await upload();
      if (kind === 'chunked') seconds.push((performance.now() - t) / 1000);
      (kind === 'chunked' ? chunked : tus).push(cpuPerGiB(pid, before, GiB));
      peaks[kind].push(peakRssMiB(pid));
    };
    for (let i = 0; i < RUNS; i++) {
      const runChunked = () => measured('chunked', () => chunkedUpload(server.url, login, data, `run-${i}`, sha1));
      if (i % 2 === 0) await runChunked();
      await measured('tus', () => tusUpload(server.url, token, data));
      if (i % 2 === 1) await runChunked();
    }
    const ratio = medianCpu(chunked) / medianCpu(tus);
    const list = (xs: number[]) => xs.map((x) => fmt(x)).join(', ');
    console.log(
      `nc.chunked_upload_1GiB_10MiB_chunks_server_cpu ${cpuLine(chunked)}  tus.upload_1GiB_server_cpu ${cpuLine(tus)}  ` +
        `chunked / tus ${fmt(ratio, 2)} (goal <= 1.3); wall s ${list(seconds)}`,
    );
    console.log(
      `nc.chunked_upload_server_peak_rss_MiB max ${fmt(Math.max(...peaks.chunked))} (runs ${list(peaks.chunked)}; RSS at start ${list(starts.chunked)}; goal < 150)  ` +
        `tus.upload_server_peak_rss_MiB max ${fmt(Math.max(...peaks.tus))} (runs ${list(peaks.tus)}; RSS at start ${list(starts.tus)})`,
    );

    const sha1Cpu = sha1CpuPerGiB(data);
    // The chunks of one more upload, then a restart: the MOVE finds no streamed hash and reads the sealed object back to hash it.
    await sendChunks(server.url, login, data, 'hash-at-move');
    await server.stop();
    await server.start();
    settleDisk(true);
    const movePid = server.proc!.pid;
    const beforeMove = cpuTimes(movePid);
    await moveChunks(server.url, login, 'hash-at-move', sha1);
    const move = cpuPerGiB(movePid, beforeMove, GiB);
    console.log(
      `nc.sha1_1GiB_cpu ${fmt(sha1Cpu, 2)} s (Bun.CryptoHasher, bench process); floor (tus + SHA1) / tus ${fmt((medianCpu(tus) + sha1Cpu) / medianCpu(tus), 2)}; ` +
        `nc.move_hashing_1GiB_at_move_cpu ${fmt(move.user + move.system, 2)} s (user ${fmt(move.user, 2)} + system ${fmt(move.system, 2)}; page cache warm)`,
    );
    console.log(
      `load average at start ${load.map((l) => fmt(l, 2)).join(' ')}, at end ${os
        .loadavg()
        .map((l) => fmt(l, 2))
        .join(' ')}`,
    );
  } finally {
    await server.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
