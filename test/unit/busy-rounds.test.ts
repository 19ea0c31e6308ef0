import { afterAll, describe, expect, test } from 'bun:test';
import { Database } from 'bun:sqlite';
import fs from 'node:fs';
import path from 'node:path';
import { BusyRounds } from '../../src/db/busy.ts';
import { closeDatabase, openDatabase } from '../../src/db/client.ts';
import { migrate } from '../../src/db/migrate.ts';
import { IndexWriter } from '../../src/services/search/extractor.ts';
import { isDatabaseBusy } from '../../src/errors.ts';
import { memoryLogger } from '../helpers/logs.ts';
import { tempDir } from '../helpers/server.ts';

const dir = tempDir('coffer-busy-');
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** Two connections to one WAL database, the first waiting 20 ms for a lock. */
function pair(name: string): [Database, Database] {
  const file = path.join(dir, name);
  const a = new Database(file, { create: true, strict: true });
  a.run('PRAGMA journal_mode = WAL');
  a.run('CREATE TABLE t (x INTEGER)');
  a.run('PRAGMA busy_timeout = 20');
  return [a, new Database(file, { strict: true })];
}

const thrown = (fn: () => unknown): unknown => {
  try {
    fn();
  } catch (err) {
    return err;
  }
  throw new Error('did not throw');
};

describe('a busy database', () => {
  test('a lock held past the wait and a stale snapshot are both busy; other errors are not', () => {
    const [a, b] = pair('codes.db');
    b.run('BEGIN IMMEDIATE');
    const timedOut = thrown(() => a.run('INSERT INTO t VALUES (1)'));
    b.run('ROLLBACK');
    // A deferred transaction that read, then writes after another connection committed: busy at once, whatever the wait.
    a.run('BEGIN');
    a.query('SELECT * FROM t').all();
    b.run('INSERT INTO t VALUES (2)');
    const stale = thrown(() => a.run('INSERT INTO t VALUES (3)'));
    a.run('ROLLBACK');
    expect([(timedOut as { code: string }).code, (stale as { code: string }).code]).toEqual(['SQLITE_BUSY', 'SQLITE_BUSY_SNAPSHOT']);
    expect(isDatabaseBusy(timedOut)).toBe(true);
    expect(isDatabaseBusy(stale)).toBe(true);
    expect(isDatabaseBusy(thrown(() => a.run('INSERT INTO missing VALUES (1)')))).toBe(false);
    expect(isDatabaseBusy(new Error('database is locked'))).toBe(false);
    expect(isDatabaseBusy(null)).toBe(false);
    a.close();
    b.close();
  });

  test('rounds: a busy one answers its fallback; a spell of them is logged once as it begins and once as it ends', () => {
    const [a, b] = pair('rounds.db');
    const log = memoryLogger();
    const rounds = new BusyRounds(log, 'test loop');
    const write = () => a.run('INSERT INTO t VALUES (1)').changes;
    b.run('BEGIN IMMEDIATE');
    expect([rounds.run(write, -1), rounds.run(write, -1), rounds.run(write, -1)]).toEqual([-1, -1, -1]);
    b.run('ROLLBACK');
    expect(rounds.run(write, -1)).toBe(1);
    expect(rounds.run(write, -1)).toBe(1);
    expect(log.lines.map((l) => [l.level, l.msg, l.fields.what])).toEqual([
      ['warn', 'database busy', 'test loop'],
      ['info', 'database free again', 'test loop'],
    ]);
    expect(() => rounds.run(() => a.run('INSERT INTO missing VALUES (1)').changes, -1)).toThrow('no such table');
    a.close();
    b.close();
  });

  test('until: a write is tried again until the lock goes, and given up once stopped', async () => {
    const [a, b] = pair('until.db');
    const rounds = new BusyRounds(memoryLogger(), 'test loop');
    b.run('BEGIN IMMEDIATE');
    setTimeout(() => b.run('ROLLBACK'), 200);
    expect(
      await rounds.until(
        () => a.run('INSERT INTO t VALUES (1)'),
        () => false,
      ),
    ).toBe(true);
    expect(a.query<{ n: number }, []>('SELECT COUNT(*) AS n FROM t').get()!.n).toBe(1);
    b.run('BEGIN IMMEDIATE');
    expect(
      await rounds.until(
        () => a.run('INSERT INTO t VALUES (2)'),
        () => true,
      ),
    ).toBe(false);
    b.run('ROLLBACK');
    expect(a.query<{ n: number }, []>('SELECT COUNT(*) AS n FROM t').get()!.n).toBe(1);
    a.close();
    b.close();
  });

  test("the index writer's thread hands its busy error back as one (its connection waits its own 5 s)", async () => {
    const file = path.join(dir, 'writer.db');
    const made = openDatabase(file);
    migrate(made);
    closeDatabase(made);
    const holder = openDatabase(file);
    const writer = new IndexWriter(file);
    try {
      holder.$client.run('BEGIN IMMEDIATE');
      const doc = {
        seq: 1,
        id: 'i',
        accountId: 'a',
        name: 'n',
        size: 1,
        storageKey: 'k',
        wrappedKey: null,
        library: false,
        optedOut: false,
      };
      const err = await writer.record([{ file: doc, state: 'empty', text: null }], [], 0).catch((e: unknown) => e);
      // The tries counted before extraction are written the same way.
      const counting = await writer.begin(['1:k'], false, [], 0).catch((e: unknown) => e);
      holder.$client.run('ROLLBACK');
      expect(isDatabaseBusy(err)).toBe(true);
      expect(isDatabaseBusy(counting)).toBe(true);
      expect(await writer.record([{ file: doc, state: 'empty', text: null }], [], 0)).toBe(0);
      expect(await writer.begin(['1:k'], false, [], 0)).toEqual(['counted']);
    } finally {
      await writer.close();
      closeDatabase(holder);
    }
  });
});
