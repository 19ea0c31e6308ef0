import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Subprocess } from 'bun';
import { S3Driver } from '../src/storage/s3.ts';
import { newStorageKey } from '../src/storage/keys.ts';
import { adminToken, startBenchServer } from './server.ts';
import { cpuSeconds, freshInstance, memoryMiB, openCli } from './fixtures.ts';
import { storeFile } from '../test/helpers/stored-files.ts';
import { testS3DriverOptions, testS3Env } from '../test/helpers/s3-options.ts';
import { drain, median, source } from './streams.ts';
import { cpuLine as splitCpuLine, cpuPerGiB, cpuTimes, medianCpu, type CpuTimes } from './transfer-cpu.ts';

const GiB = 1024 ** 3;
const MiB = 1024 ** 2;
const ROOT = path.resolve(import.meta.dir, '..');

/** Samples a process's resident memory every 50 ms; the highest value seen. */
function rssSampler(pid: number) {
  let peak = 0;
  const timer = setInterval(() => (peak = Math.max(peak, memoryMiB(pid).now)), 50);
  return () => {
    clearInterval(timer);
    return peak;
  };
}

interface Transfer {
  mibPerSecond: number;
  /** CPU seconds each process used during the transfer. */
  cpu: Record<string, number>;
  /** The same per GiB, user and system apart. */
  split: Record<string, CpuTimes>;
}

/** Downloads a GiB with `get`, timing it and counting the CPU seconds of each process in `pids`. */
async function timedDownload(get: () => Promise<ReadableStream<Uint8Array>>, pids: Record<string, number | 'self'>): Promise<Transfer> {
  const before = Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, cpuSeconds(pid)]));
  const beforeSplit = Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, cpuTimes(pid)]));
  const t = performance.now();
  const got = await drain(await get());
  if (got !== GiB) throw new Error(`downloaded ${got} bytes`);
  const seconds = (performance.now() - t) / 1000;
  const cpu = Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, cpuSeconds(pid) - before[name]!]));
  const split = Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, cpuPerGiB(pid, beforeSplit[name]!, GiB)]));
  return { mibPerSecond: GiB / MiB / seconds, cpu, split };
}

/** The index of the middle value. */
const medianIndex = (xs: number[]): number => xs.map((x, i) => [x, i] as const).sort((a, b) => a[0] - b[0])[Math.floor(xs.length / 2)]![1];

const cpuLine = (r: Transfer) =>
  `${Object.entries(r.cpu)
    .map(([name, s]) => `${name} ${s.toFixed(2)}`)
    .join(' + ')} = ${Object.values(r.cpu)
    .reduce((a, b) => a + b, 0)
    .toFixed(2)} CPU s`;

