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
const RUNS = 3;

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

/** One chunked upload as the Nextcloud clients send it: MKCOL, 10 MiB chunks in order, MOVE of .file. */
async function chunkedUpload(url: string, login: { id: string; authorization: string }, data: Buffer, name: string, sha1: string) {
  const folder = `${url}/remote.php/dav/uploads/${login.id}/${name}`;
  const headers = { authorization: login.authorization };
  const call = async (method: string, target: string, extra: Record<string, string> = {}, body?: Uint8Array) => {
    const res = await fetch(target, { method, headers: { ...headers, ...extra }, body });
    if (res.status >= 300) throw new Error(`${method} ${target}: ${res.status} ${await res.text()}`);
  };
  const destination = `${url}/remote.php/dav/files/${login.id}/${name}.bin`;
  await call('MKCOL', folder, { 'oc-total-length': String(data.length), destination });
  for (let at = 0, n = 1; at < data.length; at += CHUNK, n++)
    await call('PUT', `${folder}/${n}`, { destination }, data.subarray(at, at + CHUNK));
  await call('MOVE', `${folder}/.file`, { destination, 'oc-checksum': `SHA1:${sha1}`, 'x-oc-mtime': '1700000000' });
}

/**
 * `npm run bench -- nc-chunking` (issue 42): 1 GiB through the Nextcloud clients' chunked upload in
 * 10 MiB chunks, with its SHA1 checked, against a tus upload of the same file in the same run (the built
 * executable, runs alternating): the server's CPU per GiB and its peak RSS. COFFER_BENCH_EXE: that executable, not rebuilt.
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
    const peaks: number[] = [];
    const seconds: number[] = [];
    for (let i = 0; i < RUNS; i++) {
      const runChunked = async () => {
        settleDisk();
        resetPeakRss(pid);
        const before = cpuTimes(pid);
        const t = performance.now();
        await chunkedUpload(server.url, login, data, `run-${i}`, sha1);
        seconds.push((performance.now() - t) / 1000);
        chunked.push(cpuPerGiB(pid, before, GiB));
        peaks.push(peakRssMiB(pid));
      };
      if (i % 2 === 0) await runChunked();
      settleDisk();
      const before = cpuTimes(pid);
      await tusUpload(server.url, token, data);
      tus.push(cpuPerGiB(pid, before, GiB));
      if (i % 2 === 1) await runChunked();
    }
    const ratio = medianCpu(chunked) / medianCpu(tus);
    console.log(
      `nc.chunked_upload_1GiB_10MiB_chunks_server_cpu ${cpuLine(chunked)}  tus.upload_1GiB_server_cpu ${cpuLine(tus)}  ` +
        `chunked / tus ${fmt(ratio, 2)} (goal <= 1.3); wall s ${seconds.map((s) => fmt(s)).join(', ')}`,
    );
    console.log(
      `nc.chunked_upload_server_peak_rss_MiB max ${fmt(Math.max(...peaks))} (runs ${peaks.map((p) => fmt(p)).join(', ')}; goal < 150)`,
    );
  } finally {
    await server.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
