import { afterAll, beforeAll } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import type { memoryLogger } from './logs.ts';
import { skipWithout } from './prerequisites.ts';
import * as seed from './seed.ts';
import { startTestServer, type TestServer, tempDir } from './server.ts';

/** The Nextcloud desktop client's command-line twin, from Debian (`apt-get install nextcloud-desktop-cmd`). */
const NEXTCLOUDCMD = Bun.which('nextcloudcmd');
export const NO_NEXTCLOUDCMD = skipWithout(
  NEXTCLOUDCMD ? null : 'the `nextcloudcmd` command is not installed (apt-get install nextcloud-desktop-cmd)',
  'the Nextcloud desktop client (nextcloudcmd) tests',
);

/** One run's outcome: its exit code, its output (stdout, and stdout with stderr), and its requests to the server as `METHOD path`. */
export interface ClientRun {
  exitCode: number;
  stdout: string;
  output: string;
  requests: string[];
}

/** Runs a client (nextcloudcmd, rclone) to its end against the server whose access log is in `logger`. */
export async function runClient(cmd: string[], logger: ReturnType<typeof memoryLogger>, env?: Record<string, string>): Promise<ClientRun> {
  const from = logger.lines.length;
  // Spawned, not spawnSync: the server answers from this process's event loop. Bun.spawn passes the environment the process started with, not process.env's changes.
  const proc = Bun.spawn(cmd, { stdout: 'pipe', stderr: 'pipe', env: env ? { ...process.env, ...env } : undefined });
  const [stderr, stdout] = await Promise.all([new Response(proc.stderr).text(), new Response(proc.stdout).text()]);
  const exitCode = await proc.exited;
  // The access log line of the last answer comes right after it.
  await Bun.sleep(50);
  const requests = logger.lines
    .slice(from)
    .filter((l) => l.msg === 'request')
    .map((l) => `${l.fields.method} ${decodeURIComponent(String(l.fields.path))}`);
  return { exitCode, stdout, output: stdout + stderr, requests };
}

/** The run, which must have succeeded; else an error with the end of its output. */
export async function succeeded(run: Promise<ClientRun>): Promise<ClientRun> {
  const done = await run;
  if (done.exitCode !== 0) throw new Error(`the client failed (${done.exitCode}): ${done.output.slice(-4000)}`);
  return done;
}

/** One sync run of `local` with the server at `url` (its access log in `logger`). */
export function nextcloudcmd(
  url: string,
  logger: ReturnType<typeof memoryLogger>,
  email: string,
  password: string,
  local: string,
  env?: Record<string, string>,
): Promise<ClientRun> {
  return runClient([NEXTCLOUDCMD!, '--non-interactive', '-u', email, '-p', password, local, url], logger, env);
}

/** Every file under `root`, by its path relative to it (NFC), with its bytes; the client's own files left out. */
export function localFiles(root: string): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  for (const entry of fs.readdirSync(root, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const full = path.join(entry.parentPath, entry.name);
    const rel = path.relative(root, full);
    if (rel.startsWith('.sync_') || rel.startsWith('._sync_') || rel.includes('.sync-exclude')) continue;
    out.set(rel.normalize('NFC'), fs.readFileSync(full));
  }
  return out;
}

/**
 * A nextcloudcmd test file's server, logging to `logger`, with an admin made, and a temp folder (`prefix`) for the
 * client's local copies; `set` hands them to the file. Without nextcloudcmd nothing starts.
 */
export function nextcloudcmdServer(
  logger: ReturnType<typeof memoryLogger>,
  prefix: string,
  set: (s: { t: TestServer; dir: string; admin: seed.SeededLogin }) => void,
): void {
  let t: TestServer | undefined;
  let dir: string | undefined;
  beforeAll(async () => {
    if (NO_NEXTCLOUDCMD) return;
    t = await startTestServer({ logger });
    const admin = await seed.admin(t);
    dir = tempDir(prefix);
    set({ t, dir, admin });
  });
  afterAll(async () => {
    if (NO_NEXTCLOUDCMD) return;
    await t?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });
}
