import { describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import { embeddedMigrations, journalTags } from '../../src/db/migrations.ts';

describe('embedded migrations', () => {
  test('every migration drizzle-kit generated is embedded, in order', () => {
    expect(embeddedMigrations.map((m) => m.tag)).toEqual([...journalTags]);
    const files = fs
      .readdirSync(path.resolve(import.meta.dir, '../../migrations'))
      .filter((f) => f.endsWith('.sql'))
      .map((f) => f.replace(/\.sql$/, ''))
      .sort();
    expect(files).toEqual([...journalTags]);
  });
});
