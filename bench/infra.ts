import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { once } from 'node:events';
import { Readable } from 'node:stream';
import { randomBytes } from 'node:crypto';
import type { Archiver } from 'archiver';
import type { TestS3 } from '../test/helpers/s3.ts';
import { source } from './streams.ts';

/*
 * `npm run bench -- infra`: each piece of hand-written infrastructure against the well-kept option it
 * could be replaced with, every case in its own process (CPU and peak RSS are that process's own) and the
 * two sides alternated, three rounds, medians. The npm options Coffer does not depend on (tar-stream,
 * prom-client) are installed for the run in a temporary directory outside the repository and removed after.
 */

const GiB = 1024 ** 3;
const MiB = 1024 ** 2;
const HERE = import.meta.path;
const COMPARE_PACKAGES = ['tar-stream@3.2.2', 'prom-client@15.1.3'];

interface Result {
  /** Bytes moved, or operations done when `unit` is 'Mop'. */
  work: number;
  unit: 'GiB' | 'Mop';
  seconds: number;
  cpu: number;
  /** Resident memory before the work (after imports) and the highest seen, MiB. */
  rssBase: number;
  rssPeak: number;
  /** Time to import the library measured, ms. */
  importMs: number;
  /** CPU seconds of the parts of the work, where a case has parts. */
  phases?: Record<string, number>;
}

/** CPU seconds of this process so far. */
const cpuNow = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};
/** Where a worker notes the CPU seconds of the parts of its work. */
const phases: Record<string, number> = {};

function rssMiB(field: 'VmRSS' | 'VmHWM'): number {
  const m = new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(fs.readFileSync('/proc/self/status', 'utf8'));
  return Number(m?.[1] ?? 0) / 1024;
}

/** Fresh chunks, as a socket delivers them: the reused random MiB of `source`, copied. */
async function* fresh(total: number): AsyncGenerator<Uint8Array> {
  for await (const chunk of source(total)) yield chunk.slice();
}

/** `n`, which must be `expected`: a case that moved other than what it was given measured nothing. */
function exactly(n: number, expected: number): number {
  if (n !== expected) throw new Error(`moved ${n} bytes, not ${expected}`);
  return n;
}

/** `n`, which must hold `content` bytes and more (an archive's headers). */
function atLeast(n: number, content: number): number {
  if (n <= content) throw new Error(`an archive of ${n} bytes cannot hold ${content}`);
  return n;
}

function compareRequire(): NodeJS.Require {
  const dir = process.env.INFRA_COMPARE_DIR;
  if (!dir) throw new Error('INFRA_COMPARE_DIR is not set');
  return createRequire(path.join(dir, 'package.json'));
}

// ---------- the cases, each run in a worker process ----------

const TAR_BYTES = GiB;
const TAR_ENTRY = MiB;

/** Our tar writer into our reader: a backup written and restored, without the disk. */
async function tarOurs(): Promise<() => Promise<number>> {
  const { TAR_END, TarReader, tarHeader, tarPadding } = await import('../src/lib/tar.ts');
  return async () => {
    async function* written(): AsyncGenerator<Uint8Array> {
      for (let i = 0; i < TAR_BYTES / TAR_ENTRY; i++) {
        yield tarHeader({ name: `objects/${i.toString(16).padStart(8, '0')}`, size: TAR_ENTRY, mtime: 1_700_000_000 });
        yield* fresh(TAR_ENTRY);
        const pad = tarPadding(TAR_ENTRY);
        if (pad.byteLength) yield pad;
      }
      yield TAR_END;
    }
    const reader = new TarReader(written());
    let n = 0;
    while (await reader.next()) for await (const chunk of reader.body()) n += chunk.byteLength;
    return exactly(n, TAR_BYTES);
  };
}

