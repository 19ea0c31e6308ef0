import { afterAll, expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import { closeDatabase, openDatabase } from '../../src/db/client.ts';
import { migrate } from '../../src/db/migrate.ts';
import { ContentRepo, type IndexedDoc } from '../../src/db/repos/content.ts';
import { tempDir } from '../helpers/run-root.ts';

const dir = tempDir('coffer-content-repo-');
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** A migrated database with `files` files of one account queued for indexing, and the pending rows as the indexer reads them. */
function queued(name: string, files: number) {
  const db = openDatabase(path.join(dir, `${name}.db`));
  migrate(db);
  const sqlite = db.$client;
  sqlite.run("INSERT INTO users (id, email, email_key, created_at, updated_at) VALUES ('u', 'u@example.test', 'u@example.test', 0, 0)");
  for (let i = 0; i < files; i++) {
    sqlite.run(
      `INSERT INTO items (id, account_id, parent_id, type, name, name_key, size, mime_type, storage_key, starred, modified_at, accessed_at, created_at)
       VALUES (?, 'u', NULL, 'file', ?, ?, 1, 'text/plain', ?, 0, 0, 0, 0)`,
      [`f${i}`, `f${i}.txt`, `f${i}.txt`, `k${i}`],
    );
  }
  const repo = new ContentRepo(sqlite);
  repo.queueMissing(0, files);
  const docs: IndexedDoc[] = repo
    .nextPending(files)
    .map((file, i) => ({ file, state: 'indexed', text: new TextEncoder().encode(`boiler pressure ${i} invoice w${i}x`) }));
  const segmentRows = () => sqlite.query<{ n: number }, []>('SELECT count(*) AS n FROM content_fts_data').get()!.n;
  return { db, repo, docs, segmentRows };
}

test('a batch of texts is written as one FTS5 segment, not one per file, and finds the same files', () => {
  const batch = queued('batch', 8);
  const single = queued('single', 8);
  expect(batch.repo.recordMany(batch.docs, 1)).toBe(8);
  for (const doc of single.docs) expect(single.repo.record(doc.file, doc.state, doc.text, 1)).toBe(true);
  // A savepoint per file makes FTS5 flush its pending terms into a segment of their own each time.
  expect(batch.segmentRows()).toBeLessThan(single.segmentRows());
  for (const match of ['"boiler pressure"', '"inv"*', '"w3x"']) {
    const ids = (r: ContentRepo) =>
      r
        .search(['u'], match, 100)
        .map((h) => h.id)
        .sort();
    expect(ids(batch.repo)).toEqual(ids(single.repo));
  }
  expect(batch.repo.progress()).toEqual(single.repo.progress());
  closeDatabase(batch.db);
  closeDatabase(single.db);
});

test('a batch skips a file whose object changed while it was extracted and records the others', () => {
  const { db, repo, docs } = queued('stale', 3);
  db.$client.run("UPDATE items SET storage_key = 'new' WHERE id = 'f1'");
  expect(repo.recordMany(docs, 1)).toBe(2);
  expect(repo.search(['u'], '"w1x"', 10)).toEqual([]);
  expect(repo.search(['u'], '"w2x"', 10).map((h) => h.id)).toEqual(['f2']);
  closeDatabase(db);
});
