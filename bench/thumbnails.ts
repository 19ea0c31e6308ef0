import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp, { type Create } from 'sharp';
import { closeDatabase, openDatabase } from '../src/db/client.ts';
import { createLogger } from '../src/log.ts';
import type { SourceKind } from '../src/services/thumbnails/formats.ts';
import { ThumbnailPool } from '../src/services/thumbnails/pool.ts';
import { flag } from './flags.ts';
import { median } from './streams.ts';
import * as img from '../test/helpers/images.ts';

// Noise, as sharp makes it (its types want a background that noise does without).
const noise = (width: number, height: number, sigma: number) =>
  sharp({ create: { width, height, channels: 3, noise: { type: 'gaussian', mean: 128, sigma } } as Create });
import { cpuSeconds, memoryMiB } from './fixtures.ts';
import { adminToken, startBenchServer } from './server.ts';

/** A photo-like 12 MP JPEG (blurred noise: costlier to decode than flat colour, as a camera's is), sideways like a phone's. */
async function photo12mp(): Promise<Buffer> {
  const base = await noise(4000, 3000, 40).blur(1.2).jpeg({ quality: 88 }).toBuffer();
  return sharp(base).withMetadata({ orientation: 6 }).jpeg({ quality: 88 }).toBuffer();
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

/** Images a second and CPU per image of the thumbnail workers, `concurrency` at once (the server's default on 2 cores: 1; here both). */
async function throughput(label: string, kind: SourceKind, bytes: Uint8Array, count: number, concurrency: number, Pool = ThumbnailPool) {
  const cacheDir = fs.mkdtempSync(path.join(os.tmpdir(), 'coffer-bench-thumb-'));
  const pool = new Pool({ cacheDir, maxPixels: 100_000_000 }, concurrency, createLogger('silent'));
  // A first one starts the workers and loads the codecs: not counted.
  await Promise.all(Array.from({ length: concurrency }, () => pool.make(kind, () => Promise.resolve(new Uint8Array(bytes)), false)));
  const cpu0 = cpuSeconds();
  const t0 = performance.now();
  const results = await Promise.all(
    Array.from({ length: count }, () => pool.make(kind, () => Promise.resolve(new Uint8Array(bytes)), false)),
  );
  const seconds = (performance.now() - t0) / 1000;
  const cpu = cpuSeconds() - cpu0;
  pool.stop();
  fs.rmSync(cacheDir, { recursive: true, force: true });
  const made = results[0]!;
  if (!made.ok) throw new Error(`${label}: failed: ${JSON.stringify(results.find((r) => !r.ok))}`);
  if (results.some((r) => !r.ok)) throw new Error(`${label}: ${results.filter((r) => !r.ok).length} failed`);
  const figures = {
    perSec: count / seconds,
    cpuMs: (cpu / count) * 1000,
    largeKiB: made.large.length / 1024,
    smallKiB: made.small.length / 1024,
  };
  console.log(
    `${label}: ${figures.perSec.toFixed(1)} images/s with ${concurrency} worker(s), ${figures.cpuMs.toFixed(0)} ms CPU per image (both sizes), ${count} images; WebP ${figures.largeKiB.toFixed(0)} + ${figures.smallKiB.toFixed(1)} KiB (load average ${os.loadavg()[0]!.toFixed(1)})`,
  );
  return figures;
}

/**
 * The 12 MP JPEG through this checkout's pool and, with COFFER_BENCH_BEFORE_SRC (other checkouts with
 * node_modules, separated by `:`, each named by its folder), through theirs, taking turns in each of
 * `--rounds` rounds: the CPU per image is the figure other load on the machine moves least.
 */
async function jpegRounds(jpeg: Uint8Array): Promise<void> {
  const before = (process.env.COFFER_BENCH_BEFORE_SRC ?? '').split(':').filter(Boolean);
  const sources: Array<[string, typeof ThumbnailPool]> = [];
  for (const dir of before) {
    const mod = (await import(path.resolve(dir, 'src/services/thumbnails/pool.ts'))) as { ThumbnailPool: typeof ThumbnailPool };
    sources.push([path.basename(dir), mod.ThumbnailPool]);
  }
  sources.push(['this checkout', ThumbnailPool]);
  const rounds = flag('rounds', 1);
  const runs = new Map<string, Array<Awaited<ReturnType<typeof throughput>>>>();
  for (let r = 0; r < rounds; r++)
    for (const [name, Pool] of sources) {
      const label = `${rounds > 1 || before.length ? `round ${r + 1} ${name}: ` : ''}12 MP JPEG (EXIF orientation 6) → 1,600 + 256 px WebP`;
      runs.set(name, [...(runs.get(name) ?? []), await throughput(label, 'image', jpeg, 16, 2, Pool)]);
    }
  if (rounds === 1 && !before.length) return;
  console.log(`| 12 MP JPEG, 2 workers, ${rounds} rounds (medians) | images/s | CPU ms per image | WebP KiB (1,600 + 256) |`);
  console.log('|---|---|---|---|');
  for (const [name, list] of runs) {
    const m = (pick: (f: (typeof list)[number]) => number) => median(list.map(pick));
    console.log(
      `| ${name} | ${m((f) => f.perSec).toFixed(1)} | ${m((f) => f.cpuMs).toFixed(0)} | ${m((f) => f.largeKiB).toFixed(0)} + ${m((f) => f.smallKiB).toFixed(1)} |`,
    );
  }
}

async function upload(
  url: string,
  token: string,
  name: string,
  bytes: Uint8Array,
  type: string,
  parentId?: string,
): Promise<{ id: string }> {
  const form = new FormData();
  if (parentId) form.append('parentId', parentId);
  form.append('file', new File([bytes], name, { type }));
  const res = await fetch(`${url}/api/files/upload`, { method: 'POST', body: form, headers: { cookie: `token=${token}` } });
  if (!res.ok) throw new Error(`upload ${res.status} ${await res.text()}`);
  return (await res.json()) as { id: string };
}

/** Peak server memory while it makes the thumbnails of a 100 MP JPEG (a request, so made at once). */
async function peakFor100mp() {
  const big = await noise(11_500, 8_600, 30).jpeg({ quality: 85 }).toBuffer();
  const server = await startBenchServer({ LOG_LEVEL: 'warn', THUMBNAIL_CONCURRENCY: '2' });
  try {
    const token = await adminToken(server.url);
    const before = memoryMiB(server.pid).peak;
    const files = [];
    for (let i = 0; i < 2; i++) files.push(await upload(server.url, token, `big-${i}.jpg`, big, 'image/jpeg'));
    // Both at once: the worst a default 2-core box does.
    const answers = await Promise.all(
      files.map((f) => fetch(`${server.url}/api/files/${f.id}/thumbnail?size=large`, { headers: { cookie: `token=${token}` } })),
    );
    if (answers.some((a) => a.status !== 200)) throw new Error(`100 MP thumbnail: ${answers.map((a) => a.status)}`);
    console.log(
      `100 MP JPEG (${(big.length / 1024 ** 2).toFixed(0)} MiB), two at once: server peak RSS ${memoryMiB(server.pid).peak.toFixed(0)} MiB (${before.toFixed(0)} MiB before)`,
    );
  } finally {
    await server.stop();
  }
}

/** Peak server memory while it makes the thumbnails of two 24 MP and one 48 MP phone HEIC (512 px grids) at once. */
async function peakForPhoneHeic() {
  const heic24 = await img.heicGrid(6000, 4000, 512, { photoLike: true });
  const heic48 = await img.heicGrid(8064, 6048, 512, { photoLike: true });
  const server = await startBenchServer({ LOG_LEVEL: 'warn', THUMBNAIL_CONCURRENCY: '3' });
  try {
    const token = await adminToken(server.url);
    const before = memoryMiB(server.pid).peak;
    const files = [];
    for (const [i, bytes] of [heic24, heic24, heic48].entries())
      files.push(await upload(server.url, token, `IMG_${i}.HEIC`, bytes, 'image/heic'));
    const cpu0 = cpuSeconds(server.pid);
    const answers = await Promise.all(
      files.map((f) => fetch(`${server.url}/api/files/${f.id}/thumbnail?size=large`, { headers: { cookie: `token=${token}` } })),
    );
    const cpu = cpuSeconds(server.pid) - cpu0;
    if (answers.some((a) => a.status !== 200)) throw new Error(`phone HEIC thumbnail: ${answers.map((a) => a.status)}`);
    console.log(
      `two 24 MP and one 48 MP HEIC (512 px grids) at once, 3 workers: server peak RSS ${memoryMiB(server.pid).peak.toFixed(0)} MiB (${before.toFixed(0)} MiB before), server CPU ${(cpu * 1000).toFixed(0)} ms for the three`,
    );
  } finally {
    await server.stop();
  }
}

/** Request latency while the server makes the thumbnails of `count` photos in the background. */
async function latencyUnderLoad(count: number) {
  // One client asking many times: the per-login rate limit would answer 429 instead of measuring.
  const server = await startBenchServer({ LOG_LEVEL: 'warn', COFFER_GENERAL_RATE_LIMIT: '1000000' });
  try {
    const token = await adminToken(server.url);
    const headers = { cookie: `token=${token}` };
    const folder = (await (
      await fetch(`${server.url}/api/files/folder`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body: '{"name":"Photos"}',
      })
    ).json()) as { id: string };
    const jpeg = await noise(3000, 2000, 40).blur(1.2).jpeg({ quality: 85 }).toBuffer();
    const cpu0 = cpuSeconds(server.pid);
    let next = 0;
    const lane = async () => {
      while (next < count) {
        const i = next++;
        await upload(server.url, token, `IMG_${i}.jpg`, jpeg, 'image/jpeg', folder.id);
      }
    };
    await Promise.all(Array.from({ length: 4 }, lane));
    const measure = async (pathAndQuery: string, withSession: boolean) => {
      const times: number[] = [];
      const until = performance.now() + 8000;
      while (performance.now() < until) {
        const t = performance.now();
        const res = await fetch(`${server.url}${pathAndQuery}`, { headers: withSession ? headers : {} });
        await res.arrayBuffer();
        if (res.status !== 200) throw new Error(`${pathAndQuery} answered ${res.status}`);
        times.push(performance.now() - t);
        // A person's pace, not a flood: the figure is what a request meets while thumbnails are made.
        await Bun.sleep(10);
      }
      times.sort((a, b) => a - b);
      return times;
    };
    const made = () => {
      const db = openDatabase(path.join(server.dataDir, 'coffer.db'));
      const n = db.$client.query<{ n: number }, []>("SELECT count(*) AS n FROM thumbnails WHERE status = 'ready'").get()!.n;
      closeDatabase(db);
      return n;
    };
    const madeBefore = made();
    const list = await measure(`/api/files?parentId=${folder.id}&limit=200`, true);
    const health = await measure('/health', false);
    const cpu = cpuSeconds(server.pid) - cpu0;
    console.log(`  (thumbnails made: ${madeBefore} of ${count} when measuring began, ${made()} when it ended)`);
    console.log(
      `while ${count} uploaded 6 MP photos are made into thumbnails (server CPU so far ${cpu.toFixed(0)} s): /api/files 200-item page p50 ${percentile(list, 50).toFixed(1)} ms p99 ${percentile(list, 99).toFixed(1)} ms (${list.length} requests); /health p50 ${percentile(health, 50).toFixed(1)} ms p99 ${percentile(health, 99).toFixed(1)} ms (${health.length})`,
    );
  } finally {
    await server.stop();
  }
}

