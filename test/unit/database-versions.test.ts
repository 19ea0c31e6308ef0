import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Database } from 'bun:sqlite';
import fs from 'node:fs';
import path from 'node:path';
import { closeDatabase, openDatabase, type Db } from '../../src/db/client.ts';
import { migrate } from '../../src/db/migrate.ts';
import { DatabaseRepo } from '../../src/db/repos/database.ts';
import { tempDir } from '../helpers/server.ts';

// The versions are kept between requests while the WAL index says nothing was committed: every commit must still reach them.
describe('DatabaseRepo versions', () => {
  const dir = tempDir('coffer-auth-version-');
  const file = path.join(dir, 'coffer.db');
  let db: Db;
  let repo: DatabaseRepo;
  let other: Database;

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

  test("the access generation and the change version move with either connection's commit", () => {
    const access = repo.accessVersion();
    const change = repo.changeVersion();
    expect(repo.changeVersion()).toBe(change);
    other.run('UPDATE access_generation SET generation = 501 WHERE id = 1');
    expect(repo.accessVersion()).toBe('501');
    expect(repo.accessVersion()).not.toBe(access);
    const afterOther = repo.changeVersion();
    expect(afterOther).not.toBe(change);
    db.$client.run('UPDATE access_generation SET generation = 502 WHERE id = 1');
    expect(repo.accessVersion()).toBe('502');
    expect(repo.changeVersion()).not.toBe(afterOther);
  });

  test('moves after a checkpoint restarts the log', () => {
    repo.authVersion();
    other.run('PRAGMA wal_checkpoint(TRUNCATE)');
    other.run('UPDATE auth_generation SET generation = 401 WHERE id = 1');
    expect(repo.authVersion()).toBe('401');
  });
});
