import { randomBytes } from 'node:crypto';
import type { Statement } from 'bun:sqlite';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Checkpointer } from '../src/db/checkpointer.ts';
import { closeDatabase, openDatabase } from '../src/db/client.ts';
import { DatabaseRepo } from '../src/db/repos/database.ts';
import { spreadTempDir } from './fixtures.ts';
import { flag } from './flags.ts';
import { median } from './streams.ts';

const ROWS = 50_000;

/** User plus system CPU seconds of this process or of its main (JavaScript) thread, from /proc. */
function cpuOf(statFile: string): number {
  const fields = fs.readFileSync(statFile, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

interface Run {
  p50: number;
  p99: number;
  p999: number;
  max: number;
  threadUs: number;
  processUs: number;
  checkpoints: number;
  fallbacks: number;
}

/** A table shaped like `items` (a row and five indexes on random keys, so a commit touches pages all over), filled. */
function seed(file: string): void {
  const db = openDatabase(file);
  const sqlite = db.$client;
  sqlite.run('CREATE TABLE items (id TEXT PRIMARY KEY, parent TEXT, name TEXT, size INTEGER, modified INTEGER, key TEXT, meta BLOB)');
  for (const col of ['parent, name', 'parent, modified', 'parent, size', 'key', 'name'])
    sqlite.run(`CREATE INDEX items_${col.replace(', ', '_')} ON items (${col})`);
  const insert = sqlite.prepare('INSERT INTO items VALUES (?, ?, ?, ?, ?, ?, randomblob(300))');
  sqlite.transaction(() => {
    for (let i = 0; i < ROWS; i++) row(insert);
  })();
  sqlite.run('PRAGMA wal_checkpoint(TRUNCATE)');
  closeDatabase(db);
}

function row(insert: Statement): void {
  const id = randomBytes(12).toString('base64url');
  insert.run(id, randomBytes(4).toString('hex'), `file-${id}.bin`, 4096, Date.now(), randomBytes(24).toString('base64url'));
}

/**
 * `commits` transactions of `--rows` uploads' rows each (6: a group commit of 8 clients' 4 KiB uploads), one
 * every `--gap-ms` (5: about the server's group commits per second under them; `--back-to-back`: one per turn
 * of the event loop), on a copy of the seeded database: with SQLite's automatic checkpoint inside the commits
 * ('main'), or with the Checkpointer.
 */
async function run(seeded: string, dir: string, mode: 'main' | 'worker', commits: number, round: number): Promise<Run> {
  const rows = flag('rows', 6);
  const gapMs = process.argv.includes('--back-to-back') ? 0 : flag('gap-ms', 5);
  const file = path.join(dir, `${mode}-${round}.db`);
  fs.copyFileSync(seeded, file);
  const db = openDatabase(file);
  const sqlite = db.$client;
  const repo = new DatabaseRepo(sqlite);
  const checkpointer = mode === 'worker' ? new Checkpointer(sqlite, file) : null;
  if (checkpointer) {
    repo.offloadCheckpoints(checkpointer);
    checkpointer.start();
  }
  const insert = sqlite.prepare('INSERT INTO items VALUES (?, ?, ?, ?, ?, ?, randomblob(300))');
  const times: number[] = [];
  const thread = `/proc/${process.pid}/task/${process.pid}/stat`;
  const threadBefore = cpuOf(thread);
  const processBefore = cpuOf(`/proc/${process.pid}/stat`);
  for (let i = 0; i < commits; i++) {
    const t = performance.now();
    sqlite.transaction(() => {
      for (let j = 0; j < rows; j++) row(insert);
    })();
    checkpointer?.poke();
    times.push(performance.now() - t);
    await (gapMs > 0 ? Bun.sleep(gapMs) : new Promise((resolve) => setImmediate(resolve)));
  }
  const threadUs = ((cpuOf(thread) - threadBefore) * 1e6) / commits;
  const processUs = ((cpuOf(`/proc/${process.pid}/stat`) - processBefore) * 1e6) / commits;
  await checkpointer?.stop();
  closeDatabase(db);
  times.sort((a, b) => a - b);
  const at = (q: number) => times[Math.min(times.length - 1, Math.floor(times.length * q))]!;
  return {
    p50: at(0.5),
    p99: at(0.99),
    p999: at(0.999),
    max: times.at(-1)!,
    threadUs,
    processUs,
    checkpoints: checkpointer?.checkpoints ?? 0,
    fallbacks: checkpointer?.fallbacks ?? 0,
  };
}

/**
 * `npm run bench -- checkpoint [--rounds N] [--commits N] [--rows N] [--gap-ms N | --back-to-back]`: the time of each commit on the thread that makes it,
 * with the log checkpointed inside the commits (SQLite's default) or by the Checkpointer's worker, alternated.
 * CPU is this thread's and the process's, per commit, from /proc.
 */
export async function runCheckpointBench(): Promise<void> {
  const dir = spreadTempDir('coffer-bench-checkpoint-');
  const rounds = flag('rounds', 4);
  const commits = flag('commits', 3000);
  try {
    const seeded = path.join(dir, 'seed.db');
    seed(seeded);
    const results: Record<'main' | 'worker', Run[]> = { main: [], worker: [] };
    for (let r = 0; r < rounds; r++) {
      for (const mode of r % 2 === 0 ? (['main', 'worker'] as const) : (['worker', 'main'] as const)) {
        const one = await run(seeded, dir, mode, commits, r);
        results[mode].push(one);
        console.log(
          `round ${r + 1} ${mode}: commit p50 ${one.p50.toFixed(3)} p99 ${one.p99.toFixed(2)} p99.9 ${one.p999.toFixed(2)} max ${one.max.toFixed(1)} ms; JS thread ${one.threadUs.toFixed(0)} µs, process ${one.processUs.toFixed(0)} µs CPU per commit; worker checkpoints ${one.checkpoints}, on the thread ${one.fallbacks}; load ${os.loadavg()[0]!.toFixed(1)}`,
        );
      }
    }
    console.log(
      `\n| ${rounds} rounds × ${commits} commits (medians) | p50 ms | p99 ms | p99.9 ms | max ms | JS thread µs/commit | process µs/commit |`,
    );
    console.log('|---|---|---|---|---|---|---|');
    for (const mode of ['main', 'worker'] as const) {
      const m = (pick: (r: Run) => number) => median(results[mode].map(pick));
      console.log(
        `| checkpoint ${mode === 'main' ? 'inside the commits' : 'in the worker'} | ${m((r) => r.p50).toFixed(3)} | ${m((r) => r.p99).toFixed(2)} | ${m((r) => r.p999).toFixed(2)} | ${m((r) => r.max).toFixed(1)} | ${m((r) => r.threadUs).toFixed(0)} | ${m((r) => r.processUs).toFixed(0)} |`,
      );
    }
    console.log(
      `load average ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
    );
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