/** A multipart/form-data body streaming `total` bytes of `source()` as one file. */
function multipartBody(total: number): { body: ReadableStream<Uint8Array>; type: string } {
  const boundary = `bench-${randomBytes(8).toString('hex')}`;
  const head = new TextEncoder().encode(
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`,
  );
  const tail = new TextEncoder().encode(`\r\n--${boundary}--\r\n`);
  const parts = (async function* () {
    yield head;
    yield* source(total);
    yield tail;
  })();
  return {
    type: `multipart/form-data; boundary=${boundary}`,
    body: new ReadableStream({
      async pull(c) {
        const r = await parts.next();
        if (r.done) c.close();
        else c.enqueue(r.value);
      },
    }),
  };
}

/**
 * `npm run bench -- s3`: against s3rver on loopback (its own process), in one run: a 1 GiB upload and
 * download through Coffer's HTTP API against a plain multipart PUT and GET of the same bytes with the
 * same S3 client into the same server; the server's peak RSS during each; a 1-byte Range at 900 MiB;
 * and `coffer storage migrate` of 10,000 small files.
 */
export async function runS3Bench(): Promise<void> {
  // s3rver in a child process, so the figures of this process and of Coffer's stay apart.
  const child = Bun.spawn(
    [
      process.execPath,
      '-e',
      `const { startTestS3 } = await import(${JSON.stringify(path.join(ROOT, 'test/helpers/s3.ts'))}); const s = await startTestS3(); console.log(JSON.stringify({ endpoint: s.endpoint, dir: s.dir }));`,
    ],
    {
      stdout: 'pipe',
      stderr: 'inherit',
    },
  );
  const reader = child.stdout.getReader();
  const line = new TextDecoder().decode((await reader.read()).value);
  const s3 = JSON.parse(line) as { endpoint: string; dir: string };
  const env = (prefix: string) => testS3Env(s3.endpoint, prefix);
  let relay: Subprocess<'ignore', 'pipe', 'inherit'> | null = null;
  let bare: Subprocess<'ignore', 'pipe', 'inherit'> | null = null;
  try {
    const plain = new S3Driver(testS3DriverOptions(s3.endpoint, 'plain/'));
    const key = newStorageKey();
    let t = performance.now();
    await plain.put(key, source());
    const plainPut = GiB / MiB / ((performance.now() - t) / 1000);
    // The same bytes served by a relay that only passes the driver's GET through: what any server adds.
    relay = Bun.spawn([process.execPath, path.join(ROOT, 'bench/s3-relay.ts'), s3.endpoint, 'plain/'], {
      stdout: 'pipe',
      stderr: 'inherit',
    });
    const relayUrl = `http://127.0.0.1:${new TextDecoder().decode((await relay.stdout.getReader().read()).value).trim()}`;

    // The bare reference for the upload: receive, seal in 64 KiB segments, multipart PUT; nothing else.
    bare = Bun.spawn([process.execPath, path.join(ROOT, 'bench/bare-s3-upload.ts'), s3.endpoint, 'bare/'], {
      stdout: 'pipe',
      stderr: 'inherit',
    });
    const bareUrl = `http://127.0.0.1:${new TextDecoder().decode((await bare.stdout.getReader().read()).value).trim()}/`;
    const bareStore = new S3Driver(testS3DriverOptions(s3.endpoint, 'bare/'));

    const server = await startBenchServer({ ...env('coffer/'), COFFER_GENERAL_RATE_LIMIT: '1000000' }, undefined, { executable: true });
    try {
      const token = await adminToken(server.url);
      const auth = { authorization: `Bearer ${token}` };
      // Three uploads, each beside one to the bare reference; the figures printed are the medians.
      let stop = rssSampler(server.pid);
      const uploadRuns: { mibPerSecond: number; coffer: CpuTimes; s3rver: CpuTimes; client: CpuTimes }[] = [];
      const bareRuns: CpuTimes[] = [];
      let id = '';
      for (let round = 0; round < 3; round++) {
        const { body, type } = multipartBody(GiB);
        const before = { coffer: cpuTimes(server.pid), s3rver: cpuTimes(child.pid), client: cpuTimes('self') };
        t = performance.now();
        const res = await fetch(`${server.url}/api/files/upload`, {
          method: 'POST',
          headers: { ...auth, 'content-type': type },
          body,
          duplex: 'half',
        } as RequestInit);
        if (res.status !== 200) throw new Error(`upload: ${res.status} ${await res.text()}`);
        const mibPerSecond = GiB / MiB / ((performance.now() - t) / 1000);
        uploadRuns.push({
          mibPerSecond,
          coffer: cpuPerGiB(server.pid, before.coffer, GiB),
          s3rver: cpuPerGiB(child.pid, before.s3rver, GiB),
          client: cpuPerGiB('self', before.client, GiB),
        });
        id = ((await res.json()) as { id: string }).id;
        const bareBefore = cpuTimes(bare.pid);
        const raw = source(GiB);
        const stored = await fetch(bareUrl, {
          method: 'PUT',
          body: new ReadableStream({
            async pull(c) {
              const r = await raw.next();
              if (r.done) c.close();
              else c.enqueue(r.value);
            },
          }),
          duplex: 'half',
        } as RequestInit);
        if (stored.status !== 200) throw new Error(`bare upload: ${stored.status}`);
        bareRuns.push(cpuPerGiB(bare.pid, bareBefore, GiB));
        await bareStore.delete(await stored.text());
      }
      const upload = median(uploadRuns.map((r) => r.mibPerSecond));
      const uploadRss = stop();

      // Three rounds, the three ways in turn, so a busy moment on the shared machine hits all of them alike.
      const plainRuns: Transfer[] = [];
      const relayRuns: Transfer[] = [];
      const apiRuns: Transfer[] = [];
      stop = rssSampler(server.pid);
      for (let round = 0; round < 3; round++) {
        plainRuns.push(await timedDownload(() => plain.get(key), { s3rver: child.pid, client: 'self' }));
        relayRuns.push(
          await timedDownload(async () => (await fetch(`${relayUrl}/${key}`)).body!, {
            s3rver: child.pid,
            relay: relay.pid,
            client: 'self',
          }),
        );
        apiRuns.push(
          await timedDownload(async () => (await fetch(`${server.url}/api/files/${id}/download`, { headers: auth })).body!, {
            s3rver: child.pid,
            coffer: server.pid,
            client: 'self',
          }),
        );
      }
      const downloadRss = stop();
      // The round whose API-to-plain ratio is the median: its three figures were measured side by side.
      const round = medianIndex(apiRuns.map((r, i) => r.mibPerSecond / plainRuns[i]!.mibPerSecond));
      const plainGet = plainRuns[round]!;
      const relayed = relayRuns[round]!;
      const download = apiRuns[round]!;
      const totalCpu = (r: Transfer) => Object.values(r.cpu).reduce((a, b) => a + b, 0);
      // At best every process runs at once on its own core: a GiB then takes the larger of the busiest
      // process's CPU time and the total CPU time spread over the cores.
      const cores = navigator.hardwareConcurrency;
      const floor = (r: Transfer) => Math.max(totalCpu(r) / cores, ...Object.values(r.cpu));

      const ranged: number[] = [];
      for (let i = 0; i < 21; i++) {
        const at = 900 * MiB + i * 4099;
        t = performance.now();
        const r = await fetch(`${server.url}/api/files/${id}/download`, { headers: { ...auth, range: `bytes=${at}-${at}` } });
        if (r.status !== 206 || (await r.arrayBuffer()).byteLength !== 1) throw new Error(`range: ${r.status}`);
        ranged.push(performance.now() - t);
      }

      console.log(
        `1 GiB upload through the API:   ${upload.toFixed(0)} MiB/s (median of 3)  (plain multipart PUT, same client and server: ${plainPut.toFixed(0)} MiB/s, ${((upload / plainPut) * 100).toFixed(0)}%)`,
      );
      const pct = (a: number, b: number) => `${((a / b) * 100).toFixed(0)}%`;
      console.log(
        `1 GiB download through the API: ${download.mibPerSecond.toFixed(0)} MiB/s  (plain GET: ${plainGet.mibPerSecond.toFixed(0)} MiB/s, ${pct(download.mibPerSecond, plainGet.mibPerSecond)}; the rounds: ${apiRuns.map((r, i) => pct(r.mibPerSecond, plainRuns[i]!.mibPerSecond)).join(', ')})`,
      );
      console.log(
        `  a relay passing the same GET through untouched: ${relayed.mibPerSecond.toFixed(0)} MiB/s (${pct(relayed.mibPerSecond, plainGet.mibPerSecond)} of plain GET)`,
      );
      console.log(`  CPU per GiB: plain GET ${cpuLine(plainGet)}; relay ${cpuLine(relayed)}; API ${cpuLine(download)}`);
      console.log(
        `  on ${cores} cores with nothing else running, the API download could reach at most ${pct(floor(plainGet), floor(download))} of plain GET and the relay ${pct(floor(plainGet), floor(relayed))} (load average at the start: ${os.loadavg()[0]!.toFixed(1)})`,
      );
      console.log(
        `s3.coffer_cpu_upload_1GiB ${splitCpuLine(uploadRuns.map((r) => r.coffer))} (goal <= 1.00; not Coffer's: s3rver ${splitCpuLine(uploadRuns.map((r) => r.s3rver))}, client ${splitCpuLine(uploadRuns.map((r) => r.client))})`,
      );
      console.log(
        `  bare reference (receive, seal in 64 KiB segments, multipart PUT through the S3 driver): ${splitCpuLine(bareRuns)}; Coffer ${(medianCpu(uploadRuns.map((r) => r.coffer)) / medianCpu(bareRuns)).toFixed(2)}x of it`,
      );
      console.log(
        `s3.coffer_cpu_download_1GiB ${splitCpuLine(apiRuns.map((r) => r.split.coffer!))} (goal <= 1.00; not Coffer's: s3rver ${splitCpuLine(apiRuns.map((r) => r.split.s3rver!))}, client ${splitCpuLine(apiRuns.map((r) => r.split.client!))})`,
      );
      console.log(`server peak RSS: upload ${uploadRss.toFixed(0)} MiB, download ${downloadRss.toFixed(0)} MiB`);
      console.log(
        `1-byte Range at 900 MiB: median ${median(ranged).toFixed(1)} ms, worst ${Math.max(...ranged).toFixed(1)} ms (21 requests)`,
      );
    } finally {
      await server.stop();
    }

    // 10,000 small files on local disk, then moved to the bucket by the CLI.
    const { dir: dataDir, ownerId } = await freshInstance('coffer-bench-migrate-');
    try {
      const ctx = openCli(dataDir);
      try {
        for (let i = 0; i < 10_000; i++) await storeFile(ctx, ownerId, { size: 2048 });
      } finally {
        ctx.close();
      }
      const { COFFER_STORAGE: _, ...target } = env('migrated/');
      const m = Bun.spawnSync(
        [process.execPath, path.join(ROOT, 'src/main.ts'), 'storage', 'migrate', '--to', 's3', '--json', '--data-dir', dataDir],
        {
          env: { PATH: process.env.PATH!, LOG_LEVEL: 'silent', ...target },
          stderr: 'inherit',
        },
      );
      const r = JSON.parse(m.stdout.toString()) as { copied: number; seconds: number };
      console.log(
        `storage migrate of 10,000 small files (2 KiB): ${r.copied} copied and verified in ${r.seconds.toFixed(1)} s = ${(r.copied / r.seconds).toFixed(0)} files/s`,
      );
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
    await plain.delete(key);
  } finally {
    relay?.kill();
    bare?.kill();
    child.kill();
    await child.exited;
    fs.rmSync(s3.dir, { recursive: true, force: true });
  }
}
