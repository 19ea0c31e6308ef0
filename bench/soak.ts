import { randomBytes } from 'node:crypto';
import type { OrphanReport } from '../src/contract/admin.ts';
import { adminToken } from './server.ts';
import { cpuSeconds, openDescriptors, rssMiB, startLiveServer } from './live-server.ts';
import { flag } from './flags.ts';

/** Latency histogram in 3% buckets from 0.05 ms to about 2 minutes: per-minute aggregates stay small however long the run. */
class Histogram {
  static readonly BUCKETS = 500;
  readonly counts = new Uint32Array(Histogram.BUCKETS);
  n = 0;

  add(ms: number): void {
    const i = Math.floor(Math.log(Math.max(ms, 0.05) / 0.05) / Math.log(1.03));
    this.counts[Math.min(Histogram.BUCKETS - 1, i)]!++;
    this.n++;
  }

  merge(other: Histogram): void {
    for (let i = 0; i < Histogram.BUCKETS; i++) this.counts[i]! += other.counts[i]!;
    this.n += other.n;
  }

  /** The bucket's upper edge where the q-th sample falls (NaN when empty). */
  quantile(q: number): number {
    if (this.n === 0) return Number.NaN;
    const rank = Math.ceil(this.n * q);
    let seen = 0;
    for (let i = 0; i < Histogram.BUCKETS; i++) {
      seen += this.counts[i]!;
      if (seen >= rank) return 0.05 * 1.03 ** (i + 1);
    }
    return Number.NaN;
  }
}

interface Minute {
  ops: Map<string, Histogram>;
  errors: number;
  /** RSS sampled each second: the lowest is what stays after the runtime's collections, the one a leak raises. */
  rssMin: number;
  rssMax: number;
  fdsMin: number;
  fdsMax: number;
  events: number;
}

type OrphanScan = OrphanReport | { jobId: string };

interface Stream {
  controller: AbortController;
  closing: boolean;
}

const MiB = 1024 ** 2;
/** Operations per second: moderate on 2 cores, so latency is the server's and not a queue's. */
const RATE = 10;
/** Operations in flight beyond which the bench reports the server as overloaded (an error). */
const MAX_IN_FLIGHT = 16;
const POOL = 40;
const STREAMS = 10;
const WEIGHTS = {
  list: 5,
  search: 4,
  upload_4KiB: 3,
  upload_256KiB: 2,
  upload_4MiB: 1,
  download: 5,
  share_page: 3,
  share_file: 2,
  dav_propfind: 2,
  dav_cycle: 2,
  tus_1MiB: 1,
  trash_restore: 2,
  stream_reconnect: 1,
  trash_purge: 1,
} as const;
type Op = keyof typeof WEIGHTS;
/** One pass of the mix: each operation repeated by its weight, interleaved so the heavy ones are spread out. */
const MIX: Op[] = [];
for (let round = 0; round < 5; round++)
  for (const [op, weight] of Object.entries(WEIGHTS) as Array<[Op, number]>) if (round < weight) MIX.push(op);

const fmt = (x: number) => (Number.isNaN(x) ? '-' : x < 10 ? x.toFixed(1) : x.toFixed(0));

/**
 * `npm run bench -- soak [--minutes N]` (default 10): mixed load through the built executable's real
 * interfaces at a steady moderate rate; each minute the server's RSS, open descriptors, p50/p99 per
 * operation and errors; at the end the goals (see docs/reliability.md "Soak"), exiting non-zero when one fails.
 */
