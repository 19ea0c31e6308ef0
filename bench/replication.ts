import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Database } from 'bun:sqlite';
import { adminToken, type BenchServer, startBenchServer } from './server.ts';
import { cpuTimes, totalCpu } from './transfer-cpu.ts';

const ROOT = path.resolve(import.meta.dir, '..');
const MAIN = path.join(ROOT, 'src/main.ts');
const MiB = 1024 ** 2;
const num = (name: string, fallback: number) => Number(process.env[name] ?? fallback);

function quantile(sorted: number[], q: number): number {
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * q) - 1)]! : Number.NaN;
}

const median = (xs: number[]) =>
  quantile(
    [...xs].sort((a, b) => a - b),
    0.5,
  );

async function metric(url: string, name: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1]);
}

function dirBytes(dir: string, filter: (name: string) => boolean = () => true): number {
  if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) return 0;
  return fs
    .readdirSync(dir)
    .filter(filter)
    .reduce((n, name) => n + fs.statSync(path.join(dir, name)).size, 0);
}

/** CPU seconds of a process's main thread (the one that runs JavaScript's event loop and commits). */
function mainThreadCpu(pid: number): number {
  const fields = fs.readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** An API client of one account: uploads, renames, listings. */
function clientOf(url: string, token: string) {
  const auth = { authorization: `Bearer ${token}` };
  return {
    async upload(name: string, bytes: Uint8Array): Promise<string> {
      const form = new FormData();
      form.append('file', new File([bytes], name));
      const res = await fetch(`${url}/api/files/upload`, { method: 'POST', headers: auth, body: form });
      if (!res.ok) throw new Error(`upload: ${res.status} ${await res.text()}`);
      return ((await res.json()) as { id: string }).id;
    },
    async post(p: string, body: unknown): Promise<Response> {
      const res = await fetch(`${url}${p}`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      await res.arrayBuffer();
      return res;
    },
    async get(p: string): Promise<Response> {
      const res = await fetch(`${url}${p}`, { headers: auth });
      await res.arrayBuffer();
      return res;
    },
  };
}

/**
 * Mixed API load from `clients` loops for `seconds`: three 4 KiB uploads, a rename and a folder listing in
 * every five operations. Returns uploads per second and acknowledged upload ids.
 */
async function mixedLoad(
  url: string,
  token: string,
  seconds: number,
  clients = 8,
): Promise<{ uploadsPerSec: number; opsPerSec: number; ids: string[] }> {
  const c = clientOf(url, token);
  const ids: string[] = [];
  let uploads = 0;
  let ops = 0;
  const end = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: clients }, async (_, w) => {
      for (let i = 0; performance.now() < end; i++) {
        const kind = i % 5;
        if (kind < 3 || ids.length === 0) {
          ids.push(await c.upload(`w${w}-${i}-${randomBytes(4).toString('hex')}.bin`, randomBytes(4096)));
          uploads++;
        } else if (kind === 3)
          await c.post('/api/files/rename', { id: ids[Math.floor(Math.random() * ids.length)], name: `r-${w}-${i}.bin` });
        else await c.get('/api/files?limit=50');
        ops++;
      }
    }),
  );
  return { uploadsPerSec: uploads / seconds, opsPerSec: ops / seconds, ids };
}

