import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isAlive } from '../../src/lib/pid.ts';

/**
 * Every temp dir a test run makes lives under one root, `<tmp>/coffer-run-<pid>-<random>`, removed as the run exits.
 * A run killed part-way cannot remove it: the next run's first temp dir removes every root whose process is gone.
 */
const PREFIX = 'coffer-run-';
const OWNER = 'owner.json';
/** A root this young without its owner file may be one another run is making right now. */
const CLAIM_GRACE_MS = 60_000;

let root: string | null = null;

/** This run's root, made (and stale ones removed) at the first call. */
function runRoot(): string {
  if (root) return root;
  removeStaleRoots(os.tmpdir());
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `${PREFIX}${process.pid}-`));
  // Passable by others, as /tmp is: tests that run Coffer as another user open up their own dirs in it (each mkdtemp is 0700).
  fs.chmodSync(dir, 0o755);
  fs.writeFileSync(path.join(dir, OWNER), JSON.stringify({ pid: process.pid, started: processStart(process.pid) }));
  process.once('exit', removeRunRoot);
  root = dir;
  return dir;
}

/** Removes this run's root, as the run ends (test/setup.ts; `bun test` ends without an 'exit' event). */
export function removeRunRoot(): void {
  if (root) fs.rmSync(root, { recursive: true, force: true });
  root = null;
}

/** A new temp dir of this run. */
export function tempDir(prefix = 'coffer-test-'): string {
  return fs.mkdtempSync(path.join(runRoot(), prefix));
}

/** When `pid` started (/proc/<pid>/stat's 22nd field), so a pid reused by another process is told apart; null without /proc. */
function processStart(pid: number): string | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: fields are counted from the last ')'.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

/** Whether the run that made `dir` is gone: its process ended, or its pid now names another process. */
function isStale(dir: string, now: number): boolean {
  let owner: { pid: number; started: string | null };
  try {
    owner = JSON.parse(fs.readFileSync(path.join(dir, OWNER), 'utf8'));
  } catch {
    // No owner file: one being made now, or a run killed between its two steps; judged by age.
    const st = fs.statSync(dir, { throwIfNoEntry: false });
    return st?.isDirectory() === true && now - st.mtimeMs > CLAIM_GRACE_MS;
  }
  if (!isAlive(owner.pid)) return true;
  const started = processStart(owner.pid);
  return owner.started !== null && started !== null && started !== owner.started;
}

/** Removes the run roots under `base` whose run is gone, never a live run's; returns those removed. */
export function removeStaleRoots(base: string, now = Date.now()): string[] {
  const removed: string[] = [];
  for (const name of fs.readdirSync(base)) {
    if (!name.startsWith(PREFIX)) continue;
    const dir = path.join(base, name);
    if (!isStale(dir, now)) continue;
    try {
      fs.rmSync(dir, { recursive: true, force: true });
      removed.push(dir);
    } catch {
      // Another user's leftovers: theirs to remove.
    }
  }
  return removed;
}