/** tar-stream's pack into its extract, the same entries. */
async function tarStream(): Promise<() => Promise<number>> {
  const tar = compareRequire()('tar-stream') as typeof import('node:stream') & {
    pack(): NodeJS.ReadableStream & {
      entry(h: object, cb: (err?: Error) => void): NodeJS.WritableStream;
      finalize(): void;
    };
    extract(): NodeJS.WritableStream & NodeJS.EventEmitter;
  };
  return async () => {
    const pack = tar.pack();
    const extract = tar.extract();
    let n = 0;
    const finished = new Promise<void>((resolve, reject) => {
      extract.on('entry', (_header: unknown, stream: NodeJS.ReadableStream, next: () => void) => {
        stream.on('data', (c: Uint8Array) => (n += c.byteLength));
        stream.on('end', next);
        stream.resume();
      });
      extract.on('finish', resolve);
      extract.on('error', reject);
    });
    pack.pipe(extract);
    for (let i = 0; i < TAR_BYTES / TAR_ENTRY; i++) {
      let done!: () => void;
      const written = new Promise<void>((r) => (done = r));
      const entry = pack.entry(
        { name: `objects/${i.toString(16).padStart(8, '0')}`, size: TAR_ENTRY, mtime: new Date(1_700_000_000_000) },
        () => done(),
      );
      for await (const chunk of fresh(TAR_ENTRY))
        if (!entry.write(chunk as Buffer)) await once(entry as unknown as NodeJS.EventEmitter, 'drain');
      entry.end();
      await written;
    }
    pack.finalize();
    await finished;
    return exactly(n, TAR_BYTES);
  };
}

const ZIP_BYTES = GiB;
const ZIP_ENTRY = 16 * MiB;

/** archiver as downloads.ts drives it: stored entries appended one at a time, the archive read as it is made. */
async function zipArchiver(): Promise<() => Promise<number>> {
  const { ZipArchive } = await import('archiver');
  return async () => {
    const archive = new ZipArchive({ store: true, highWaterMark: 256 * 1024 });
    const produce = (async () => {
      for (let i = 0; i < ZIP_BYTES / ZIP_ENTRY; i++) {
        const entry = once(archive as unknown as NodeJS.EventEmitter, 'entry');
        archive.append(Readable.from(fresh(ZIP_ENTRY)), { name: `folder/file-${i}.bin`, date: new Date(1_700_000_000_000) });
        await entry;
      }
      await archive.finalize();
    })();
    let n = 0;
    for await (const chunk of archive as Archiver) n += (chunk as Buffer).byteLength;
    await produce;
    return atLeast(n, ZIP_BYTES);
  };
}

/** fflate's streaming Zip with stored (pass-through) entries: the same entries. It has no backpressure: output arrives in its callback. */
async function zipFflate(): Promise<() => Promise<number>> {
  const { Zip, ZipPassThrough } = await import('fflate');
  return async () => {
    let n = 0;
    const zip = new Zip((err, data) => {
      if (err) throw err;
      n += data.byteLength;
    });
    for (let i = 0; i < ZIP_BYTES / ZIP_ENTRY; i++) {
      const entry = new ZipPassThrough(`folder/file-${i}.bin`);
      entry.mtime = 1_700_000_000_000;
      zip.add(entry);
      let last: Uint8Array | null = null;
      for await (const chunk of fresh(ZIP_ENTRY)) {
        if (last) entry.push(last);
        last = chunk;
      }
      entry.push(last!, true);
    }
    zip.end();
    return atLeast(n, ZIP_BYTES);
  };
}

const FORM_BYTES = GiB;
const BOUNDARY = `----coffer-bench-${randomBytes(12).toString('hex')}`;

/** One upload's body: a field, then one file of FORM_BYTES. */
async function* form(): AsyncGenerator<Uint8Array> {
  const enc = new TextEncoder();
  yield enc.encode(`--${BOUNDARY}\r\nContent-Disposition: form-data; name="parentId"\r\n\r\nabc\r\n`);
  yield enc.encode(
    `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`,
  );
  yield* fresh(FORM_BYTES);
  yield enc.encode(`\r\n--${BOUNDARY}--\r\n`);
}

