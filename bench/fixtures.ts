import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { loadConfig } from '../src/config.ts';
import { openContext } from '../src/composition.ts';
import type { AppContext } from '../src/context.ts';
import { createLogger } from '../src/log.ts';
import { newId } from '../src/lib/ids.ts';
import { newStorageKey } from '../src/storage/keys.ts';
import { closeDatabase, openDatabase } from '../src/db/client.ts';
import { ItemsRepo } from '../src/db/repos/items.ts';
import type { LocalDriver } from '../src/storage/local.ts';

/**
 * A temp directory for a bench that creates many files, placed by ext4 away from inodes freed in the last
 * minutes. On ext4 without a journal (this project's CI box) creating a file scans past every inode of its
 * block group freed in the last 5 s to 5 min; a bench's own clean-up of earlier data dirs leaves thousands
 * beside the next one and made small uploads 2-3x slower. `chattr +T` on the parent makes ext4 spread each
 * new directory as it spreads top-level ones; elsewhere the attribute is refused and changes nothing.
 */
export function spreadTempDir(prefix: string): string {
  const parent = path.join(os.tmpdir(), 'coffer-bench-spread');
  fs.mkdirSync(parent, { recursive: true });
  try {
    Bun.spawnSync(['chattr', '+T', parent], { stdout: 'ignore', stderr: 'ignore' });
  } catch {
    // No chattr: not ext4 tools, so nothing to spread.
  }
  return fs.mkdtempSync(path.join(parent, prefix));
}

/** Microseconds to create one empty file in a new directory under `dir` (median of 200; the files are kept, as deleting them would add to what it measures). */
export function fileCreationMicros(dir: string): number {
  const probe = fs.mkdtempSync(path.join(dir, 'probe-'));
  const times: number[] = [];
  for (let i = 0; i < 200; i++) {
    const t = performance.now();
    fs.closeSync(fs.openSync(path.join(probe, String(i)), 'wx'));
    times.push((performance.now() - t) * 1000);
  }
  times.sort((a, b) => a - b);
  return times[100]!;
}

/** A fresh data dir with its database, secrets and one owner account. */
export async function freshInstance(prefix: string): Promise<{ dir: string; ownerId: string }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  const ctx = openContext(loadConfig({ dataDir: dir }, {}), { mode: 'server', logger: createLogger('silent') });
  try {
    const row = await ctx.services.accounts.createLogin({ email: 'bench@example.test', password: 'bench password', name: 'Bench' });
    return { dir, ownerId: row.id };
  } finally {
    ctx.close();
  }
}

export function openCli(dir: string): AppContext {
  return openContext(loadConfig({ dataDir: dir }, {}), { mode: 'cli', logger: createLogger('silent') });
}

/**
 * `rows` file rows of which the first `matched` have an object, plus `objects - matched` objects with
 * no row; all older than a day. Objects are raw bytes written straight into the driver's layout (the
 * scan never reads contents), rows carry a real wrapped data key.
 */
export function seedFiles(
  ctx: AppContext,
  ownerId: string,
  opts: { rows: number; objects: number; matched: number; content?: Uint8Array },
): void {
  const content = opts.content ?? new TextEncoder().encode('x'.repeat(64));
  const driver = ctx.driver as LocalDriver;
  const old = Date.now() - 2 * 24 * 3600_000;
  const when = new Date(old);
  const dirs = new Set<string>();
  const writeObject = (key: string) => {
    const file = driver.pathOf(key);
    const dir = path.dirname(file);
    if (!dirs.has(dir)) {
      fs.mkdirSync(dir, { recursive: true });
      dirs.add(dir);
    }
    fs.writeFileSync(file, content);
    fs.utimesSync(file, when, when);
  };
  const insert = ctx.db.$client.query(
    `INSERT INTO items (id, account_id, type, name, name_key, size, mime_type, storage_key, wrapped_key, key_id, modified_at, accessed_at, created_at)
     VALUES (?, ?, 'file', ?, ?, ?, 'application/octet-stream', ?, ?, ?, ?, ?, ?)`,
  );
  const keyId = ctx.keyring.current.id;
  const BATCH = 10_000;
  for (let start = 0; start < opts.rows; start += BATCH) {
    ctx.db.$client.transaction(() => {
      for (let i = start; i < Math.min(opts.rows, start + BATCH); i++) {
        const key = newStorageKey();
        if (i < opts.matched) writeObject(key);
        const name = `f${i}.bin`;
        insert.run(newId(), ownerId, name, name, content.length, key, ctx.keyring.wrap(randomBytes(32)), keyId, old, old, old);
      }
    })();
  }
  for (let i = opts.matched; i < opts.objects; i++) writeObject(newStorageKey());
  ctx.db.$client.query('UPDATE users SET storage_used = storage_used + ? WHERE id = ?').run(opts.rows * content.length, ownerId);
}

/** Peak and current resident memory of this process, in MiB (Linux). */
export function memoryMiB(pid: number | 'self' = 'self'): { peak: number; now: number } {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)![1]) / 1024;
  return { peak: kb('VmHWM'), now: kb('VmRSS') };
}

/** CPU seconds (user + system) a process has used so far. */
export function cpuSeconds(pid: number | 'self' = 'self'): number {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  // utime and stime, in clock ticks (100 per second on Linux).
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

/** Inserts rows straight into the database beside the running server (WAL), in large transactions. */
export function seedItems(
  dbPath: string,
  accountId: string,
  make: (i: number) => { parentId: string | null; name: string; type?: 'file' | 'folder'; id?: string },
  count: number,
): void {
  const db = openDatabase(dbPath);
  const repo = new ItemsRepo(db.$client);
  const base = Date.parse('2024-01-01T00:00:00Z');
  try {
    for (let start = 0; start < count; start += 20_000) {
      db.$client.transaction(() => {
        for (let i = start; i < Math.min(count, start + 20_000); i++) {
          const m = make(i);
          const folder = m.type === 'folder';
          repo.insert({
            id: m.id ?? newId(),
            accountId,
            parentId: m.parentId,
            type: m.type ?? 'file',
            name: m.name,
            size: folder ? 0 : (i * 7919) % 1_000_000,
            mimeType: folder ? null : 'application/octet-stream',
            storageKey: null,
            wrappedKey: null,
            keyId: null,
            starred: false,
            modifiedAt: base + i * 1000,
            accessedAt: base + i * 1000,
            createdAt: base + i * 1000,
          });
        }
      })();
    }
  } finally {
    closeDatabase(db);
  }
}

/** `count` children of `parentId` straight into the tree through `ctx` (one folder in ten, the rest photos); their ids. */
export function seedTree(ctx: AppContext, accountId: string, parentId: string | null, count: number, name: string): string[] {
  const now = Date.now();
  const ids: string[] = [];
  ctx.db.$client.transaction(() => {
    for (let i = 0; i < count; i++) {
      const folder = i % 10 === 0;
      const row = ctx.repos.items.insert({
        id: newId(),
        accountId,
        parentId,
        type: folder ? 'folder' : 'file',
        name: `${name} ${String(i).padStart(4, '0')}${folder ? '' : '.jpg'}`,
        size: folder ? 0 : 1000 + i,
        mimeType: folder ? null : 'image/jpeg',
        storageKey: null,
        wrappedKey: null,
        keyId: null,
        starred: false,
        modifiedAt: now - i * 60_000,
        accessedAt: now,
        createdAt: now,
      });
      ids.push(row.id);
    }
  })();
  return ids;
}
