import { afterEach, beforeEach, expect, test } from 'bun:test';
import { Database } from 'bun:sqlite';
import fs from 'node:fs';
import path from 'node:path';
import { Transactions } from '../../src/db/repos/index.ts';
import { tempDir } from '../helpers/run-root.ts';

let dir: string;
let db: Database;
let other: Database;
let tx: Transactions;

beforeEach(() => {
  dir = tempDir('coffer-group-commit-');
  db = new Database(path.join(dir, 'db.sqlite'));
  db.run('PRAGMA journal_mode = WAL');
  db.run('PRAGMA foreign_keys = ON');
  db.run('CREATE TABLE parent (id INTEGER PRIMARY KEY)');
  db.run('CREATE TABLE child (id INTEGER PRIMARY KEY, parent_id INTEGER REFERENCES parent(id) DEFERRABLE INITIALLY DEFERRED)');
  db.run('INSERT INTO parent (id) VALUES (1)');
  // A second connection sees only what was committed.
  other = new Database(path.join(dir, 'db.sqlite'), { readonly: true });
  tx = new Transactions(db);
});
afterEach(() => {
  other.close();
  db.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

const committed = () => other.query<{ n: number }, []>('SELECT count(*) AS n FROM child').get()!.n;
const insert = (id: number, parentId = 1) => db.run('INSERT INTO child (id, parent_id) VALUES (?, ?)', [id, parentId]);

test('writes asked for in one turn commit together, and each settles after that commit', async () => {
  const seenByOthers: number[] = [];
  const writes = [1, 2, 3].map((id) =>
    tx.grouped(() => {
      seenByOthers.push(committed());
      insert(id);
      return id;
    }),
  );
  expect(await Promise.all(writes)).toEqual([1, 2, 3]);
  // One transaction: none of the earlier writes was committed while the later ones ran.
  expect(seenByOthers).toEqual([0, 0, 0]);
  expect(committed()).toBe(3);
});

test('a write that throws rolls back alone and rejects its own promise; the others commit', async () => {
  const results = await Promise.allSettled([
    tx.grouped(() => insert(1)),
    tx.grouped(() => {
      insert(2);
      throw new Error('quota');
    }),
    tx.grouped(() => insert(3)),
  ]);
  expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
  expect((results[1] as PromiseRejectedResult).reason.message).toBe('quota');
  expect(other.query('SELECT id FROM child ORDER BY id').all()).toEqual([{ id: 1 }, { id: 3 }]);
});

test('a commit that fails rejects every write of the group and commits none of them', async () => {
  const results = await Promise.allSettled([
    tx.grouped(() => insert(1)),
    // Valid until the commit checks the deferred foreign key: the whole commit fails.
    tx.grouped(() => insert(2, 99)),
    tx.grouped(() => {
      throw new Error('own error');
    }),
  ]);
  expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected', 'rejected']);
  expect((results[0] as PromiseRejectedResult).reason.message).toMatch(/FOREIGN KEY/);
  expect((results[2] as PromiseRejectedResult).reason.message).toBe('own error');
  expect(committed()).toBe(0);
  expect(db.inTransaction).toBe(false);
  // The next group commits as usual.
  await tx.grouped(() => insert(4));
  expect(committed()).toBe(1);
});

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Two grouped writes asked for one event-loop turn apart: what the second saw committed when it ran. */
async function twoTurnsApart(): Promise<number> {
  const first = tx.grouped(() => insert(1));
  await nextTurn();
  let seen = -1;
  const second = tx.grouped(() => {
    seen = committed();
    insert(2);
  });
  await Promise.all([first, second]);
  return seen;
}

test('while several writers have announced writes, a group waits for the writes of later turns', async () => {
  const a = tx.announce();
  const b = tx.announce();
  // One commit: the first write was not committed yet when the second ran.
  expect(await twoTurnsApart()).toBe(0);
  expect(committed()).toBe(2);
  a();
  b();
});

test('a writer alone, or none, commits in its own turn; a withdrawal counts once', async () => {
  const a = tx.announce();
  const b = tx.announce();
  b();
  b();
  expect(await twoTurnsApart()).toBe(1);
  a();
  db.run('DELETE FROM child');
  expect(await twoTurnsApart()).toBe(1);
});

test('read() sees one snapshot, runs inside another transaction as part of it, and ends its own on a throw', async () => {
  const writer = new Database(path.join(dir, 'db.sqlite'));
  const count = () => db.query<{ n: number }, []>('SELECT count(*) AS n FROM child').get()!.n;
  try {
    const seen = tx.read(() => {
      const before = count();
      writer.run('INSERT INTO child (id, parent_id) VALUES (10, 1)');
      return [before, count()];
    });
    // The other connection's commit lands after the snapshot was taken.
    expect(seen).toEqual([0, 0]);
    expect(count()).toBe(1);
    expect(() =>
      tx.read(() => {
        count();
        throw new Error('in the read');
      }),
    ).toThrow('in the read');
    expect(db.inTransaction).toBe(false);
    await tx.grouped(() => {
      insert(11);
      expect(tx.read(count)).toBe(2);
    });
    expect(committed()).toBe(2);
  } finally {
    writer.close();
  }
});
