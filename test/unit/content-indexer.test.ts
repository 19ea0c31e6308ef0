import { afterAll, expect, test } from 'bun:test';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { closeDatabase, openDatabase } from '../../src/db/client.ts';
import { migrate } from '../../src/db/migrate.ts';
import { ContentRepo } from '../../src/db/repos/content.ts';
import { ContentSearchService } from '../../src/services/search/content-search.ts';
import type { QueuedDoc } from '../../src/services/search/index-writer.ts';
import { eventually } from '../helpers/eventually.ts';

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'coffer-content-indexer-'));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const EXTRACT_BATCH = 32;

/**
 * A migrated database with `files` text files of one account queued, and the indexer over it with fakes for reading,
 * extraction and the writer: `hold(n)` says whether the writer's n-th write (from 1) waits until `release()`.
 */
function indexer(name: string, files: number, hold: (write: number) => boolean) {
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
  const writes: number[][] = [];
  const held: Array<() => void> = [];
  let recorded = 0;
  let mostUnwritten = 0;
  const store = (docs: QueuedDoc[]) => {
    const n = repo.recordMany(
      docs.map((d) => ({ file: d.file, state: d.state, text: new TextEncoder().encode(`word ${d.file.name}`) })),
      1,
    );
    recorded += docs.length;
    return n;
  };
  const service = new ContentSearchService({
    repo,
    settings: { get: () => true },
    storage: { readBytes: async () => new TextEncoder().encode('words') },
    extractor: {
      size: 1,
      extract: async (file: string) => {
        extracted.push(file);
        mostUnwritten = Math.max(mostUnwritten, extracted.length - recorded);
        return { text: { channel: 1, job: extracted.length, bytes: 10 } };
      },
      kill: () => {},
    },
    writer: {
      record(docs: QueuedDoc[]) {
        writes.push(docs.map((d) => d.file.seq));
        if (!hold(writes.length)) return Promise.resolve(store(docs));
        return new Promise((resolve) => held.push(() => resolve(store(docs))));
      },
      close: async () => {},
    },
    snippets: { close: async () => {} },
    clock: { now: () => 1 },
    log: { error: () => {}, warn: () => {}, info: () => {} },
    limits: { maxTextBytes: 1024 ** 2, maxFileBytes: 1024 ** 2 },
    pollMs: 20,
  } as unknown as ConstructorParameters<typeof ContentSearchService>[0]);
  const release = () => {
    for (const go of held.splice(0)) go();
  };
  const releaseOldest = () => held.shift()?.();
  return { db, repo, service, extracted, writes, release, releaseOldest, mostUnwritten: () => mostUnwritten };
}

test("the next batch is extracted while a batch's writes run, and no file being written is extracted again", async () => {
  // 80 files, 32 to a batch: the first write (8 files) is held until the test lets it go, the others are written at once.
  const { db, repo, service, extracted, writes, release, mostUnwritten } = indexer('pipelined', 80, (n) => n === 1);
  service.start();
  try {
    // Before, a batch waited for all its writes: nothing past the first 32 files was extracted while the first write was held.
    await eventually(() => extracted.length === 80, { timeoutMs: 10_000 });
    expect(new Set(extracted).size).toBe(80);
    const seqs = writes.flat();
    expect(new Set(seqs).size).toBe(seqs.length);
    release();
    await eventually(() => repo.progress().indexed === 80 && repo.progress().pending === 0, { timeoutMs: 10_000 });
    expect(extracted.length).toBe(80);
    expect(mostUnwritten()).toBeLessThanOrEqual(EXTRACT_BATCH);
    expect(repo.search(['u'], '"f79"', 10).map((h) => h.id)).toEqual(['f79']);
  } finally {
    release();
    await service.stop();
    closeDatabase(db);
  }
}, 30_000);

test('at most one batch of texts waits for the writer: with its writes held, extraction stops at 32 and goes on as they end', async () => {
  const { db, repo, service, extracted, writes, release, releaseOldest, mostUnwritten } = indexer('bounded', 80, () => true);
  service.start();
  try {
    await eventually(() => expect([extracted.length, writes.length]).toEqual([EXTRACT_BATCH, 4]), { timeoutMs: 10_000 });
    // The oldest write ending lets exactly its 8 texts' worth of the next batch be extracted.
    releaseOldest();
    await eventually(() => expect(extracted.length).toBe(EXTRACT_BATCH + 8), { timeoutMs: 10_000 });
    await eventually(
      () => {
        release();
        return repo.progress().indexed === 80 && repo.progress().pending === 0;
      },
      { timeoutMs: 10_000 },
    );
    expect(mostUnwritten()).toBe(EXTRACT_BATCH);
  } finally {
    release();
    await service.stop();
    closeDatabase(db);
  }
}, 30_000);
