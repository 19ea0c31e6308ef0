import fs from 'node:fs';
import path from 'node:path';
import { Database } from 'bun:sqlite';
import { spreadTempDir } from './fixtures.ts';
import { compileBareElysia } from './requests.ts';
import { adminToken, benchExecutable, spawnServer } from './server.ts';
import { median } from './streams.ts';

const fmt = (n: number, digits = 0) => n.toFixed(digits);
const WARM = Number(process.env.ROUTE_BENCH_WARM ?? 15_000);
const COUNTED = Number(process.env.ROUTE_BENCH_REQUESTS ?? 4_000);
const ROUNDS = Number(process.env.ROUTE_BENCH_ROUNDS ?? 3);

interface Target {
  name: string;
  command: (port: number) => string[];
  path: string;
  header: string;
  env?: Record<string, string>;
}

function run(cmd: string[], what: string): string {
  const r = Bun.spawnSync(cmd, { stdout: 'pipe', stderr: 'pipe' });
  if (r.exitCode !== 0) throw new Error(`${what} failed (${cmd[0]}: Debian packages valgrind and apache2-utils): ${r.stderr.toString()}`);
  return r.stdout.toString();
}

/**
 * Instructions the server's JavaScript thread runs per request, under callgrind: started with instrumentation
 * off, WARM requests (`ab -k -c 4`) to warm the JIT, then instrumentation on for exactly COUNTED requests.
 */
async function instructionsPerRequest(dir: string, t: Target, round: number): Promise<number> {
  const port = 30000 + Math.floor(Math.random() * 2700);
  const out = path.join(dir, `callgrind-${t.name}-${round}.out`);
  const proc = Bun.spawn(
    ['valgrind', '--tool=callgrind', '--instr-atstart=no', '--separate-threads=yes', `--callgrind-out-file=${out}`, ...t.command(port)],
    { env: { PATH: process.env.PATH ?? '/usr/bin:/bin', ...t.env }, stdout: 'ignore', stderr: 'ignore' },
  );
  try {
    const url = `http://127.0.0.1:${port}${t.path}`;
    const [name, value] = t.header.split(': ') as [string, string];
    for (let i = 0; ; i++) {
      try {
        if ((await fetch(url, { headers: { [name]: value } })).ok) break;
      } catch {
        if (proc.exitCode !== null || i > 3000) throw new Error(`${t.name} did not start under valgrind`);
        await Bun.sleep(50);
      }
    }
    const ab = (n: number) => {
      const text = run(['ab', '-q', '-k', '-c', '4', '-n', String(n), '-H', t.header, url], 'ab');
      if (!/Failed requests:\s+0\b/.test(text) || /Non-2xx/.test(text)) throw new Error(`${t.name}: failed or non-2xx answers\n${text}`);
    };
    ab(WARM);
    run(['callgrind_control', '-i', 'on', String(proc.pid)], 'callgrind_control');
    ab(COUNTED);
    run(['callgrind_control', '-i', 'off', String(proc.pid)], 'callgrind_control');
    run(['callgrind_control', '-d', String(proc.pid)], 'callgrind_control');
    // The dump's thread 1 is the JavaScript thread (the runtime's I/O and JIT threads are the others).
    const dump = `${out}.1-01`;
    for (let i = 0; !fs.existsSync(dump) || !/^totals:/m.test(fs.readFileSync(dump, 'utf8')); i++) {
      if (i > 200) throw new Error(`${t.name}: no callgrind dump`);
      await Bun.sleep(50);
    }
    return Number(/^totals:\s+(\d+)/m.exec(fs.readFileSync(dump, 'utf8'))![1]) / COUNTED;
  } finally {
    proc.kill('SIGTERM');
    await proc.exited;
  }
}

/**
 * `npm run bench -- route-instructions`: the profile route's instructions per request on the JavaScript thread under
 * callgrind, which unlike CPU time do not move with other load on the machine: the built executable beside its
 * floors (bench/bare-read.ts in bare Bun; bench/bare-elysia.ts compiled as Coffer is, alone and with minimal forms of
 * the hooks Coffer runs on every request), each in turn in every round (order reversed every other round).
 * Needs valgrind and ab; about six minutes a round.
 */
export async function runRouteInstructionsBench(): Promise<void> {
  const dir = spreadTempDir('coffer-bench-route-');
  try {
    const exe = benchExecutable();
    const env = { LOG_LEVEL: 'info', COFFER_GENERAL_RATE_LIMIT: '1000000000' };
    const { url, proc } = await spawnServer([exe], dir, env);
    const token = await adminToken(url);
    const profile = (await (await fetch(`${url}/api/profile`, { headers: { authorization: `Bearer ${token}` } })).json()) as { id: string };
    proc.kill('SIGTERM');
    await proc.exited;
    const dbPath = path.join(dir, 'coffer.db');
    const db = new Database(dbPath, { readonly: true });
    const session = db.query<{ id: string }, [string]>('SELECT id FROM sessions WHERE user_id = ?').get(profile.id)!.id;
    db.close();
    const elysia = compileBareElysia(dir);
    const targets: Target[] = [
      {
        name: 'coffer',
        command: (port) => [exe, 'serve', '--port', String(port), '--host', '127.0.0.1', '--data-dir', dir],
        path: '/api/profile',
        header: `Authorization: Bearer ${token}`,
        env,
      },
      {
        name: 'bare_bun',
        command: (port) => [process.execPath, path.join(import.meta.dir, 'bare-read.ts'), dbPath, String(port), profile.id],
        path: '/profile',
        header: 'Accept: */*',
      },
      {
        name: 'bare_elysia',
        command: (port) => [elysia, dbPath, String(port), profile.id, 'bare'],
        path: '/profile',
        header: 'Accept: */*',
      },
      {
        name: 'elysia_with_hooks',
        command: (port) => [elysia, dbPath, String(port), profile.id, 'hooks'],
        path: '/profile',
        header: `Authorization: Bearer ${session}`,
      },
    ];
    const counts = new Map(targets.map((t) => [t.name, [] as number[]]));
    for (let round = 0; round < ROUNDS; round++) {
      for (const t of round % 2 === 0 ? targets : [...targets].reverse())
        counts.get(t.name)!.push(await instructionsPerRequest(dir, t, round));
    }
    const coffer = counts.get('coffer')!;
    console.log(
      `route.coffer_profile_instructions ${fmt(median(coffer))} per request on the JavaScript thread (rounds ${coffer.map((c) => fmt(c)).join(', ')}; callgrind, ${WARM} requests to warm, ${COUNTED} counted, ab -k -c 4)`,
    );
    for (const t of targets.slice(1)) {
      const own = counts.get(t.name)!;
      console.log(
        `route.${t.name}_profile_instructions ${fmt(median(own))} (rounds ${own.map((c) => fmt(c)).join(', ')}); Coffer ${fmt(median(coffer) / median(own), 2)}× (rounds ${coffer.map((c, i) => fmt(c / own[i]!, 2)).join(', ')})`,
      );
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.main) await runRouteInstructionsBench();
