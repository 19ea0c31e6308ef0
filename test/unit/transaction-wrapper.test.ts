import { afterAll, expect, spyOn, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import { closeDatabase, openDatabase, transactOf } from '../../src/db/client.ts';
import { migrate } from '../../src/db/migrate.ts';
import { AuditRepo } from '../../src/db/repos/audit.ts';
import { Transactions } from '../../src/db/repos/index.ts';
import { ItemsRepo } from '../../src/db/repos/items.ts';
import { newId } from '../../src/lib/ids.ts';
import { auditRow } from '../helpers/audit-rows.ts';
import { tempDir } from '../helpers/server.ts';

const dir = tempDir('coffer-transaction-wrapper-');
const db = openDatabase(path.join(dir, 'coffer.db'));
migrate(db);
afterAll(() => {
  closeDatabase(db);
  fs.rmSync(dir, { recursive: true, force: true });
});
const sqlite = db.$client;
sqlite.run(`INSERT INTO users (id, email, email_key, created_at, updated_at) VALUES ('acct', 'a@x.test', 'a@x.test', 0, 0)`);

const file = (name: string) => ({
  id: newId(),
  accountId: 'acct',
  parentId: null,
  type: 'file' as const,
  name,
  size: 4096,
  mimeType: 'application/octet-stream',
  storageKey: newId(),
  wrappedKey: 'wrapped',
  keyId: 'k1',
  starred: false,
  modifiedAt: 1,
  accessedAt: 1,
  createdAt: 1,
});

test("an upload's transactions and savepoints reuse the connection's one wrapper instead of building one per write", async () => {
  const transactions = new Transactions(sqlite);
  const items = new ItemsRepo(sqlite);
  const audit = new AuditRepo(sqlite);
  sqlite.run(`INSERT INTO audit_queue (event, queued_at) VALUES ('e', 1)`);
  const built = spyOn(sqlite, 'transaction');
  try {
    // A group of uploads' writes (the intent's and the row's insert, each in its savepoint), an immediate and a batch.
    await Promise.all(Array.from({ length: 5 }, (_, i) => transactions.grouped(() => items.insert(file(`f${i}.bin`)))));
    transactions.immediate(() => items.insert(file('immediate.bin')));
    transactions.batch(() => items.insert(file('batch.bin')));
    audit.moveBatch(10, () => auditRow('file.upload'));
    expect(built).toHaveBeenCalledTimes(0);
  } finally {
    built.mockRestore();
  }
  expect(sqlite.query(`SELECT count(*) AS n FROM items WHERE account_id = 'acct'`).get()).toEqual({ n: 7 });
  expect(sqlite.query(`SELECT count(*) AS n FROM audit_log`).get()).toEqual({ n: 1 });
  expect(transactOf(sqlite)).toBe(transactOf(sqlite));
});

test('the reused wrapper keeps savepoint semantics: a nested write that throws rolls back alone', () => {
  const items = new ItemsRepo(sqlite);
  const transact = transactOf(sqlite);
  transact.immediate(() => {
    items.insert(file('kept.bin'));
    expect(() =>
      transact(() => {
        items.insert(file('dropped.bin'));
        throw new Error('refused');
      }),
    ).toThrow('refused');
  });
  const names = sqlite.query<{ name: string }, []>(`SELECT name FROM items WHERE name IN ('kept.bin', 'dropped.bin')`).all();
  expect(names).toEqual([{ name: 'kept.bin' }]);
  expect(sqlite.inTransaction).toBe(false);
});

test('a batch takes the write lock at its start: another connection committing between its read and its write cannot fail it', () => {
  const transactions = new Transactions(sqlite);
  const items = new ItemsRepo(sqlite);
  // The index writer's connection, in the server; it gives up at once where it would wait.
  const other = openDatabase(path.join(dir, 'coffer.db'));
  other.$client.run('PRAGMA busy_timeout = 0');
  try {
    transactions.batch(() => {
      sqlite.query('SELECT count(*) FROM items').get();
      // A deferred batch lets this commit, then its own first write finds its snapshot stale and fails at once.
      expect(() => other.$client.run(`UPDATE users SET updated_at = 1 WHERE id = 'acct'`)).toThrow('database is locked');
      items.insert(file('after-read.bin'));
    });
  } finally {
    closeDatabase(other);
  }
  expect(sqlite.query(`SELECT count(*) AS n FROM items WHERE name = 'after-read.bin'`).get()).toEqual({ n: 1 });
});