/** Our parser (http/multipart.ts, busboy's header parsers imported from its private path). */
async function multipartOurs(): Promise<() => Promise<number>> {
  const { readMultipart } = await import('../src/http/multipart.ts');
  return async () => {
    const chunks = form();
    const body = new ReadableStream<Uint8Array>(
      {
        async pull(controller) {
          const next = await chunks.next();
          if (next.done) controller.close();
          else controller.enqueue(next.value);
        },
      },
      { highWaterMark: 0 },
    );
    const request = new Request('http://bench.invalid/api/files/upload', {
      method: 'POST',
      headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` },
      body,
    });
    let n = 0;
    for await (const part of readMultipart(request)) if (part.kind === 'file') for await (const c of part.body) n += c.byteLength;
    return exactly(n, FORM_BYTES);
  };
}

/** busboy's public API: its stream, written with backpressure, the file read as a Readable. */
async function multipartBusboy(): Promise<() => Promise<number>> {
  const busboy = (await import('busboy')).default;
  return async () => {
    const bb = busboy({ headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` } });
    let n = 0;
    const done = new Promise<void>((resolve, reject) => {
      bb.on('file', (_name, stream) => stream.on('data', (c: Buffer) => (n += c.byteLength)));
      bb.on('close', resolve);
      bb.on('error', reject);
    });
    for await (const chunk of form()) if (!bb.write(chunk)) await once(bb, 'drain');
    bb.end();
    await done;
    return exactly(n, FORM_BYTES);
  };
}

const METRIC_OPS = 2_000_000;
const RENDERS = 20_000;
const ACTIONS = Array.from({ length: 24 }, (_, i) => `file.action_${i}`);
const BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/** Our registry: the audit counter by action and status, the duration histogram, and /metrics rendered. */
async function metricsOurs(): Promise<() => Promise<number>> {
  const { Counter, Gauge, Histogram, MetricsRegistry } = await import('../src/lib/metrics.ts');
  return async () => {
    const r = new MetricsRegistry();
    const queued = r.register(new Counter('audit_events_queued_total', 'Audit events queued.', ['action', 'status']));
    const duration = r.register(new Histogram('audit_processing_duration_seconds', 'Batch time.', BUCKETS));
    const depth = r.register(new Gauge('audit_queue_depth', 'Waiting.'));
    let cpu = cpuNow();
    for (let i = 0; i < METRIC_OPS; i++) {
      queued.inc({ action: ACTIONS[i % ACTIONS.length]!, status: i % 7 ? 'ok' : 'failed' });
      duration.observe((i % 1000) / 200);
    }
    phases.update = cpuNow() - cpu;
    cpu = cpuNow();
    let bytes = 0;
    for (let i = 0; i < RENDERS; i++) {
      depth.set(i);
      bytes += r.render().length;
    }
    phases.render = cpuNow() - cpu;
    if (bytes === 0) throw new Error('nothing rendered');
    return 2 * METRIC_OPS + RENDERS;
  };
}

