import { afterAll, describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import { closeDatabase, openDatabase } from '../../src/db/client.ts';
import { migrate } from '../../src/db/migrate.ts';
import { createRepos } from '../../src/db/repos/index.ts';
import { tempDir } from '../helpers/server.ts';

const dir = tempDir('coffer-read-tx-');
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('Transactions.read (the per-request reads under one WAL read lock)', () => {
  test('its reads see one snapshot: a commit by another connection between them shows only after it ends', () => {
    const file = path.join(dir, 'coffer.db');
    const db = openDatabase(file);
    migrate(db);
    const other = openDatabase(file);
    try {
      const repos = createRepos(db);
      const otherRepos = createRepos(other);
      const [first, second] = repos.transactions.read(() => {
        const first = repos.settings.all().length;
        otherRepos.settings.set('signupEnabled', 'false', Date.now());
        return [first, repos.settings.all().length];
      });
      expect(second).toBe(first);
      expect(repos.settings.all().length).toBe(first + 1);
    } finally {
      closeDatabase(other);
      closeDatabase(db);
    }
  });

  test('an error inside ends the transaction and reaches the caller', () => {
    const db = openDatabase(path.join(dir, 'error.db'));
    migrate(db);
    try {
      const repos = createRepos(db);
      expect(() =>
        repos.transactions.read(() => {
          repos.settings.all();
          throw new Error('boom');
        }),
      ).toThrow('boom');
      expect(db.$client.inTransaction).toBe(false);
    } finally {
      closeDatabase(db);
    }
  });
});
