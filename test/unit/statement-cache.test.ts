import { afterAll, expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import { closeDatabase, openDatabase } from '../../src/db/client.ts';
import { tempDir } from '../helpers/run-root.ts';

const dir = tempDir('coffer-statements-');
const db = openDatabase(path.join(dir, 'coffer.db'));
afterAll(() => {
  closeDatabase(db);
  fs.rmSync(dir, { recursive: true, force: true });
});

test('a statement stays prepared while more SQL texts than the runtime default (20) are used in turn', () => {
  const first = db.$client.query('SELECT 0 AS n');
  for (let i = 1; i < 100; i++) expect(db.$client.query<{ n: number }, []>(`SELECT ${i} AS n`).get()!.n).toBe(i);
  expect(db.$client.query('SELECT 0 AS n')).toBe(first);
});