/** prom-client: the same three metrics, the same operations, its registry rendered. */
async function metricsProm(): Promise<() => Promise<number>> {
  type Options = { name: string; help: string; labelNames?: string[]; buckets?: number[]; registers: unknown[] };
  const prom = compareRequire()('prom-client') as {
    Registry: new () => { metrics(): Promise<string> };
    Counter: new (o: Options) => { inc(labels: Record<string, string>): void };
    Histogram: new (o: Options) => { observe(v: number): void };
    Gauge: new (o: Options) => { set(v: number): void };
  };
  return async () => {
    const r = new prom.Registry();
    const queued = new prom.Counter({
      name: 'audit_events_queued_total',
      help: 'Audit events queued.',
      labelNames: ['action', 'status'],
      registers: [r],
    });
    const duration = new prom.Histogram({
      name: 'audit_processing_duration_seconds',
      help: 'Batch time.',
      buckets: BUCKETS,
      registers: [r],
    });
    const depth = new prom.Gauge({ name: 'audit_queue_depth', help: 'Waiting.', registers: [r] });
    let cpu = cpuNow();
    for (let i = 0; i < METRIC_OPS; i++) {
      queued.inc({ action: ACTIONS[i % ACTIONS.length]!, status: i % 7 ? 'ok' : 'failed' });
      duration.observe((i % 1000) / 200);
    }
    phases.update = cpuNow() - cpu;
    cpu = cpuNow();
    let bytes = 0;
    for (let i = 0; i < RENDERS; i++) {
      depth.set(i);
      bytes += (await r.metrics()).length;
    }
    phases.render = cpuNow() - cpu;
    if (bytes === 0) throw new Error('nothing rendered');
    return 2 * METRIC_OPS + RENDERS;
  };
}

const S3_BYTES = 256 * MiB;
const PART = 8 * MiB;
const QUEUE = 3;

/** Our S3 driver: one object up (multipart, 8 MiB parts, 3 at once: its defaults) and down. */
async function s3Ours(): Promise<() => Promise<number>> {
  const { S3Driver } = await import('../src/storage/s3.ts');
  const { testS3DriverOptions } = await import('../test/helpers/s3-options.ts');
  return async () => {
    const driver = new S3Driver({
      ...testS3DriverOptions(process.env.INFRA_S3_ENDPOINT!, 'infra-ours/'),
      partSize: PART,
      queueSize: QUEUE,
    });
    const key = randomBytes(16).toString('hex');
    await driver.put(key, fresh(S3_BYTES));
    let n = 0;
    for await (const c of await driver.get(key)) n += c.byteLength;
    await driver.delete(key);
    return S3_BYTES + exactly(n, S3_BYTES);
  };
}

/** Bun.S3Client on the same bucket: the same object through its writer (same part size and queue) and its stream. */
async function s3Bun(): Promise<() => Promise<number>> {
  const { TEST_ACCESS_KEY, TEST_BUCKET } = await import('../test/helpers/s3-options.ts');
  return async () => {
    const client = new Bun.S3Client({
      endpoint: process.env.INFRA_S3_ENDPOINT!,
      bucket: TEST_BUCKET,
      region: 'us-east-1',
      accessKeyId: TEST_ACCESS_KEY,
      secretAccessKey: TEST_ACCESS_KEY,
    });
    const file = client.file(`infra-bun/${randomBytes(16).toString('hex')}`);
    const writer = file.writer({ partSize: PART, queueSize: QUEUE });
    for await (const chunk of fresh(S3_BYTES)) await writer.write(chunk);
    await writer.end();
    let n = 0;
    for await (const c of file.stream()) n += c.byteLength;
    await file.delete();
    return S3_BYTES + exactly(n, S3_BYTES);
  };
}

const CASES = {
  'tar: ours': { make: tarOurs, unit: 'GiB', compare: false },
  'tar: tar-stream': { make: tarStream, unit: 'GiB', compare: true },
  'zip: archiver': { make: zipArchiver, unit: 'GiB', compare: false },
  'zip: fflate': { make: zipFflate, unit: 'GiB', compare: false },
  'multipart: ours': { make: multipartOurs, unit: 'GiB', compare: false },
  'multipart: busboy': { make: multipartBusboy, unit: 'GiB', compare: false },
  'metrics: ours': { make: metricsOurs, unit: 'Mop', compare: false },
  'metrics: prom-client': { make: metricsProm, unit: 'Mop', compare: true },
  's3: ours': { make: s3Ours, unit: 'GiB', compare: false },
  's3: Bun.S3Client': { make: s3Bun, unit: 'GiB', compare: false },
} as const;
type CaseName = keyof typeof CASES;

