import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { closeDatabase, openDatabase } from '../src/db/client.ts';
import { migrate } from '../src/db/migrate.ts';
import { ChangesRepo } from '../src/db/repos/changes.ts';
import { ItemsRepo } from '../src/db/repos/items.ts';
import { newId } from '../src/lib/ids.ts';

const ACCOUNTS = [
  ['big', 60_000],
  ['a2', 10_000],
  ['a3', 10_000],
  ['a4', 10_000],
  ['a5', 10_000],
] as const;
const MIMES = ['image/jpeg', 'text/plain', 'application/pdf', 'video/mp4'];

/**
 * A database of realistic size on today's schema: five accounts, 100,500 items (one account of 60,000 files with a
 * 10,000-file folder, the rest in 100 folders and at the root), a change-log row per item and a rename of one in ten,
 * each b-tree filled by inserts as a live database's is.
 */
function buildDatabase(file: string): void {
  const db = openDatabase(file);
  try {
    migrate(db);
    const sqlite = db.$client;
    const items = new ItemsRepo(sqlite);
    const changes = new ChangesRepo(sqlite);
    let at = 1_700_000_000_000;
    const change = (
      accountId: string,
      kind: string,
      item: { id: string; type: 'file' | 'folder'; name: string; parentId: string | null },
    ) =>
      changes.append({
        at,
        accountId,
        actorKind: 'login',
        actorId: accountId,
        kind,
        itemId: item.id,
        itemType: item.type,
        nameBefore: null,
        parentBefore: null,
        nameAfter: item.name,
        parentAfter: item.parentId,
        details: null,
      });
    for (const [account, files] of ACCOUNTS) {
      sqlite.run('INSERT INTO users (id, email, email_key, created_at, updated_at) VALUES (?, ?, ?, 0, 0)', [
        account,
        `${account}@example.test`,
        `${account}@example.test`,
      ]);
      sqlite.transaction(() => {
        const folders = Array.from({ length: 100 }, (_, f) => {
          const folder = items.insertFolder({ id: newId(), accountId: account, parentId: null, name: `folder-${f}` }, at++);
          change(account, 'item.created', folder);
          return folder.id;
        });
        for (let i = 0; i < files; i++) {
          at += 7;
          const parentId = account === 'big' && i < 10_000 ? folders[0]! : i % 50 === 0 ? null : folders[1 + (i % 99)]!;
          const row = items.insert({
            id: newId(),
            accountId: account,
            parentId,
            type: 'file',
            name: `file-${i}-${newId().slice(0, 6)}.bin`,
            size: 1000 + ((i * 7919) % 5_000_000),
            mimeType: MIMES[i % MIMES.length]!,
            storageKey: newId(),
            wrappedKey: 'wrapped',
            keyId: 'k1',
            starred: i % 97 === 0,
            modifiedAt: at,
            accessedAt: at,
            createdAt: at,
          });
          change(account, 'item.uploaded', row);
          if (i % 10 === 0) change(account, 'item.renamed', row);
        }
      })();
    }
    // Not vacuumed: VACUUM fills every page, and the first inserts after it split them all, which a live database does not do.
    sqlite.run('ANALYZE');
    sqlite.run('PRAGMA wal_checkpoint(TRUNCATE)');
  } finally {
    closeDatabase(db);
  }
}

/**
 * `count` 4 KiB uploads at the root of the 60,000-file account, `group` per transaction (each the item's row and its
 * change-log row, as an upload's commit writes them), from an empty log: WAL frames per upload, each frame's page
 * named by dbstat, and CPU per upload.
 */
function uploads(file: string, group: number, count: number): { frames: number; cpuUs: number; byTree: Map<string, number> } {
  const db = openDatabase(file);
  try {
    const sqlite = db.$client;
    sqlite.run('PRAGMA wal_autocheckpoint = 0');
    sqlite.run('PRAGMA wal_checkpoint(TRUNCATE)');
    const items = new ItemsRepo(sqlite);
    const changes = new ChangesRepo(sqlite);
    let at = 1_800_000_000_000;
    const cpu = process.cpuUsage();
    for (let done = 0; done < count; done += group) {
      sqlite.transaction(() => {
        for (let k = 0; k < group; k++) {
          at += 3;
          const row = items.insert({
            id: newId(),
            accountId: 'big',
            parentId: null,
            type: 'file',
            name: `upload-${newId()}.bin`,
            size: 4096,
            mimeType: 'text/plain',
            storageKey: newId(),
            wrappedKey: 'wrapped',
            keyId: 'k1',
            starred: false,
            modifiedAt: at,
            accessedAt: at,
            createdAt: at,
          });
          changes.append({
            at,
            accountId: 'big',
            actorKind: 'login',
            actorId: 'big',
            kind: 'item.uploaded',
            itemId: row.id,
            itemType: 'file',
            nameBefore: null,
            parentBefore: null,
            nameAfter: row.name,
            parentAfter: null,
            details: '{"size":4096}',
          });
        }
      })();
    }
    const used = process.cpuUsage(cpu);
    const pageSize = sqlite.query<{ page_size: number }, []>('PRAGMA page_size').get()!.page_size;
    const wal = fs.readFileSync(`${file}-wal`);
    // The log's 32-byte header, then frames of a 24-byte header (the page number first) and the page.
    const frameSize = 24 + pageSize;
    const frames = (wal.length - 32) / frameSize;
    const names = new Map(
      sqlite
        .query<{ name: string; pageno: number }, []>('SELECT name, pageno FROM dbstat')
        .all()
        .map((r) => [r.pageno, r.name]),
    );
    const byTree = new Map<string, number>();
    for (let i = 0; i < frames; i++) {
      const name = names.get(wal.readUInt32BE(32 + i * frameSize)) ?? 'free pages';
      byTree.set(name, (byTree.get(name) ?? 0) + 1 / count);
    }
    return { frames: frames / count, cpuUs: (used.user + used.system) / count, byTree };
  } finally {
    closeDatabase(db);
  }
}

/**
 * Where an upload's database writes go: WAL frames per upload by b-tree on a database of realistic size, uploads in
 * commits of 1, 4 (a group commit under load) and 100 (a bulk request), each round on a fresh copy.
 */
export async function runWalPagesBench(rounds = 3): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'coffer-bench-wal-pages-'));
  try {
    const base = path.join(dir, 'base.db');
    buildDatabase(base);
    for (const [group, count] of [
      [1, 200],
      [4, 400],
      [100, 1000],
    ] as const) {
      const frames: number[] = [];
      const cpu: number[] = [];
      const byTree = new Map<string, number>();
      for (let r = 0; r < rounds; r++) {
        const copy = path.join(dir, 'copy.db');
        for (const suffix of ['', '-wal', '-shm']) fs.rmSync(copy + suffix, { force: true });
        fs.copyFileSync(base, copy);
        const result = uploads(copy, group, count);
        frames.push(result.frames);
        cpu.push(result.cpuUs);
        for (const [name, n] of result.byTree) byTree.set(name, (byTree.get(name) ?? 0) + n / rounds);
      }
      const trees = [...byTree]
        .sort((a, b) => b[1] - a[1])
        .map(([name, n]) => `${name} ${n.toFixed(2)}`)
        .join(', ');
      console.log(
        `wal-pages.frames_per_upload commits_of ${group}: ${frames.map((f) => f.toFixed(2)).join(', ')} (${rounds} rounds of ${count}); ` +
          `cpu µs per upload ${cpu.map((c) => c.toFixed(0)).join(', ')}; by b-tree: ${trees}; load ${os.loadavg()[0]!.toFixed(1)}`,
      );
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.main) await runWalPagesBench();
