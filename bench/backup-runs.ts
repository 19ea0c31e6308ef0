import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { Database } from 'bun:sqlite';
import { embeddedMigrations } from '../src/db/migrations.ts';
import { folder, storeFile } from '../test/helpers/stored-files.ts';
import { testS3Env } from '../test/helpers/s3-options.ts';
import { cpuSeconds, freshInstance, openCli, seedFiles } from './fixtures.ts';
import { startBenchServer } from './server.ts';

const ROOT = path.resolve(import.meta.dir, '..');
const MAIN = path.join(ROOT, 'src/main.ts');
const MiB = 1024 ** 2;
/** Every wait here is bounded: a benchmark that hangs is a failed benchmark. */
const LIMIT_MS = 15 * 60_000;

function cli(args: string[]): number {
  const t0 = performance.now();
  const proc = Bun.spawnSync([process.execPath, MAIN, ...args], { stdout: 'pipe', stderr: 'pipe', timeout: LIMIT_MS });
  if (proc.exitCode !== 0) throw new Error(`coffer ${args[0]} failed: ${proc.stderr.toString()}`);
  return (performance.now() - t0) / 1000;
}

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;

async function login(url: string): Promise<Record<string, string>> {
  const res = await fetch(`${url}/api/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'bench@example.test', password: 'bench password' }),
  });
  if (!res.ok) throw new Error(`login failed: ${res.status}`);
  return { cookie: `token=${/token=([^;]+)/.exec(res.headers.get('set-cookie') ?? '')![1]}` };
}

/** GET /api/files latencies (ms), one request after another, until `until` resolves. */
async function listLatencies(url: string, auth: Record<string, string>, until: () => boolean, max = Infinity): Promise<number[]> {
  const out: number[] = [];
  while (!until() && out.length < max) {
    const t0 = performance.now();
    const res = await fetch(`${url}/api/files?limit=50`, { headers: auth });
    const body = (await res.json()) as unknown[] | { items?: unknown[] };
    if (!res.ok || (Array.isArray(body) ? body : (body.items ?? [])).length === 0) throw new Error(`GET /api/files: ${res.status}`);
    out.push(performance.now() - t0);
  }
  return out.sort((a, b) => a - b);
}

/** s3rver in its own process, so its CPU is not counted as Coffer's. */
async function startS3(): Promise<{ endpoint: string; stop: () => void }> {
  const child = Bun.spawn(
    [
      process.execPath,
      '-e',
      `const { startTestS3 } = await import(${JSON.stringify(path.join(ROOT, 'test/helpers/s3.ts'))}); const s = await startTestS3(); console.log(JSON.stringify({ endpoint: s.endpoint }));`,
    ],
    { stdout: 'pipe', stderr: 'inherit' },
  );
  const line = new TextDecoder().decode((await child.stdout.getReader().read()).value);
  return { endpoint: (JSON.parse(line) as { endpoint: string }).endpoint, stop: () => child.kill() };
}

/**
 * `npm run bench -- backup-scheduled`: "Back up now" (the scheduled run's job) of a BACKUP_BENCH_MIB (default
 * 2048) MiB data directory, encrypted, to a local directory and to s3rver on loopback, in one run: MiB/s,
 * the server's CPU, and GET /api/files latency (one request after another) before and while it runs.
 */
export async function runScheduledBackupBench(): Promise<void> {
  const totalMiB = Number(process.env.BACKUP_BENCH_MIB ?? 2048);
  const files = Math.max(1, Math.round(totalMiB / 4));
  const { dir, ownerId } = await freshInstance('coffer-bench-sched-');
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'coffer-bench-sched-out-'));
  const s3 = await startS3();
  try {
    const ctx = openCli(dir);
    seedFiles(ctx, ownerId, { rows: files, objects: files, matched: files, content: randomBytes(4 * MiB) });
    ctx.close();
    const passFile = path.join(out, 'passphrase');
    fs.writeFileSync(passFile, 'bench passphrase\n', { mode: 0o600 });
    const destinations: Array<[string, Record<string, string>]> = [
      ['dir', { BACKUP_DIR: path.join(out, 'archives') }],
      [
        's3',
        Object.fromEntries(
          Object.entries(testS3Env(s3.endpoint, 'backups/'))
            .filter(([k]) => k.startsWith('S3_'))
            .map(([k, v]) => [`BACKUP_${k}`, v]),
        ),
      ],
    ];
    for (const [name, env] of destinations) {
      const server = await startBenchServer({ ...env, BACKUP_PASSPHRASE_FILE: passFile, COFFER_GENERAL_RATE_LIMIT: '100000000' }, dir, {
        keepDataDir: true,
      });
      try {
        const auth = await login(server.url);
        const idle = await listLatencies(server.url, auth, () => false, 300);
        const cpu0 = cpuSeconds(server.pid);
        const started = performance.now();
        const res = await fetch(`${server.url}/api/user/backups/run`, {
          method: 'POST',
          headers: { ...auth, 'content-type': 'application/json' },
          body: '{}',
        });
        if (res.status !== 202) throw new Error(`Back up now: ${res.status} ${await res.text()}`);
        let done = false;
        let status: { lastRun: { status: string; bytes: number; durationSeconds: number; error: string | null } | null } = {
          lastRun: null,
        };
        const poll = (async () => {
          while (!done && performance.now() - started < LIMIT_MS) {
            await Bun.sleep(250);
            status = (await (await fetch(`${server.url}/api/user/backups`, { headers: auth })).json()) as typeof status;
            done = status.lastRun !== null && status.lastRun.status !== 'running';
          }
          done = true;
        })();
        const busy = await listLatencies(server.url, auth, () => done);
        await poll;
        const cpu = cpuSeconds(server.pid) - cpu0;
        const run = status.lastRun;
        if (!run || run.status !== 'succeeded') throw new Error(`backup to ${name} did not succeed: ${run?.error ?? 'timed out'}`);
        const ms = (v: number) => v.toFixed(1);
        console.log(
          `backup.scheduled_${name} MiB/s ${(run.bytes / MiB / run.durationSeconds).toFixed(0)} (${(run.bytes / MiB).toFixed(0)} MiB encrypted in ${run.durationSeconds.toFixed(1)} s); server CPU ${cpu.toFixed(1)} s (${((100 * cpu) / run.durationSeconds).toFixed(0)}% of one core)`,
        );
        console.log(
          `backup.scheduled_${name} GET /api/files p50/p99 ms idle ${ms(quantile(idle, 0.5))}/${ms(quantile(idle, 0.99))}, during the backup ${ms(quantile(busy, 0.5))}/${ms(quantile(busy, 0.99))} (${busy.length} requests; goal p99 < 20 ms)`,
        );
      } finally {
        await server.stop();
      }
    }
  } finally {
    s3.stop();
    fs.rmSync(dir, { recursive: true, force: true });
    fs.rmSync(out, { recursive: true, force: true });
  }
}

/**
 * `npm run bench -- export`: `coffer export` of EXPORT_BENCH_FILES (default 10,000) files totalling
 * EXPORT_BENCH_MIB (default 2048) MiB in 100 folders, then the same export resumed after losing the last
 * 10% of its files (and one cut short).
 */
export async function runExportBench(): Promise<void> {
  const count = Number(process.env.EXPORT_BENCH_FILES ?? 10_000);
  const totalMiB = Number(process.env.EXPORT_BENCH_MIB ?? 2048);
  const size = Math.floor((totalMiB * MiB) / count);
  const { dir, ownerId } = await freshInstance('coffer-bench-export-');
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'coffer-bench-export-out-'));
  try {
    const ctx = openCli(dir);
    const content = randomBytes(size);
    const folders: string[] = [];
    for (let f = 0; f < 100; f++) folders.push(folder(ctx, ownerId, `folder ${f}`));
    for (let i = 0; i < count; i++)
      await storeFile(ctx, ownerId, { content, name: `file ${i}.bin`, parentId: folders[i % folders.length] });
    ctx.close();
    const target = path.join(out, 'export');
    const full = cli(['export', '--to', target, '--data-dir', dir]);
    const exported = fs
      .readdirSync(target, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => path.join(e.parentPath, e.name))
      .sort();
    const lost = exported.slice(Math.floor(exported.length * 0.9));
    for (const file of lost) fs.rmSync(file);
    fs.writeFileSync(exported[0]!, content.subarray(0, size >> 1));
    const resumed = cli(['export', '--to', target, '--data-dir', dir]);
    const mib = (count * size) / MiB;
    console.log(
      `export.full files/s ${(count / full).toFixed(0)}, MiB/s ${(mib / full).toFixed(0)} (${count} files, ${mib.toFixed(0)} MiB, ${full.toFixed(1)} s, CLI start-up included)`,
    );
    console.log(
      `export.resumed seconds ${resumed.toFixed(1)} with 90% done (${lost.length + 1} files redone; the full export took ${full.toFixed(1)} s)`,
    );
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
    fs.rmSync(out, { recursive: true, force: true });
  }
}

/**
 * `npm run bench -- upgrade-snapshot`: starting on a database of UPGRADE_BENCH_MIB (default 1024) MiB that
 * needs a migration (`coffer migrate`: snapshot, then migrate), against the same command with nothing to do.
 */
export async function runUpgradeSnapshotBench(): Promise<void> {
  const totalMiB = Number(process.env.UPGRADE_BENCH_MIB ?? 1024);
  const { dir } = await freshInstance('coffer-bench-upgrade-');
  try {
    const database = path.join(dir, 'coffer.db');
    const db = new Database(database);
    db.run('CREATE TABLE bench_filler (b BLOB)');
    const insert = db.query('INSERT INTO bench_filler VALUES (randomblob(?))');
    db.transaction(() => {
      for (let i = 0; i < totalMiB; i++) insert.run(MiB);
    })();
    // The previous release's schema: the last migration not applied yet.
    const last = embeddedMigrations.at(-1)!.tag;
    db.run('DROP TABLE backup_runs');
    db.query('DELETE FROM coffer_migrations WHERE tag = ?').run(last);
    db.run('PRAGMA wal_checkpoint(TRUNCATE)');
    db.close();
    const bytes = fs.statSync(database).size;
    const upgrade = cli(['migrate', '--data-dir', dir]);
    const nothing = cli(['migrate', '--data-dir', dir]);
    const [snapshot] = fs.readdirSync(path.join(dir, 'snapshots'));
    const snapBytes = fs.statSync(path.join(dir, 'snapshots', snapshot!, 'coffer.db')).size;
    console.log(
      `upgrade.snapshot seconds ${(upgrade - nothing).toFixed(2)} (database ${(bytes / MiB).toFixed(0)} MiB, snapshot ${(snapBytes / MiB).toFixed(0)} MiB; coffer migrate ${upgrade.toFixed(2)} s with the snapshot and migration, ${nothing.toFixed(2)} s with nothing to do)`,
    );
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