export async function runSoakBench(): Promise<void> {
  const minutes = flag('minutes', 10);
  const server = await startLiveServer({ COFFER_GENERAL_RATE_LIMIT: '1000000000', COFFER_MAX_CONNECTIONS_PER_IP: '0' });
  const url = server.url;
  let stopping = false;
  const streams = new Set<Stream>();
  try {
    const token = await adminToken(url);
    const auth = { authorization: `Bearer ${token}` };
    const json = { ...auth, 'content-type': 'application/json' };
    const expect = async (res: Response, status: number | number[], what: string): Promise<Response> => {
      if (!(Array.isArray(status) ? status : [status]).includes(res.status))
        throw new Error(`${what}: ${res.status} ${(await res.text()).slice(0, 200)}`);
      return res;
    };
    const post = async (p: string, body: unknown, status = 200): Promise<any> =>
      (await expect(await fetch(`${url}${p}`, { method: 'POST', headers: json, body: JSON.stringify(body) }), status, `POST ${p}`)).json();
    const uploadFile = async (name: string, bytes: Uint8Array, parentId: string): Promise<{ id: string }> => {
      const form = new FormData();
      form.append('parentId', parentId);
      form.append('file', new File([bytes], name, { type: 'application/octet-stream' }));
      return (await (
        await expect(await fetch(`${url}/api/files/upload`, { method: 'POST', headers: auth, body: form }), 200, 'upload')
      ).json()) as { id: string };
    };

    const profile = (await (await fetch(`${url}/api/profile`, { headers: auth })).json()) as { email: string };
    const soak = await post('/api/files/folder', { name: 'Soak' });
    const work = await post('/api/files/folder', { name: 'Work' });
    const shown: string[] = [];
    for (let i = 0; i < 50; i++) shown.push((await uploadFile(`report-${i}.txt`, randomBytes(4096), soak.id)).id);
    const { links } = await post('/api/files/share', { ids: [soak.id], shared: true });
    const share = new URL(links[soak.id]).pathname;
    const { password } = await post('/api/user/app-passwords', { name: 'soak' }, 201);
    const dav = { authorization: `Basic ${Buffer.from(`${profile.email}:${password}`).toString('base64')}` };
    const payload = {
      '4KiB': randomBytes(4096),
      '64KiB': randomBytes(64 * 1024),
      '256KiB': randomBytes(256 * 1024),
      '1MiB': randomBytes(MiB),
      '4MiB': randomBytes(4 * MiB),
    };

    // Files the load works on, each with its size; an id in use is not trashed under a running operation.
    const pool: Array<{ id: string; size: number }> = [];
    const inUse = new Map<string, number>();
    const use = (id: string) => inUse.set(id, (inUse.get(id) ?? 0) + 1);
    const release = (id: string) => (inUse.get(id) === 1 ? inUse.delete(id) : inUse.set(id, inUse.get(id)! - 1));
    const pick = () => pool[Math.floor(Math.random() * pool.length)];
    let serial = 0;

    const minuteLog: Minute[] = [];
    const newMinute = (): Minute => ({
      ops: new Map(),
      errors: 0,
      rssMin: Number.POSITIVE_INFINITY,
      rssMax: 0,
      fdsMin: Number.POSITIVE_INFINITY,
      fdsMax: 0,
      events: 0,
    });
    let current = newMinute();
    const errorSamples: string[] = [];
    const fail = (what: string, err: unknown) => {
      current.errors++;
      if (errorSamples.length < 20) errorSamples.push(`${what}: ${err instanceof Error ? err.message : String(err)}`);
    };
    const timed = async <T>(op: string, f: () => Promise<T>): Promise<T> => {
      const start = performance.now();
      const value = await f();
      let h = current.ops.get(op);
      if (!h) current.ops.set(op, (h = new Histogram()));
      h.add(performance.now() - start);
      return value;
    };

    const openStream = async (): Promise<void> => {
      const stream: Stream = { controller: new AbortController(), closing: false };
      const res = await fetch(`${url}/api/files/events`, { headers: auth, signal: stream.controller.signal });
      await expect(res, 200, 'events');
      const reader = res.body!.getReader();
      const decoder = new TextDecoder();
      let text = '';
      while (!text.includes('"connected"')) {
        const { value, done } = await reader.read();
        if (done) throw new Error('event stream ended before it was connected');
        text += decoder.decode(value, { stream: true });
      }
      streams.add(stream);
      void (async () => {
        try {
          for (;;) {
            const { value, done } = await reader.read();
            if (done) break;
            current.events += decoder.decode(value, { stream: true }).split('\n\n').length - 1;
          }
          if (!stream.closing && !stopping) fail('events', new Error('the server ended an event stream'));
        } catch (err) {
          if (!stream.closing && !stopping) fail('events', err);
        }
        streams.delete(stream);
      })();
    };
    for (let i = 0; i < STREAMS; i++) await openStream();

    const addToPool = async (item: { id: string }, size: number) => {
      pool.push({ id: item.id, size });
      if (pool.length <= POOL) return;
      const at = pool.findIndex((f) => !inUse.has(f.id));
      if (at < 0) return;
      const [old] = pool.splice(at, 1);
      await timed('trash', () => post('/api/files/delete', { ids: [old!.id] }));
    };

    const ops: Record<Op, () => Promise<unknown>> = {
      list: () =>
        timed('list', async () =>
          (await expect(await fetch(`${url}/api/files?parentId=${soak.id}&limit=200`, { headers: auth }), 200, 'list')).arrayBuffer(),
        ),
      search: () =>
        timed('search', async () =>
          (await expect(await fetch(`${url}/api/files/search?q=report-${serial++ % 50}`, { headers: auth }), 200, 'search')).arrayBuffer(),
        ),
      upload_4KiB: async () =>
        addToPool(await timed('upload_4KiB', () => uploadFile(`small-${serial++}.bin`, payload['4KiB'], work.id)), 4096),
      upload_256KiB: async () =>
        addToPool(await timed('upload_256KiB', () => uploadFile(`medium-${serial++}.bin`, payload['256KiB'], work.id)), 256 * 1024),
      upload_4MiB: async () =>
        addToPool(await timed('upload_4MiB', () => uploadFile(`large-${serial++}.bin`, payload['4MiB'], work.id)), 4 * MiB),
      download: async () => {
        const file = pick();
        if (!file) return;
        use(file.id);
        try {
          const bytes = await timed('download', async () =>
            (await expect(await fetch(`${url}/api/files/${file.id}/download`, { headers: auth }), 200, 'download')).arrayBuffer(),
          );
          if (bytes.byteLength !== file.size) throw new Error(`download: ${bytes.byteLength} bytes, not ${file.size}`);
        } finally {
          release(file.id);
        }
      },
      share_page: () =>
        timed('share_page', async () =>
          (await expect(await fetch(`${url}${share}`, { headers: { accept: 'text/html' } }), 200, 'share page')).arrayBuffer(),
        ),
      share_file: () =>
        timed('share_file', async () => {
          const bytes = await (
            await expect(await fetch(`${url}${share}/file/${shown[serial++ % shown.length]}`), 200, 'share file')
          ).arrayBuffer();
          if (bytes.byteLength !== 4096) throw new Error(`share file: ${bytes.byteLength} bytes`);
        }),
      dav_propfind: () =>
        timed('dav_propfind', async () =>
          (await expect(await fetch(`${url}/dav/Soak/`, { method: 'PROPFIND', headers: { ...dav, depth: '1' } }), 207, 'PROPFIND')).text(),
        ),
      dav_cycle: async () => {
        const target = `${url}/dav/Work/dav-${serial++}.bin`;
        await timed('dav_put', async () =>
          expect(await fetch(target, { method: 'PUT', headers: dav, body: payload['64KiB'] }), [201, 204], 'dav PUT'),
        );
        const bytes = await timed('dav_get', async () =>
          (await expect(await fetch(target, { headers: dav }), 200, 'dav GET')).arrayBuffer(),
        );
        if (bytes.byteLength !== 64 * 1024) throw new Error(`dav GET: ${bytes.byteLength} bytes`);
        await timed('dav_delete', async () => expect(await fetch(target, { method: 'DELETE', headers: dav }), 204, 'dav DELETE'));
      },
      tus_1MiB: async () => {
        const item = await timed('tus_1MiB', async () => {
          const meta = [
            `filename ${Buffer.from(`tus-${serial++}.bin`).toString('base64')}`,
            `parentId ${Buffer.from(work.id).toString('base64')}`,
          ].join(',');
          const tus = { ...auth, 'Tus-Resumable': '1.0.0' };
          const created = await expect(
            await fetch(`${url}/api/files/tus`, {
              method: 'POST',
              headers: { ...tus, 'Upload-Length': String(MiB), 'Upload-Metadata': meta },
            }),
            201,
            'tus POST',
          );
          const location = new URL(created.headers.get('location')!, url).href;
          let last: Response | undefined;
          for (let offset = 0; offset < MiB; offset += MiB / 2) {
            last = await expect(
              await fetch(location, {
                method: 'PATCH',
                headers: { ...tus, 'Upload-Offset': String(offset), 'Content-Type': 'application/offset+octet-stream' },
                body: payload['1MiB'].subarray(offset, offset + MiB / 2),
              }),
              204,
              'tus PATCH',
            );
          }
          return { id: last!.headers.get('upload-item-id')! };
        });
        await addToPool(item, MiB);
      },
      trash_restore: async () => {
        const at = pool.findIndex((f) => !inUse.has(f.id));
        if (at < 0) return;
        const [file] = pool.splice(at, 1);
        use(file!.id);
        try {
          await timed('trash_restore', async () => {
            await post('/api/files/delete', { ids: [file!.id] });
            await post('/api/files/trash/restore', { ids: [file!.id] });
          });
        } finally {
          release(file!.id);
          pool.push(file!);
        }
      },
      stream_reconnect: async () => {
        const [oldest] = streams;
        if (oldest) {
          oldest.closing = true;
          oldest.controller.abort();
          streams.delete(oldest);
        }
        await timed('stream_reconnect', openStream);
      },
      trash_purge: () =>
        timed('trash_purge', async () => {
          const trashed = (await (
            await expect(await fetch(`${url}/api/files/trash?limit=200`, { headers: auth }), 200, 'trash')
          ).json()) as Array<{ id: string }>;
          // A file a trash_restore holds is in the trash only until it is restored: not this purge's to delete.
          const ids = trashed.map((t) => t.id).filter((id) => !inUse.has(id));
          if (ids.length) await post('/api/files/trash/delete', { ids }, 202);
        }),
    };

    console.log(
      `soak: ${minutes} minute(s), ${RATE} operations a second, ${STREAMS} event streams open, server pid ${server.pid} (dist/coffer)`,
    );
    const started = performance.now();
    let inFlight = 0;
    let slot = 0;
    let nextMinute = started + 60_000;
    const sample = () => {
      const fds = openDescriptors(server.pid);
      current.fdsMin = Math.min(current.fdsMin, fds);
      current.fdsMax = Math.max(current.fdsMax, fds);
      const { rss } = rssMiB(server.pid);
      current.rssMin = Math.min(current.rssMin, rss);
      current.rssMax = Math.max(current.rssMax, rss);
    };
    const closeMinute = () => {
      sample();
      minuteLog.push(current);
      const cpu = cpuSeconds(server.pid);
      const parts = [...current.ops]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([op, h]) => `${op} ${fmt(h.quantile(0.5))}/${fmt(h.quantile(0.99))}`);
      console.log(
        `minute ${minuteLog.length}: rss ${current.rssMin.toFixed(1)}–${current.rssMax.toFixed(1)} MiB, fds ${current.fdsMin}–${current.fdsMax}, errors ${current.errors}, events ${current.events}, server cpu user ${cpu.user.toFixed(1)} s system ${cpu.system.toFixed(1)} s | p50/p99 ms ${parts.join(', ')}`,
      );
      current = newMinute();
    };
    let lastSample = 0;
    while (minuteLog.length < minutes) {
      const due = started + (slot * 1000) / RATE;
      const wait = due - performance.now();
      if (wait > 0) await Bun.sleep(wait);
      if (performance.now() - lastSample > 1000) {
        sample();
        lastSample = performance.now();
      }
      if (performance.now() >= nextMinute) {
        closeMinute();
        nextMinute += 60_000;
        if (minuteLog.length === minutes) break;
      }
      const op = MIX[slot++ % MIX.length]!;
      if (inFlight >= MAX_IN_FLIGHT) {
        fail(op, new Error(`${inFlight} operations still in flight: the server fell behind`));
        continue;
      }
      inFlight++;
      void ops[op]()
        .catch((err) => fail(op, err))
        .finally(() => inFlight--);
    }
    while (inFlight > 0) await Bun.sleep(20);
    // Operations that were still running at the last minute's end count in it.
    const tail = minuteLog.at(-1)!;
    tail.errors += current.errors;
    for (const [op, h] of current.ops) {
      if (!tail.ops.has(op)) tail.ops.set(op, new Histogram());
      tail.ops.get(op)!.merge(h);
    }
    stopping = true;
    for (const s of streams) s.controller.abort();

    // Nothing for orphan review: every stored object has its row and every row its object (none skipped as too recent).
    let orphans = '';
    for (let attempt = 0; attempt < 10; attempt++) {
      let report = (await (await fetch(`${url}/api/user/orphans?graceMinutes=60`, { headers: auth })).json()) as OrphanScan;
      while ('jobId' in report) {
        await Bun.sleep(200);
        report = (await (await fetch(`${url}/api/user/orphans?jobId=${report.jobId}`, { headers: auth })).json()) as OrphanScan;
      }
      const { storageOrphans, databaseOrphans, totals } = report as OrphanReport;
      orphans = `${storageOrphans.count} objects without a row, ${databaseOrphans.count} rows without an object, ${totals.skippedTooRecent} of either too recent to report (${totals.storedObjects} objects, ${totals.databaseRows} rows)`;
      if (storageOrphans.count + databaseOrphans.count + totals.skippedTooRecent === 0) break;
      // Permanent deletions finish in jobs: give them a moment before asking again.
      await Bun.sleep(2000);
    }

    const results = judge(minuteLog, minutes, orphans);
    for (const e of errorSamples) console.log(`soak.error ${e}`);
    for (const r of results) console.log(`soak.goal ${r.ok ? 'met' : 'FAILED'}: ${r.text}`);
    if (results.some((r) => !r.ok)) process.exitCode = 1;
  } finally {
    stopping = true;
    for (const s of streams) s.controller.abort();
    await server.stop();
  }
}

