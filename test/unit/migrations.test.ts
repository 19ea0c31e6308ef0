import { describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { closeDatabase, openDatabase } from '../../src/db/client.ts';
import { migrate } from '../../src/db/migrate.ts';
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

describe('0018_photos_taken_at', () => {
  test("copies each file's date taken from its thumbnail record, and triggers keep it with the content", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'coffer-migrate-'));
    const db = openDatabase(path.join(dir, 'coffer.db'));
    const sqlite = db.$client;
    const upTo = embeddedMigrations.findIndex((m) => m.tag === '0018_photos_taken_at');
    migrate(db, embeddedMigrations.slice(0, upTo));
    sqlite.run("INSERT INTO users (id, email, email_key, created_at, updated_at) VALUES ('u', 'u@example.test', 'u@example.test', 0, 0)");
    const file = (id: string, key: string) =>
      sqlite.run(
        `INSERT INTO items (id, account_id, parent_id, type, name, name_key, size, mime_type, storage_key, starred, modified_at, accessed_at, created_at)
         VALUES (?, 'u', NULL, 'file', ?, ?, 1, 'image/jpeg', ?, 0, 5000, 5000, 0)`,
        [id, `${id}.jpg`, `${id}.jpg`, key],
      );
    const thumb = (key: string, takenAt: number | null) =>
      sqlite.run(
        `INSERT OR REPLACE INTO thumbnails (storage_key, status, small_size, large_size, width, height, taken_at, created_at)
         VALUES (?, 'ready', 1, 1, 10, 10, ?, 0)`,
        [key, takenAt],
      );
    file('dated', 'k1');
    file('undated', 'k2');
    file('none', 'k3');
    thumb('k1', 1000);
    thumb('k2', null);
    migrate(db);
    const taken = (id: string) => sqlite.query<{ t: number | null }, [string]>('SELECT taken_at AS t FROM items WHERE id = ?').get(id)!.t;
    expect([taken('dated'), taken('undated'), taken('none')]).toEqual([1000, null, null]);
    // A thumbnail made later; new content (a new object) forgets the old date until its own is read; a copy of a known object has it.
    thumb('k3', 3000);
    expect(taken('none')).toBe(3000);
    sqlite.run("UPDATE items SET storage_key = 'k4' WHERE id = 'dated'");
    expect(taken('dated')).toBeNull();
    thumb('k4', 4000);
    expect(taken('dated')).toBe(4000);
    thumb('k5', 5000);
    file('copied', 'k5');
    expect(taken('copied')).toBe(5000);
    closeDatabase(db);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});

describe('0022_tree_sizes', () => {
  test('gives each folder the bytes of the live files below it, a trashed folder those trashed with it, and each account its total', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'coffer-migrate-'));
    const db = openDatabase(path.join(dir, 'coffer.db'));
    const sqlite = db.$client;
    const upTo = embeddedMigrations.findIndex((m) => m.tag === '0022_tree_sizes');
    migrate(db, embeddedMigrations.slice(0, upTo));
    for (const u of ['u', 'v'])
      sqlite.run(
        `INSERT INTO users (id, email, email_key, created_at, updated_at) VALUES ('${u}', '${u}@example.test', '${u}@example.test', 0, 0)`,
      );
    const add = (
      id: string,
      parent: string | null,
      type: 'file' | 'folder',
      size: number,
      trashedWith: string | null = null,
      account = 'u',
    ) =>
      sqlite.run(
        `INSERT INTO items (id, account_id, parent_id, type, name, name_key, size, starred, modified_at, accessed_at, created_at, deleted_at, deleted_root_id)
         VALUES (?, ?, ?, ?, ?, ?, ?, 0, 0, 0, 0, ?, ?)`,
        [id, account, parent, type, id, id, size, trashedWith ? 1 : null, trashedWith],
      );
    add('A', null, 'folder', 0);
    add('B', 'A', 'folder', 0);
    add('f1', 'B', 'file', 5);
    add('f2', 'A', 'file', 3);
    add('gone', 'B', 'file', 100, 'gone');
    add('T', 'A', 'folder', 0, 'T');
    add('t1', 'T', 'file', 7, 'T');
    add('top', null, 'file', 1);
    add('other', null, 'file', 50, null, 'v');
    migrate(db);
    const size = (id: string) => sqlite.query<{ n: number }, [string]>('SELECT tree_size AS n FROM items WHERE id = ?').get(id)!.n;
    expect([size('A'), size('B'), size('T')]).toEqual([8, 5, 7]);
    const root = (account: string) =>
      sqlite
        .query<{ n: number; v: number }, [string]>('SELECT size AS n, version AS v FROM tree_versions WHERE account_id = ?')
        .get(account);
    expect([root('u'), root('v')]).toEqual([
      { n: 9, v: 0 },
      { n: 50, v: 0 },
    ]);
    closeDatabase(db);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
