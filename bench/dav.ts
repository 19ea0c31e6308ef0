import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { cpuSeconds, memoryMiB, seedItems } from './fixtures.ts';
import { adminToken, curl, startBenchServer, writeRandomGiB } from './server.ts';
import { median } from './streams.ts';
import { cpuLine, cpuPerGiB, cpuTimes, jsThreadTimes, medianCpu, settleDisk, type CpuTimes } from './transfer-cpu.ts';

const GiB = 1024 ** 3;
const MiB = 1024 ** 2;
const fmt = (n: number, digits = 1) => n.toFixed(digits);

function rcloneVersion(): string {
  return /rclone (v\S+)/.exec(Bun.spawnSync(['rclone', 'version'], { stdout: 'pipe' }).stdout.toString())?.[1] ?? '?';
}

/**
 * `npm run bench -- dav`: PROPFIND Depth 1 of a 10,000-item folder (time and server memory), a 1 GiB
 * PUT and GET against the API's multipart upload and download in the same run, and rclone copying
 * 1,000 files of 4 KiB against the API's bulk upload of the same files.
 */
export async function runDavBench(): Promise<void> {
  const server = await startBenchServer({ COFFER_GENERAL_RATE_LIMIT: '1000000000', LOG_LEVEL: 'warn' }, undefined, { executable: true });
  const clientDir = fs.mkdtempSync(path.join(os.tmpdir(), 'coffer-bench-dav-'));
  try {
    const token = await adminToken(server.url);
    const auth = { Cookie: `token=${token}` };
    const api = async (p: string, body: unknown) => {
      const res = await fetch(`${server.url}${p}`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      if (!res.ok) throw new Error(`${p}: ${res.status} ${await res.text()}`);
      return res.json() as Promise<Record<string, any>>;
    };
    const profile = (await (await fetch(`${server.url}/api/profile`, { headers: auth })).json()) as { id: string; email: string };
    const { password } = await api('/api/user/app-passwords', { name: 'bench' });
    const basic = `Basic ${Buffer.from(`${profile.email}:${password}`).toString('base64')}`;
    const dav = `${server.url}/dav`;

    // 1. PROPFIND Depth 1 of a 10,000-item folder (allprop: every live property of every child).
    const big = await api('/api/files/folder', { name: 'Ten thousand' });
    seedItems(
      path.join(server.dataDir, 'coffer.db'),
      profile.id,
      (i) => ({ parentId: big.id, name: `photo ${String(i).padStart(5, '0')}.jpg` }),
      10_000,
    );
    const small = await api('/api/files/folder', { name: 'One thousand' });
    seedItems(
      path.join(server.dataDir, 'coffer.db'),
      profile.id,
      (i) => ({ parentId: small.id, name: `photo ${String(i).padStart(5, '0')}.jpg` }),
      1_000,
    );
    const propfind = async (folder: string) => {
      const t = performance.now();
      const res = await fetch(`${dav}/${encodeURIComponent(folder)}/`, {
        method: 'PROPFIND',
        headers: { authorization: basic, depth: '1' },
      });
      const text = await res.text();
      if (res.status !== 207) throw new Error(`PROPFIND ${res.status}`);
      return { ms: performance.now() - t, bytes: text.length, responses: text.split('<D:response>').length - 1 };
    };
    for (let i = 0; i < 3; i++) await propfind('Ten thousand');
    const rssBefore = memoryMiB(server.pid).now;
    const smallRuns: number[] = [];
    for (let i = 0; i < 10; i++) smallRuns.push((await propfind('One thousand')).ms);
    const rssAfterSmall = memoryMiB(server.pid).now;
    const bigRuns: Array<{ ms: number; bytes: number; responses: number }> = [];
    const cpuBefore = cpuSeconds(server.pid) * 1000;
    for (let i = 0; i < 10; i++) bigRuns.push(await propfind('Ten thousand'));
    const cpuPerPropfind = (cpuSeconds(server.pid) * 1000 - cpuBefore) / 10;
    const rssAfterBig = memoryMiB(server.pid).now;
    // A hundred more: a leak keeps growing, a heap that found its size stays.
    for (let i = 0; i < 100; i++) await propfind('Ten thousand');
    const rssAfterMore = memoryMiB(server.pid).now;
    if (bigRuns[0]!.responses !== 10_001) throw new Error(`PROPFIND listed ${bigRuns[0]!.responses} responses`);
    console.log(
      `dav.propfind_depth1_10000_items_ms median ${fmt(median(bigRuns.map((r) => r.ms)))} (goal < 30; ${fmt(bigRuns[0]!.bytes / MiB, 1)} MiB of XML, runs ${bigRuns.map((r) => fmt(r.ms, 0)).join(', ')})`,
    );
    console.log(
      `dav.propfind_depth1_10000_items_server_cpu_ms ${fmt(cpuPerPropfind, 0)} per request (CPU time of the server process, less sensitive than wall time to other work on the machine; load average ${os.loadavg()[0]!.toFixed(1)} on ${os.cpus().length} cores)`,
    );
    console.log(`dav.propfind_depth1_1000_items_ms median ${fmt(median(smallRuns))}`);
    console.log(
      `dav.propfind_server_rss_MiB before ${fmt(rssBefore)} after 10×1,000 ${fmt(rssAfterSmall)} after 10×10,000 ${fmt(rssAfterBig)} after 110×10,000 ${fmt(rssAfterMore)} (the 7.4 MiB answer is streamed a page of 500 rows at a time, never held whole)`,
    );

    // 2. 1 GiB: PUT against the multipart upload, GET against the API download, alternating, 5 runs (the disk's speed drifts here).
    const bigFile = path.join(clientDir, 'one-gib.bin');
    writeRandomGiB(bigFile);
    const puts: number[] = [];
    const posts: number[] = [];
    const gets: number[] = [];
    const downloads: number[] = [];
    const cpu: Record<'post' | 'put' | 'get' | 'download', CpuTimes[]> = { post: [], put: [], get: [], download: [] };
    const jsThread: Record<keyof typeof cpu, CpuTimes[]> = { post: [], put: [], get: [], download: [] };
    // Each transfer's server CPU per GiB, user and system apart. Each upload starts with earlier writes on disk,
    // so neither kind pays for the other's writeback; the page cache is kept, so downloads read from memory.
    const counted = <T>(kind: keyof typeof cpu, transfer: () => T): T => {
      if (kind === 'post' || kind === 'put') settleDisk(true);
      const before = cpuTimes(server.pid);
      const beforeJs = jsThreadTimes(server.pid);
      const result = transfer();
      cpu[kind].push(cpuPerGiB(server.pid, before, GiB));
      jsThread[kind].push(cpuPerGiB(server.pid, beforeJs, GiB, jsThreadTimes(server.pid)));
      return result;
    };
    for (let run = 0; run < 5; run++) {
      const upload = () => {
        const r = counted('post', () =>
          curl(['-H', `Cookie: token=${token}`, '-F', `file=@${bigFile};type=application/octet-stream`, `${server.url}/api/files/upload`]),
        );
        if (r.status !== 200) throw new Error(`upload ${r.status} ${r.body}`);
        posts.push(GiB / MiB / r.seconds);
        return JSON.parse(r.body) as { id: string };
      };
      const put = () => {
        const r = counted('put', () => curl(['-u', `${profile.email}:${password}`, '-T', bigFile, `${dav}/big-${run}.bin`]));
        if (r.status !== 201) throw new Error(`PUT ${r.status} ${r.body}`);
        puts.push(GiB / MiB / r.seconds);
      };
      let uploaded: { id: string };
      if (run % 2 === 0) {
        uploaded = upload();
        put();
      } else {
        put();
        uploaded = upload();
      }
      const get = () => {
        const r = counted('get', () => curl(['-u', `${profile.email}:${password}`, '-o', '/dev/null', `${dav}/big-${run}.bin`]));
        if (r.bytes !== GiB) throw new Error(`GET returned ${r.bytes}`);
        gets.push(GiB / MiB / r.seconds);
      };
      const download = () => {
        const r = counted('download', () =>
          curl(['-H', `Cookie: token=${token}`, '-o', '/dev/null', `${server.url}/api/files/${uploaded.id}/download`]),
        );
        if (r.bytes !== GiB) throw new Error(`download returned ${r.bytes}`);
        downloads.push(GiB / MiB / r.seconds);
      };
      if (run % 2 === 0) {
        get();
        download();
      } else {
        download();
        get();
      }
      // Free the disk for the next run: both copies to the trash (WebDAV DELETE) and purged.
      curl(['-u', `${profile.email}:${password}`, '-X', 'DELETE', `${dav}/big-${run}.bin`]);
      await api('/api/files/delete', { ids: [uploaded.id] });
      await api('/api/files/trash/empty', {});
    }
    const runs = (xs: number[]) => xs.map((x) => fmt(x, 0)).join(', ');
    console.log(
      `dav.put_1GiB_MiB_s median ${fmt(median(puts), 0)} (runs ${runs(puts)})  api.multipart_upload_1GiB_MiB_s median ${fmt(median(posts), 0)} (runs ${runs(posts)})  ratio ${fmt((100 * median(puts)) / median(posts), 0)}% (goal ≥ 85%)`,
    );
    console.log(
      `dav.get_1GiB_MiB_s median ${fmt(median(gets), 0)} (runs ${runs(gets)})  api.download_1GiB_MiB_s median ${fmt(median(downloads), 0)} (runs ${runs(downloads)})  ratio ${fmt((100 * median(gets)) / median(downloads), 0)}% (goal ≥ 85%)`,
    );
    const vs = (a: CpuTimes[], b: CpuTimes[]) => `${fmt((100 * medianCpu(a)) / medianCpu(b) - 100, 0)}%`;
    console.log(
      `dav.put_1GiB_server_cpu ${cpuLine(cpu.put)}  api.multipart_upload_1GiB_server_cpu ${cpuLine(cpu.post)}  PUT vs API ${vs(cpu.put, cpu.post)} (goal <= +10%)`,
    );
    console.log(
      `dav.put_1GiB_js_thread_cpu ${cpuLine(jsThread.put)}  api.multipart_upload_1GiB_js_thread_cpu ${cpuLine(jsThread.post)}  PUT vs API ${vs(jsThread.put, jsThread.post)} (the doors' own work, without the I/O threads' copy into the page cache)`,
    );
    console.log(
      `dav.get_1GiB_server_cpu ${cpuLine(cpu.get)}  api.download_1GiB_server_cpu ${cpuLine(cpu.download)}  GET vs API ${vs(cpu.get, cpu.download)} (goal <= +10%)`,
    );
    fs.rmSync(bigFile);

    // 3. 1,000 files of 4 KiB: rclone copy over WebDAV against one API bulk upload of the same files.
    const tree = path.join(clientDir, 'small');
    fs.mkdirSync(tree);
    for (let i = 0; i < 1000; i++) fs.writeFileSync(path.join(tree, `file-${i}.bin`), randomBytes(4096));
    if (!Bun.which('rclone')) {
      console.log('dav.rclone_copy_1000x4KiB skipped: the `rclone` command is not installed (apt-get install rclone)');
    } else {
      const obscured = Bun.spawnSync(['rclone', 'obscure', password], { stdout: 'pipe' }).stdout.toString().trim();
      const env = {
        ...process.env,
        RCLONE_CONFIG: path.join(clientDir, 'none.conf'),
        RCLONE_CONFIG_COFFER_TYPE: 'webdav',
        RCLONE_CONFIG_COFFER_URL: `${dav}/`,
        RCLONE_CONFIG_COFFER_VENDOR: 'owncloud',
        RCLONE_CONFIG_COFFER_USER: profile.email,
        RCLONE_CONFIG_COFFER_PASS: obscured,
      };
      const t = performance.now();
      const r = Bun.spawnSync(['rclone', 'copy', tree, 'coffer:small', '--transfers', '4'], { env, stdout: 'pipe', stderr: 'pipe' });
      const seconds = (performance.now() - t) / 1000;
      if (r.exitCode !== 0) throw new Error(`rclone copy failed: ${r.stderr.toString()}`);
      const form = new FormData();
      for (let i = 0; i < 1000; i++) {
        form.append('relativePaths', `bulk/file-${i}.bin`);
        form.append('files', new Blob([fs.readFileSync(path.join(tree, `file-${i}.bin`))]), `file-${i}.bin`);
      }
      const tb = performance.now();
      const bulk = await fetch(`${server.url}/api/files/upload/bulk`, { method: 'POST', headers: auth, body: form });
      const bulkSeconds = (performance.now() - tb) / 1000;
      const result = (await bulk.json()) as { successful: number };
      if (result.successful !== 1000) throw new Error(`bulk upload stored ${result.successful}`);
      // The same 1,000 PUTs without rclone, four at a time: what the server gives a client that does not pace itself.
      const td = performance.now();
      let next = 0;
      const worker = async () => {
        for (let i = next++; i < 1000; i = next++) {
          const res = await fetch(`${dav}/direct-${i}.bin`, {
            method: 'PUT',
            headers: { authorization: basic },
            body: fs.readFileSync(path.join(tree, `file-${i}.bin`)),
          });
          if (res.status !== 201) throw new Error(`PUT ${res.status}`);
        }
      };
      await Promise.all([worker(), worker(), worker(), worker()]);
      const directSeconds = (performance.now() - td) / 1000;
      console.log(
        `dav.rclone_copy_1000x4KiB_files_s ${fmt(1000 / seconds, 0)} (${fmt(seconds, 1)} s, --transfers 4; rclone ${rcloneVersion()} spaces its WebDAV calls at least 10 ms apart and makes three per file: MKCOL of the folder, PUT, PROPFIND)  dav.put_1000x4KiB_4_parallel_files_s ${fmt(1000 / directSeconds, 0)} (${fmt(directSeconds, 1)} s)  api.bulk_upload_1000x4KiB_files_s ${fmt(1000 / bulkSeconds, 0)} (${fmt(bulkSeconds, 1)} s, one request)`,
      );
    }
  } finally {
    await server.stop();
    fs.rmSync(clientDir, { recursive: true, force: true });
  }
}