/** Signs the account adminToken made in again (signup is closed after the first account). */
async function signIn(url: string): Promise<string> {
  const res = await fetch(`${url}/api/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'bench@example.test', password: 'bench password' }),
  });
  if (!res.ok) throw new Error(`login failed: ${res.status} ${await res.text()}`);
  return /token=([^;]+)/.exec(res.headers.get('set-cookie') ?? '')![1]!;
}

function cli(args: string[], env: Record<string, string>): { seconds: number; code: number; out: string } {
  const started = performance.now();
  const r = Bun.spawnSync([process.execPath, MAIN, ...args], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', COFFER_CONFIG: '/dev/null', LOG_LEVEL: 'silent', ...env },
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const out = r.stdout.toString() + r.stderr.toString();
  if (r.exitCode !== 0) throw new Error(`coffer ${args.join(' ')}: ${out}`);
  return { seconds: (performance.now() - started) / 1000, code: r.exitCode, out };
}

/**
 * `npm run bench -- replication` (issue 44): write throughput with replication off and on, the lag under
 * that load, the catch-up after a destination outage, the restore of a large database with a day's
 * worth of segments, promotion, and the replica's growth under a soak-like mix. Runs from source.
 */
export async function runReplicationBench(): Promise<void> {
  const seconds = num('REPLICATION_BENCH_SECONDS', 8);
  const outageSeconds = num('REPLICATION_BENCH_OUTAGE_SECONDS', 60);
  const dbMiB = num('REPLICATION_BENCH_DB_MIB', 1024);
  const segmentsWanted = num('REPLICATION_BENCH_SEGMENTS', 1800);
  const soakMinutes = num('REPLICATION_BENCH_SOAK_MINUTES', 2);
  // REPLICATION_BENCH_PARTS=restore,soak runs only those (throughput, outage, restore, soak).
  const parts = new Set((process.env.REPLICATION_BENCH_PARTS ?? 'throughput,outage,restore,soak').split(','));
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'coffer-bench-replication-'));
  const pass = path.join(work, 'passphrase');
  fs.writeFileSync(pass, 'bench replica passphrase\n', { mode: 0o600 });
  const base = {
    BACKUP_PASSPHRASE_FILE: pass,
    COFFER_GENERAL_RATE_LIMIT: '1000000000',
    // A quiet machine uploads past the default 20,000 per 30 minutes within the rounds.
    COFFER_UPLOAD_RATE_LIMIT: '1000000000',
    COFFER_MAX_CONNECTIONS_PER_IP: '0',
    LOG_LEVEL: 'warn',
  };
  const servers: BenchServer[] = [];
  try {
    // 1. Throughput off and on: both servers up at once, rounds alternating which goes first, so a change in the
    // machine's load falls on both; the server's CPU per upload beside the rate, which load does not skew.
    if (parts.has('throughput')) {
      const rounds = num('REPLICATION_BENCH_ROUNDS', 6);
      const sides = {
        off: await startBenchServer(base, undefined, { executable: !!process.env.COFFER_BENCH_EXE }),
        on: await startBenchServer({ ...base, REPLICATE_TO: path.join(work, 'throughput') }, undefined, {
          executable: !!process.env.COFFER_BENCH_EXE,
        }),
      };
      servers.push(sides.off, sides.on);
      const tokens = { off: await adminToken(sides.off.url), on: await adminToken(sides.on.url) };
      const rates: Record<'off' | 'on', number[]> = { off: [], on: [] };
      const cpuMs: Record<'off' | 'on', number[]> = { off: [], on: [] };
      const mainMs: Record<'off' | 'on', number[]> = { off: [], on: [] };
      const lags: number[] = [];
      // Warm-up: the first requests of each pay for compilation.
      for (const mode of ['off', 'on'] as const) await mixedLoad(sides[mode].url, tokens[mode], 2);
      for (let r = 0; r < rounds; r++) {
        for (const mode of r % 2 === 0 ? (['off', 'on'] as const) : (['on', 'off'] as const)) {
          const server = sides[mode];
          // Sampled from both, so the metrics' own cost falls on both; only the replicating one's lag counts.
          let sampling = true;
          const sampler = (async () => {
            while (sampling) {
              const lag = await metric(server.url, 'coffer_replication_lag_seconds');
              if (mode === 'on') lags.push(lag);
              await Bun.sleep(100);
            }
          })();
          const cpu0 = totalCpu(cpuTimes(server.pid));
          const main0 = mainThreadCpu(server.pid);
          const load = await mixedLoad(server.url, tokens[mode], seconds);
          const cpu = totalCpu(cpuTimes(server.pid)) - cpu0;
          mainMs[mode].push(((mainThreadCpu(server.pid) - main0) * 1000) / (load.uploadsPerSec * seconds));
          sampling = false;
          await sampler;
          rates[mode].push(load.uploadsPerSec);
          cpuMs[mode].push((cpu * 1000) / (load.uploadsPerSec * seconds));
        }
      }
      const off = median(rates.off);
      const on = median(rates.on);
      const fmt = (xs: number[], digits = 0) => xs.map((x) => x.toFixed(digits)).join(', ');
      console.log(
        `replication.throughput_4KiB_uploads_s off ${off.toFixed(0)} on ${on.toFixed(0)} (on/off ${(on / off).toFixed(3)}; median of ${rounds} alternating rounds, runs off ${fmt(rates.off)}, on ${fmt(rates.on)}; 8 clients, 3 uploads, a rename and a listing in every 5 operations, ${seconds} s each; load ${os.loadavg()[0]!.toFixed(1)} on ${os.cpus().length} cores)`,
      );
      const cpuOff = median(cpuMs.off);
      const cpuOn = median(cpuMs.on);
      console.log(
        `replication.server_cpu_ms_per_upload off ${cpuOff.toFixed(2)} on ${cpuOn.toFixed(2)} (on/off ${(cpuOn / cpuOff).toFixed(3)}; the mix's server CPU over its uploads, every thread, from /proc; runs off ${fmt(cpuMs.off, 2)}, on ${fmt(cpuMs.on, 2)})`,
      );
      const mainOff = median(mainMs.off);
      const mainOn = median(mainMs.on);
      console.log(
        `replication.main_thread_cpu_ms_per_upload off ${mainOff.toFixed(2)} on ${mainOn.toFixed(2)} (on/off ${(mainOn / mainOff).toFixed(3)}; the thread that answers requests and commits, /proc/<pid>/task/<pid>; runs off ${fmt(mainMs.off, 2)}, on ${fmt(mainMs.on, 2)})`,
      );
      lags.sort((a, b) => a - b);
      console.log(
        `replication.lag_seconds under that load: p50 ${quantile(lags, 0.5).toFixed(2)} p99 ${quantile(lags, 0.99).toFixed(2)} max ${lags.at(-1)!.toFixed(2)} (coffer_replication_lag_seconds every 100 ms, ${lags.length} samples; a commit also waits up to REPLICATE_INTERVAL_MS = 1 s before its segment is written)`,
      );
      for (const mode of ['off', 'on'] as const) await sides[mode].stop();
    }

    // 2. A destination outage under load, then the catch-up.
    if (parts.has('outage')) {
      const dest = path.join(work, 'outage');
      const server = await startBenchServer({ ...base, REPLICATE_TO: dest });
      servers.push(server);
      const token = await adminToken(server.url);
      const load = mixedLoad(server.url, token, outageSeconds + 40, 4);
      await Bun.sleep(3000);
      fs.renameSync(dest, `${dest}.aside`);
      fs.writeFileSync(dest, 'the destination is away');
      await Bun.sleep(outageSeconds * 1000);
      const backlog = await metric(server.url, 'coffer_replication_backlog_bytes');
      const lagAtEnd = await metric(server.url, 'coffer_replication_lag_seconds');
      fs.rmSync(dest);
      fs.renameSync(`${dest}.aside`, dest);
      const back = performance.now();
      let caughtUp = Number.NaN;
      while (performance.now() - back < 120_000) {
        if ((await metric(server.url, 'coffer_replication_lag_seconds')) < 1.5) {
          caughtUp = (performance.now() - back) / 1000;
          break;
        }
        await Bun.sleep(100);
      }
      const { ids } = await load;
      await server.stop();
      const restored = path.join(work, 'outage-restored');
      cli(['restore', '--from-replica', dest, '--data-dir', restored], base);
      const db = new Database(path.join(restored, 'coffer.db'), { readonly: true });
      const have = new Set(
        db
          .query<{ id: string }, []>(`SELECT id FROM items WHERE type = 'file'`)
          .all()
          .map((r) => r.id),
      );
      db.close();
      const lost = ids.filter((id) => !have.has(id)).length;
      console.log(
        `replication.catch_up_after_${outageSeconds}s_outage_seconds ${caughtUp.toFixed(2)} (lag at the end of the outage ${lagAtEnd.toFixed(1)} s, ${(backlog / MiB).toFixed(1)} MiB waiting on disk; under load from 4 clients; ${lost} of ${ids.length} acknowledged uploads missing from the restored replica)`,
      );
    }

    // 3. A large database with many segments: restore, standby, promotion.
    if (parts.has('restore')) {
      const dataDir = path.join(work, 'big');
      const dest = path.join(work, 'big-replica');
      let server = await startBenchServer(base, dataDir, { keepDataDir: true });
      await adminToken(server.url);
      await server.stop();
      const db = new Database(path.join(dataDir, 'coffer.db'));
      db.run('CREATE TABLE bench_filler (b BLOB)');
      const insert = db.query('INSERT INTO bench_filler VALUES (randomblob(?))');
      db.transaction(() => {
        for (let i = 0; i < dbMiB; i++) insert.run(MiB);
      })();
      db.run('PRAGMA wal_checkpoint(TRUNCATE)');
      db.close();
      server = await startBenchServer({ ...base, REPLICATE_TO: dest, REPLICATE_INTERVAL_MS: '50' }, dataDir, { keepDataDir: true });
      servers.push(server);
      const token = await signIn(server.url);
      const c = clientOf(server.url, token);
      const id = await c.upload('renamed-every-segment.txt', randomBytes(100));
      const segments = () => (fs.existsSync(dest) ? fs.readdirSync(dest).filter((n) => n.includes('_wal_')).length : 0);
      const producing = performance.now();
      for (let i = 0; segments() < segmentsWanted; i++) {
        await c.post('/api/files/rename', { id, name: `renamed-${i}.txt` });
        await Bun.sleep(50);
      }
      const produced = (performance.now() - producing) / 1000;
      const replicaBytes = dirBytes(dest);

      const standbyDir = path.join(work, 'big-standby');
      const port = 30000 + Math.floor(Math.random() * 2700);
      const followStart = performance.now();
      const standby = Bun.spawn(
        [process.execPath, MAIN, 'serve', '--port', String(port), '--host', '127.0.0.1', '--data-dir', standbyDir, '--standby', dest],
        {
          env: { PATH: process.env.PATH ?? '/usr/bin:/bin', COFFER_CONFIG: '/dev/null', ...base, REPLICATE_INTERVAL_MS: '200' },
          stdout: 'ignore',
          stderr: 'inherit',
        },
      );
      const standbyUrl = `http://127.0.0.1:${port}`;
      const health = async () => {
        try {
          return (await (await fetch(`${standbyUrl}/health`)).json()) as { status: string; lagSeconds?: number };
        } catch {
          return null;
        }
      };
      for (;;) {
        const h = await health();
        if (h?.status === 'standby' && h.lagSeconds === 0) break;
        await Bun.sleep(100);
      }
      const followSeconds = (performance.now() - followStart) / 1000;
      await server.stop();

      const restored = path.join(work, 'big-restored');
      const restore = cli(['restore', '--from-replica', dest, '--data-dir', restored, '--json'], base);
      const parts = (
        JSON.parse(restore.out.slice(0, restore.out.lastIndexOf('}') + 1)) as {
          seconds: { snapshot: number; segments: number; check: number };
        }
      ).seconds;
      const segs = segments();
      const perSegmentMs = (parts.segments * 1000) / segs;
      const promoteStart = performance.now();
      const promote = await fetch(`${standbyUrl}/api/admin/promote`, { method: 'POST' });
      if (!promote.ok) throw new Error(`promote: ${promote.status} ${await promote.text()}`);
      for (;;) {
        const h = await health();
        if (h?.status === 'ok') break;
        await Bun.sleep(20);
      }
      const promoteSeconds = (performance.now() - promoteStart) / 1000;
      standby.kill('SIGTERM');
      await standby.exited;
      console.log(
        `replication.restore_${dbMiB}MiB_database_seconds ${restore.seconds.toFixed(1)} with ${segs} segments (${(replicaBytes / MiB).toFixed(0)} MiB at the destination, produced in ${produced.toFixed(0)} s): snapshot ${parts.snapshot.toFixed(1)} s, segments ${parts.segments.toFixed(1)} s (${perSegmentMs.toFixed(2)} ms each), integrity check ${parts.check.toFixed(1)} s; a day of one segment every second (86,400) would take about ${(restore.seconds + ((86_400 - segs) * perSegmentMs) / 1000).toFixed(0)} s`,
      );
      console.log(`replication.standby_first_sync_${dbMiB}MiB_seconds ${followSeconds.toFixed(1)}`);
      console.log(
        `replication.promote_seconds ${promoteSeconds.toFixed(2)} (POST /api/admin/promote until /health answers as the primary, ${dbMiB} MiB database)`,
      );
    }

    // 4. The replica's growth under a soak-like mix at the soak bench's rate (10 operations a second).
    if (parts.has('soak')) {
      const dest = path.join(work, 'soak');
      const server = await startBenchServer({ ...base, REPLICATE_TO: dest });
      servers.push(server);
      const token = await adminToken(server.url);
      const c = clientOf(server.url, token);
      const ids: string[] = [];
      for (let i = 0; i < 20; i++) ids.push(await c.upload(`seed-${i}.txt`, randomBytes(4096)));
      const before = dirBytes(dest, (n) => n.includes('_wal_'));
      const end = performance.now() + soakMinutes * 60_000;
      let ops = 0;
      for (let i = 0; performance.now() < end; i++) {
        const started = performance.now();
        const pick = ids[Math.floor(Math.random() * ids.length)]!;
        switch (i % 10) {
          case 0:
          case 1:
            ids.push(await c.upload(`soak-${i}.bin`, randomBytes(i % 20 === 0 ? 256 * 1024 : 4096)));
            break;
          case 2:
            await c.post('/api/files/share', { ids: [pick], shared: true });
            break;
          case 3:
            await c.post('/api/files/delete', { ids: [ids.pop()] });
            break;
          case 4:
            await c.get(`/api/files/${pick}/download`);
            break;
          default:
            await c.get('/api/files?limit=50');
        }
        ops++;
        await Bun.sleep(Math.max(0, 100 - (performance.now() - started)));
      }
      await Bun.sleep(1500);
      const grown = dirBytes(dest, (n) => n.includes('_wal_')) - before;
      const snapshot = dirBytes(dest, (n) => n.endsWith('_snapshot'));
      console.log(
        `replication.replica_bytes_per_day_soak_mix ${((grown * (1440 / soakMinutes)) / MiB).toFixed(0)} MiB of segments (${(grown / MiB).toFixed(1)} MiB in ${soakMinutes} min at ${(ops / (soakMinutes * 60)).toFixed(1)} operations/s: uploads, shares, trash, downloads, listings; plus a daily snapshot, ${(snapshot / MiB).toFixed(1)} MiB here)`,
      );
      await server.stop();
    }
  } finally {
    for (const s of servers) await s.stop().catch(() => {});
    fs.rmSync(work, { recursive: true, force: true });
  }
}