/** The goals over the per-minute aggregates. */
function judge(log: Minute[], minutes: number, orphans: string): Array<{ ok: boolean; text: string }> {
  const out: Array<{ ok: boolean; text: string }> = [];
  const ref = log[Math.min(5, Math.ceil(log.length / 2)) - 1]!;
  const last = log.at(-1)!;
  out.push({
    ok: last.rssMin <= ref.rssMin * 1.1,
    text: `rss ${last.rssMin.toFixed(1)} MiB in the last minute, ${ref.rssMin.toFixed(1)} in minute ${log.indexOf(ref) + 1} (the lowest of each minute's samples; within 10%)`,
  });
  out.push({
    ok: last.fdsMin <= ref.fdsMin + 5,
    text: `open descriptors ${last.fdsMin} at the end, ${ref.fdsMin} at minute ${log.indexOf(ref) + 1} (fewest seen in the minute; flat: at most 5 more)`,
  });
  const window = minutes >= 30 ? 10 : Math.max(1, Math.floor(log.length / 3));
  const merged = (minutesOf: Minute[]) => {
    const byOp = new Map<string, Histogram>();
    for (const m of minutesOf)
      for (const [op, h] of m.ops) {
        if (!byOp.has(op)) byOp.set(op, new Histogram());
        byOp.get(op)!.merge(h);
      }
    return byOp;
  };
  const first = merged(log.slice(0, window));
  const final = merged(log.slice(-window));
  const all = (byOp: Map<string, Histogram>) => {
    const h = new Histogram();
    for (const one of byOp.values()) h.merge(one);
    return h;
  };
  // A 1 ms floor: below it the difference is the timer's and the scheduler's, not the server's.
  const crept = (a: number, b: number) => b > a * 1.2 && b - a > 1;
  // The p99 judged is of every operation together (thousands of samples a window); one operation's p99 from
  // a hundred samples is its slowest one or two, so per operation the median is judged and the p99 printed.
  const before = all(first);
  const after = all(final);
  out.push({
    ok: !crept(before.quantile(0.99), after.quantile(0.99)),
    text: `p99 of all operations, last ${window} minute(s) vs first ${window}: ${fmt(before.quantile(0.99))} → ${fmt(after.quantile(0.99))} ms (n ${before.n}/${after.n}; within 20%)`,
  });
  const slower: string[] = [];
  const compared: string[] = [];
  for (const [op, h] of first) {
    const later = final.get(op) ?? new Histogram();
    compared.push(
      `${op} p50 ${fmt(h.quantile(0.5))}→${fmt(later.quantile(0.5))} p99 ${fmt(h.quantile(0.99))}→${fmt(later.quantile(0.99))} (n ${h.n}/${later.n})`,
    );
    if (later.n > 0 && crept(h.quantile(0.5), later.quantile(0.5))) slower.push(op);
  }
  out.push({
    ok: slower.length === 0,
    text: `each operation's p50 within 20%, last ${window} minute(s) vs first ${window}: ${compared.join(', ')}${slower.length ? ` (slower: ${slower.join(', ')})` : ''}`,
  });
  const errors = log.reduce((n, m) => n + m.errors, 0);
  out.push({ ok: errors === 0, text: `${errors} errors (per minute: ${log.map((m) => m.errors).join(' ')})` });
  out.push({ ok: /^0 objects without a row, 0 rows without an object, 0 of either/.test(orphans), text: `orphan review: ${orphans}` });
  return out;
}

if (import.meta.main) await runSoakBench();