/** `npm run bench -- thumbnails [--rounds N]`: thumbnail speed per format, peak memory for 100 MP, request latency while making them (127.0.0.1 only). */
export async function runThumbnailsBench(): Promise<void> {
  console.log(`(${os.availableParallelism()} cores, load average ${os.loadavg()[0]!.toFixed(1)}: timings move with the load)`);
  const jpeg = await photo12mp();
  await jpegRounds(jpeg);
  await throughput('12 MP JPEG, one worker', 'image', jpeg, 8, 1);
  if (img.heifEncMissing()) console.log('HEIC: skipped (heif-enc missing: apt-get install libheif-examples)');
  else {
    await throughput('12 MP HEIC (one coded picture)', 'heic', await img.heic(4000, 3000), 6, 2);
    await throughput('24 MP HEIC (512 px grid, as phones write)', 'heic', await img.heicGrid(6000, 4000, 512, { photoLike: true }), 6, 2);
    await throughput('48 MP HEIC (512 px grid)', 'heic', await img.heicGrid(8064, 6048, 512, { photoLike: true }), 4, 2);
    await peakForPhoneHeic();
  }
  await throughput("20-page PDF's first page", 'pdf', img.pdf(20, 595, 842), 16, 2);
  await peakFor100mp();
  await latencyUnderLoad(1000);
}
