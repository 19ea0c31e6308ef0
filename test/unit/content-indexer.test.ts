import { afterAll, expect, test } from 'bun:test';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { closeDatabase, openDatabase } from '../../src/db/client.ts';
import { migrate } from '../../src/db/migrate.ts';
import { ContentRepo, type IndexedDoc } from '../../src/db/repos/content.ts';
import { ContentSearchService } from '../../src/services/search/content-search.ts';
import { eventually } from '../helpers/eventually.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'coffer-content-indexer-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A migrated database with `files` text files of one account queued, and the indexer over it with fakes for reading and extraction. */
function indexer(
  name: string,
  files: number,
  writer: { record(docs: IndexedDoc[], at: number): Promise<number> },
  textOf: (name: string) => string,
) {
  const db = openDatabase(path.join(dir, `${name}.db`));
  migrate(db);
  const sqlite = db.$client;
  sqlite.run("INSERT INTO users (id, email, email_key, created_at, updated_at) VALUES ('u', 'u@example.test', 'u@example.test', 0, 0)");
  for (let i = 0; i < files; i++) {
    sqlite.run(
      `INSERT INTO items (id, account_id, parent_id, type, name, name_key, size, mime_type, storage_key, wrapped_key, starred, modified_at, accessed_at, created_at)
       VALUES (?, 'u', NULL, 'file', ?, ?, 5, 'text/plain', ?, 'w', 0, 0, 0, 0)`,
      [`f${i}`, `f${i}.txt`, `f${i}.txt`, `k${i}`],
    );
  }
  const repo = new ContentRepo(sqlite);
  repo.queueMissing(0, files);
  const extracted: string[] = [];
  const service = new ContentSearchService({
    repo,
    settings: { get: () => true },
    storage: { readBytes: async () => new TextEncoder().encode('words') },
    extractor: {
      size: 1,
      extract: async (file: string) => {
        extracted.push(file);
        return { text: new TextEncoder().encode(textOf(file)) };
      },
      kill: () => {},
    },
    writer: { ...writer, close: async () => {} },
    snippets: { close: async () => {} },
    clock: { now: () => 1 },
    log: { error: () => {}, warn: () => {}, info: () => {} },
    limits: { maxTextBytes: 1024 ** 2, maxFileBytes: 1024 ** 2 },
    pollMs: 20,
  } as unknown as ConstructorParameters<typeof ContentSearchService>[0]);
  return { db, repo, service, extracted };
}

test('the writer is handed the next batch while the last write of a batch runs, and no file in that write is extracted again', async () => {
  const writes: number[][] = [];
  let releaseFourth = null as (() => void) | null;
  // 40 files: one extraction batch of 32 (four writes of 8), then 8 more.
  const { db, repo, service, extracted } = indexer(
    'pipelined',
    40,
    {
      // The fourth write (the first batch's last) is held until the test lets it go; the others are written at once.
      record(docs, at) {
        writes.push(docs.map((d) => d.file.seq));
        if (writes.length !== 4) return Promise.resolve(repo.recordMany(docs, at));
        return new Promise((resolve) => {
          releaseFourth = () => resolve(repo.recordMany(docs, at));
        });
      },
    },
    (file) => `word ${file}`,
  );
  service.start();
  try {
    // Before, a batch waited for all its writes: the fifth write never came while the fourth was held.
    await eventually(() => writes.length >= 5, { timeoutMs: 10_000 });
    expect(releaseFourth).not.toBeNull();
    const seqs = writes.flat();
    expect(new Set(seqs).size).toBe(seqs.length);
    expect(new Set(extracted).size).toBe(extracted.length);
    releaseFourth!();
    await eventually(() => repo.progress().indexed === 40 && repo.progress().pending === 0, { timeoutMs: 10_000 });
    expect(extracted.length).toBe(40);
    expect(repo.search(['u'], '"f39"', 10).map((h) => h.id)).toEqual(['f39']);
  } finally {
    releaseFourth?.();
    await service.stop();
    closeDatabase(db);
  }
}, 30_000);

test('a write transaction holds at most 384 KiB of text, or one larger document, so a request waits little for the lock', async () => {
  const writes: number[] = [];
  const sizes: Record<string, number> = {
    'f0.txt': 150,
    'f1.txt': 150,
    'f2.txt': 150,
    'f3.txt': 500,
    'f4.txt': 100,
    'f5.txt': 100,
    'f6.txt': 100,
  };
  const { db, repo, service } = indexer(
    'bounded',
    12,
    {
      record(docs, at) {
        writes.push(docs.reduce((a, d) => a + d.text.byteLength, 0));
        return Promise.resolve(repo.recordMany(docs, at));
      },
    },
    (file) => `word ${'x'.repeat((sizes[file] ?? 20) * 1024 - 5)}`,
  );
  service.start();
  try {
    await eventually(() => repo.progress().indexed === 12 && repo.progress().pending === 0, { timeoutMs: 10_000 });
    // Before, up to 1 MiB and past it: the first five files' 1,050 KiB in one transaction.
    expect(writes.map((b) => b / 1024)).toEqual([300, 150, 500, 380, 20]);
  } finally {
    await service.stop();
    closeDatabase(db);
  }
}, 30_000);
