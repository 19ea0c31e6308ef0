import { afterAll, describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import { closeDatabase, openDatabase } from '../../src/db/client.ts';
import { migrate } from '../../src/db/migrate.ts';
import { DatabaseRepo } from '../../src/db/repos/database.ts';
import { tempDir } from '../helpers/server.ts';

const dir = tempDir('coffer-snapshot-');
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('database snapshot (coffer backup)', () => {
  test('the snapshot is created owner-only (0600) under a umask of 022, before anything narrows it', () => {
    const db = openDatabase(path.join(dir, 'coffer.db'));
    const umask = process.umask(0o022);
    try {
      migrate(db);
      const file = path.join(dir, 'snapshot.db');
      new DatabaseRepo(db.$client).snapshotTo(file);
      expect(fs.statSync(file).mode & 0o777).toBe(0o600);
      expect(fs.statSync(file).size).toBeGreaterThan(0);
    } finally {
      process.umask(umask);
      closeDatabase(db);
    }
  });
});