async function worker(name: CaseName): Promise<void> {
  const c = CASES[name];
  const t0 = performance.now();
  const run = await c.make();
  const importMs = performance.now() - t0;
  Bun.gc(true);
  const rssBase = rssMiB('VmRSS');
  const cpu0 = process.cpuUsage();
  const t = performance.now();
  const work = await run();
  const seconds = (performance.now() - t) / 1000;
  const u = process.cpuUsage(cpu0);
  const result: Result = {
    work,
    unit: c.unit,
    seconds,
    cpu: (u.user + u.system) / 1e6,
    rssBase,
    rssPeak: rssMiB('VmHWM'),
    importMs,
    phases,
  };
  console.log(JSON.stringify(result));
}

// ---------- the parent: rounds, the feature checks, the table ----------

async function runCase(name: CaseName, env: Record<string, string>): Promise<Result> {
  const proc = Bun.spawn([process.execPath, HERE, name], { env: { ...process.env, ...env }, stdout: 'pipe', stderr: 'inherit' });
  const out = await new Response(proc.stdout).text();
  if ((await proc.exited) !== 0) throw new Error(`${name} failed`);
  return JSON.parse(out.trim().split('\n').pop()!) as Result;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

function row(name: string, runs: Result[]): string {
  const r = runs[0]!;
  const units = r.unit === 'GiB' ? r.work / GiB : r.work / 1e6;
  const perUnit = median(runs.map((x) => x.cpu)) / units;
  const rate =
    r.unit === 'GiB'
      ? `${(median(runs.map((x) => x.work / MiB / x.seconds))).toFixed(0)} MiB/s`
      : `${(median(runs.map((x) => x.work / 1e6 / x.seconds))).toFixed(1)} Mop/s`;
  const cpu = r.unit === 'GiB' ? `${perUnit.toFixed(2)} CPU s/GiB` : `${(perUnit * 1000).toFixed(0)} CPU ns/op`;
  const parts =
    r.unit === 'Mop'
      ? ` (inc and observe ${((median(runs.map((x) => x.phases!.update!)) / (2 * METRIC_OPS)) * 1e9).toFixed(0)} ns each, a render ${((median(runs.map((x) => x.phases!.render!)) / RENDERS) * 1e6).toFixed(0)} µs)`
      : '';
  return `  ${name.padEnd(22)} ${rate.padStart(12)} ${cpu.padStart(16)}   peak RSS ${median(runs.map((x) => x.rssPeak))
    .toFixed(0)
    .padStart(4)} MiB (${median(runs.map((x) => x.rssPeak - x.rssBase))
    .toFixed(0)
    .padStart(4)} over its start)   import ${median(runs.map((x) => x.importMs))
    .toFixed(0)
    .padStart(3)} ms${parts}`;
}

/** What Coffer asks of S3, tried with Bun.S3Client against the test S3 server (s3rver with its shim). */
async function s3Features(s3: TestS3): Promise<string[]> {
  const { TEST_ACCESS_KEY, TEST_BUCKET, testS3DriverOptions } = await import('../test/helpers/s3-options.ts');
  const { S3Driver } = await import('../src/storage/s3.ts');
  const { newStorageKey } = await import('../src/storage/keys.ts');
  const endpoint = s3.endpoint;
  const client = new Bun.S3Client({
    endpoint,
    bucket: TEST_BUCKET,
    region: 'us-east-1',
    accessKeyId: TEST_ACCESS_KEY,
    secretAccessKey: TEST_ACCESS_KEY,
  });
  const lines: string[] = [];
  const check = async (what: string, probe: () => Promise<boolean | string>) => {
    let verdict: string;
    try {
      const r = await probe();
      verdict = r === true ? 'yes' : r === false ? 'NO' : r;
    } catch (err) {
      verdict = `NO (${err instanceof Error ? err.message.split('\n')[0] : String(err)})`;
    }
    lines.push(`  ${what.padEnd(58)} ${verdict}`);
  };
  const data = randomBytes(11 * MiB);
  const key = `infra-features/${randomBytes(8).toString('hex')}`;
  await check('custom endpoint, path-style, PUT and GET', async () => {
    await client.write(`${key}-small`, 'hello');
    return (await client.file(`${key}-small`).text()) === 'hello';
  });
  await check('multipart upload, part size set, length unknown (5 MiB of 11)', async () => {
    const before = s3.requests.length;
    const w = client.file(key).writer({ partSize: 5 * MiB, queueSize: 2 });
    for (let o = 0; o < data.length; o += 256 * 1024) await w.write(data.subarray(o, o + 256 * 1024));
    await w.end();
    const parts = s3.requests.slice(before).filter((r) => r.includes('partNumber=')).length;
    return parts === 3 && (await client.size(key)) === data.length ? 'yes (3 parts)' : `NO (${parts} parts)`;
  });
  await check('ranged GET', async () =>
    Buffer.from(await client.file(key).slice(1000, 2000).arrayBuffer()).equals(data.subarray(1000, 2000)),
  );
  await check('HEAD (size, ETag)', async () => {
    const s = await client.stat(key);
    return s.size === data.length && Boolean(s.etag);
  });
  await check('list by prefix (ListObjectsV2)', async () => {
    const listed = await client.list({ prefix: 'infra-features/' });
    return (listed.contents ?? []).some((o) => o.key === key);
  });
  await check('presigned GET (Coffer uses none)', async () => {
    const status = (await fetch(client.presign(key))).status;
    return status === 200 || `NO (s3rver answers ${status})`;
  });
  await check('delete', async () => {
    await client.delete(key);
    await client.delete(`${key}-small`);
    return !(await client.exists(key));
  });
  const api = client as unknown as Record<string, unknown>;
  const has = (...names: string[]) => (names.some((n) => typeof api[n] === 'function') ? 'yes' : 'NO: no method');
  await check('server-side copy (CopyObject; UploadPartCopy past 5 GiB)', async () => has('copy', 'copyObject'));
  await check('list and abort incomplete multipart uploads (orphan sweep)', async () =>
    has('listMultipartUploads', 'abortMultipartUpload'),
  );
  await check('a GET the bucket stalls 3 s: given up after (ours: timeoutMs 1000)', async () => {
    const storageKey = newStorageKey();
    const slow = `infra-features/${storageKey}`;
    await client.write(slow, 'late');
    s3.stall(3000, (method, url) => method === 'GET' && url.includes(storageKey));
    let t = performance.now();
    const driver = new S3Driver({ ...testS3DriverOptions(s3.endpoint, 'infra-features/'), timeoutMs: 1000, attempts: 1 });
    const ours = await driver.get(storageKey).then(
      () => 'answered',
      () => 'gave up',
    );
    const oursS = (performance.now() - t) / 1000;
    t = performance.now();
    await client.file(slow).text();
    const bunS = (performance.now() - t) / 1000;
    s3.clearFailures();
    await client.delete(slow);
    return `Bun.S3Client waited ${bunS.toFixed(1)} s (no timeout or signal in S3Options); ours ${ours} after ${oursS.toFixed(1)} s`;
  });
  return lines;
}

/** Whether each ZIP library writes the ZIP64 end records an archive of over 65,535 entries needs. */
async function zip64(): Promise<string[]> {
  const { Zip, ZipPassThrough } = await import('fflate');
  const { ZipArchive } = await import('archiver');
  const ENTRIES = 70_000;
  const eocdCount = (zip: Buffer) => {
    const at = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
    return { count: zip.readUInt16LE(at + 10), zip64: zip.includes(Buffer.from([0x50, 0x4b, 0x06, 0x06])) };
  };
  const chunks: Uint8Array[] = [];
  const zip = new Zip((err, data) => {
    if (err) throw err;
    chunks.push(data);
  });
  for (let i = 0; i < ENTRIES; i++) {
    const e = new ZipPassThrough(`f/${i}`);
    zip.add(e);
    e.push(new Uint8Array(0), true);
  }
  zip.end();
  const ff = eocdCount(Buffer.concat(chunks));
  const archive = new ZipArchive({ store: true });
  const out: Buffer[] = [];
  const read = (async () => {
    for await (const c of archive as Archiver) out.push(c as Buffer);
  })();
  for (let i = 0; i < ENTRIES; i++) archive.append(Buffer.alloc(0), { name: `f/${i}` });
  await archive.finalize();
  await read;
  const ar = eocdCount(Buffer.concat(out));
  const say = (r: { count: number; zip64: boolean }) =>
    r.zip64 ? 'ZIP64 end record written: readable' : `no ZIP64 record, the entry count reads ${r.count}: the archive is truncated`;
  return [`  ${ENTRIES} entries, archiver: ${say(ar)}`, `  ${ENTRIES} entries, fflate:   ${say(ff)}`];
}

export async function runInfraBench(): Promise<void> {
  console.log(
    `load average at start: ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')} (${os.cpus().length} CPUs)`,
  );
  const compareDir = fs.mkdtempSync(path.join(os.tmpdir(), 'coffer-infra-compare-'));
  const { startTestS3 } = await import('../test/helpers/s3.ts');
  const s3 = await startTestS3();
  try {
    fs.writeFileSync(path.join(compareDir, 'package.json'), '{"private":true}');
    const install = Bun.spawnSync(['npm', 'install', '--no-audit', '--no-fund', '--no-save', ...COMPARE_PACKAGES], {
      cwd: compareDir,
      stdout: 'ignore',
      stderr: 'pipe',
    });
    const compared = install.exitCode === 0;
    if (!compared)
      console.log(
        `npm install ${COMPARE_PACKAGES.join(' ')} failed; tar-stream and prom-client are left out:\n${install.stderr.toString()}`,
      );
    const env = { INFRA_COMPARE_DIR: compareDir, INFRA_S3_ENDPOINT: s3.endpoint };
    const pairs: Array<[CaseName, CaseName]> = [
      ['tar: ours', 'tar: tar-stream'],
      ['zip: archiver', 'zip: fflate'],
      ['multipart: ours', 'multipart: busboy'],
      ['metrics: ours', 'metrics: prom-client'],
      ['s3: ours', 's3: Bun.S3Client'],
    ];
    const ROUNDS = 3;
    console.log('case                       throughput          CPU      memory');
    for (const pair of pairs) {
      const runs = new Map<CaseName, Result[]>(pair.map((n) => [n, []]));
      for (let round = 0; round < ROUNDS; round++) {
        // Alternated, and the first side swapped each round, so neither always runs on a warmer machine.
        for (const name of round % 2 ? [...pair].reverse() : pair) {
          if (CASES[name].compare && !compared) continue;
          runs.get(name)!.push(await runCase(name, env));
        }
      }
      for (const [name, r] of runs) if (r.length) console.log(row(name, r));
    }
    console.log('ZIP64 (folders of over 65,535 entries, or over 4 GiB):');
    for (const line of await zip64()) console.log(line);
    console.log('Bun.S3Client on what Coffer asks of S3 (s3rver with the test shim):');
    for (const line of await s3Features(s3)) console.log(line);
  } finally {
    await s3.stop();
    fs.rmSync(compareDir, { recursive: true, force: true });
  }
  console.log(
    `load average at end: ${os
      .loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
}

if (import.meta.main) {
  const name = process.argv[2] as CaseName | undefined;
  if (name && name in CASES) await worker(name);
  else await runInfraBench();
}
