import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Database } from 'bun:sqlite';
import fs from 'node:fs';
import path from 'node:path';
import { closeDatabase, openDatabase, type Db } from '../../src/db/client.ts';
import { migrate } from '../../src/db/migrate.ts';
import { DatabaseRepo } from '../../src/db/repos/database.ts';
import { tempDir } from '../helpers/server.ts';

// The versions are kept between requests while the WAL index's header says nothing was committed: every commit must still reach them.
describe('DatabaseRepo versions', () => {
  const dir = tempDir('coffer-db-versions-');
  const file = path.join(dir, 'coffer.db');
  let db: Db;
  let repo: DatabaseRepo;
  let other: Database;

  /** Another process commits, as the CLI does beside the server: it opens the database, writes, and closes it. */
  const commitElsewhere = (generation: number) => {
    const script = `const { Database } = require('bun:sqlite'); const db = new Database(${JSON.stringify(file)}); db.run('PRAGMA busy_timeout = 5000'); db.run('UPDATE auth_generation SET generation = ${generation} WHERE id = 1'); db.close();`;
    const run = Bun.spawnSync([process.execPath, '-e', script], { stderr: 'pipe' });
    if (run.exitCode !== 0) throw new Error(run.stderr.toString());
  };

  beforeAll(() => {
    db = openDatabase(file);
    migrate(db);
    repo = new DatabaseRepo(db.$client);
    other = new Database(file);
    other.run('PRAGMA busy_timeout = 5000');
  });
  afterAll(() => {
    other.close();
    closeDatabase(db);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('stands while nothing is committed', () => {
    const first = repo.authVersion();
    expect(repo.authVersion()).toBe(first);
    other.query('SELECT generation FROM auth_generation').get();
    expect(repo.authVersion()).toBe(first);
  });

  test("moves with another connection's commit", () => {
    repo.authVersion();
    other.run('UPDATE auth_generation SET generation = 101 WHERE id = 1');
    expect(repo.authVersion()).toBe('101');
    other.run('UPDATE auth_generation SET generation = 102 WHERE id = 1');
    expect(repo.authVersion()).toBe('102');
  });

  test("moves with another process's commit, again after that process has closed the database", () => {
    repo.authVersion();
    commitElsewhere(111);
    expect(repo.authVersion()).toBe('111');
    commitElsewhere(112);
    expect(repo.authVersion()).toBe('112');
    // This process's connections still coordinate with others through the index: its locks were not dropped.
    other.run('UPDATE auth_generation SET generation = 113 WHERE id = 1');
    commitElsewhere(114);
    expect(repo.authVersion()).toBe('114');
    expect(other.query<{ g: number }, []>('SELECT generation AS g FROM auth_generation').get()!.g).toBe(114);
  });

  test("moves with this connection's own commit", () => {
    repo.authVersion();
    db.$client.run('UPDATE auth_generation SET generation = 201 WHERE id = 1');
    expect(repo.authVersion()).toBe('201');
  });

  test("reads this connection's uncommitted write inside its transaction, and the old value after a rollback", () => {
    db.$client.run('UPDATE auth_generation SET generation = 301 WHERE id = 1');
    expect(repo.authVersion()).toBe('301');
    expect(() =>
      db.$client.transaction(() => {
        db.$client.run('UPDATE auth_generation SET generation = 302 WHERE id = 1');
        expect(repo.authVersion()).toBe('302');
        throw new Error('roll back');
      })(),
    ).toThrow('roll back');
    expect(repo.authVersion()).toBe('301');
  });

  test("the access generation and the change version move with any connection's commit, this process's or another's", () => {
    const access = repo.accessVersion();
    const change = repo.changeVersion();
    expect(repo.accessVersion()).toBe(access);
    expect(repo.changeVersion()).toBe(change);
    other.run('UPDATE access_generation SET generation = 501 WHERE id = 1');
    expect(repo.accessVersion()).toBe('501');
    const afterOther = repo.changeVersion();
    expect(afterOther).not.toBe(change);
    db.$client.run('UPDATE access_generation SET generation = 502 WHERE id = 1');
    expect(repo.accessVersion()).toBe('502');
    const afterOwn = repo.changeVersion();
    expect(afterOwn).not.toBe(afterOther);
    const script = `const { Database } = require('bun:sqlite'); const db = new Database(${JSON.stringify(file)}); db.run('PRAGMA busy_timeout = 5000'); db.run('UPDATE access_generation SET generation = 503 WHERE id = 1'); db.close();`;
    expect(Bun.spawnSync([process.execPath, '-e', script]).exitCode).toBe(0);
    expect(repo.accessVersion()).toBe('503');
    expect(repo.changeVersion()).not.toBe(afterOwn);
  });

  test('reads the header from a mapping of the index, not a read per check', () => {
    repo.authVersion();
    // SQLite maps the index in 32 KiB regions; the header's mapping is one page, smaller.
    const sizes = fs
      .readFileSync('/proc/self/maps', 'utf8')
      .split('\n')
      .filter((line) => line.endsWith(`${file}-shm`))
      .map((line) => {
        const [from, to] = line.split(' ')[0]!.split('-');
        return Number.parseInt(to!, 16) - Number.parseInt(from!, 16);
      });
    expect(sizes.some((size) => size < 32 * 1024)).toBe(true);
  });

  test('checks the header a word at a time in JavaScript, with no Buffer.compare per check', () => {
    const compare = Buffer.prototype.compare;
    let calls = 0;
    Buffer.prototype.compare = function (this: Buffer, ...args: Parameters<Buffer['compare']>) {
      calls++;
      return compare.apply(this, args);
    };
    try {
      const version = repo.authVersion();
      for (let i = 0; i < 100; i++) expect(repo.authVersion()).toBe(version);
    } finally {
      Buffer.prototype.compare = compare;
    }
    expect(calls).toBe(0);
  });

  test('moves after a checkpoint restarts the log', () => {
    repo.authVersion();
    other.run('PRAGMA wal_checkpoint(TRUNCATE)');
    other.run('UPDATE auth_generation SET generation = 401 WHERE id = 1');
    expect(repo.authVersion()).toBe('401');
    commitElsewhere(402);
    expect(repo.authVersion()).toBe('402');
  });

  test('after a commit, reads the auth and the access generations with one statement: one read transaction for the two, not one each', () => {
    // A repo on a connection whose statements are counted as they run; the two versions are what a request checks.
    const counted = new Database(file);
    let runs = 0;
    for (const make of ['prepare', 'query'] as const) {
      const original = counted[make].bind(counted);
      counted[make] = ((sql: string) => {
        const statement = original(sql);
        const get = statement.get.bind(statement);
        statement.get = (...args: Parameters<typeof get>) => {
          runs++;
          return get(...args);
        };
        return statement;
      }) as typeof counted.prepare;
    }
    try {
      const versions = new DatabaseRepo(counted);
      versions.authVersion();
      other.run('UPDATE access_generation SET generation = 601 WHERE id = 1');
      runs = 0;
      expect(versions.authVersion()).toBe(repo.authVersion());
      expect(versions.accessVersion()).toBe('601');
      expect(runs).toBe(1);
      other.run('UPDATE auth_generation SET generation = 602 WHERE id = 1');
      expect(versions.accessVersion()).toBe('601');
      expect(versions.authVersion()).toBe('602');
      expect(runs).toBe(2);
    } finally {
      counted.close();
    }
  });
});
