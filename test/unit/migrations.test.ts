import { describe, expect, test } from 'bun:test';
import fs from 'node:fs';
import path from 'node:path';
import { closeDatabase, openDatabase } from '../../src/db/client.ts';
import { migrate } from '../../src/db/migrate.ts';
import { ChangesRepo, type ChangeRow } from '../../src/db/repos/changes.ts';
import { ContentRepo } from '../../src/db/repos/content.ts';
import { UploadIntentsRepo } from '../../src/db/repos/upload-intents.ts';
import { embeddedMigrations, journalTags } from '../../src/db/migrations.ts';
import { tempDir } from '../helpers/run-root.ts';

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
    const dir = tempDir('coffer-migrate-');
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
    const dir = tempDir('coffer-migrate-');
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

describe('0027_access_generation', () => {
  test('every write that can change access gives the generation a new value in its transaction; other writes and a rollback leave it', () => {
    const dir = tempDir('coffer-migrate-');
    const db = openDatabase(path.join(dir, 'coffer.db'));
    const sqlite = db.$client;
    migrate(db);
    const generation = () =>
      sqlite.query<{ g: string }, []>('SELECT CAST(generation AS TEXT) AS g FROM access_generation WHERE id = 1').get()!.g;
    const seen = new Set([generation()]);
    /** Runs `sql` and answers whether the generation took a value it never had before. */
    const moves = (sql: string) => {
      sqlite.run(sql);
      const g = generation();
      const fresh = !seen.has(g);
      seen.add(g);
      return fresh;
    };
    for (const u of ['o', 'm', 't'])
      sqlite.run(`INSERT INTO users (id, email, email_key, created_at, updated_at) VALUES ('${u}', '${u}@x.test', '${u}@x.test', 0, 0)`);
    const item = (id: string, parent: string | null) =>
      `INSERT INTO items (id, account_id, parent_id, type, name, name_key, size, starred, modified_at, accessed_at, created_at)
       VALUES ('${id}', 'o', ${parent ? `'${parent}'` : 'NULL'}, 'folder', '${id}', '${id}', 0, 0, 0, 0, 0)`;
    // Creating items, renaming, starring, reading and writing content keep it: an id the cache never held cannot be stale.
    expect(moves(item('a', null))).toBe(false);
    expect(moves(item('b', 'a'))).toBe(false);
    expect(moves(item('c', null))).toBe(false);
    expect(moves("UPDATE items SET name = 'A', name_key = 'a2', starred = 1, accessed_at = 9 WHERE id = 'a'")).toBe(false);
    expect(moves("UPDATE users SET name = 'Owner', storage_used = 5 WHERE id = 'o'")).toBe(false);
    expect(moves("UPDATE items SET parent_id = 'a' WHERE id = 'b'")).toBe(false);
    const changes = [
      "INSERT INTO item_members (item_id, owner_id, account_id, role, added_by, added_at) VALUES ('a', 'o', 'm', 'editor', 'o', 0)",
      "UPDATE item_members SET role = 'viewer' WHERE item_id = 'a'",
      "DELETE FROM item_members WHERE item_id = 'a'",
      "INSERT INTO groups (id, name, name_key, created_at) VALUES ('g', 'G', 'g', 0)",
      "INSERT INTO group_members (group_id, account_id, added_at) VALUES ('g', 'm', 0)",
      'UPDATE group_members SET is_admin = 1',
      "INSERT INTO item_groups (item_id, owner_id, group_id, role, added_at) VALUES ('a', 'o', 'g', 'editor', 0)",
      "UPDATE item_groups SET role = 'viewer'",
      "DELETE FROM group_members WHERE account_id = 'm'",
      "INSERT INTO group_members (group_id, account_id, added_at) VALUES ('g', 'm', 0)",
      // A group deleted takes its members and shares with it (cascades, whose own triggers fire too).
      "DELETE FROM groups WHERE id = 'g'",
      "INSERT INTO team_folders (account_id, folder_id, created_at) VALUES ('t', 'c', 0)",
      "DELETE FROM team_folders WHERE account_id = 't'",
      "UPDATE items SET parent_id = 'a' WHERE id = 'c'",
      "UPDATE items SET parent_id = NULL WHERE id = 'c'",
      "UPDATE items SET account_id = 'm' WHERE id = 'c'",
      "DELETE FROM items WHERE id = 'c'",
      "UPDATE users SET disabled_at = 1 WHERE id = 'o'",
      "UPDATE users SET disabled_at = NULL WHERE id = 'o'",
      "UPDATE users SET deletion_requested_at = 1 WHERE id = 'o'",
      "DELETE FROM users WHERE id = 'm'",
    ];
    for (const sql of changes) expect([sql, moves(sql)]).toEqual([sql, true]);
    expect(sqlite.query('SELECT COUNT(*) AS n FROM group_members').get()).toEqual({ n: 0 });
    // 0041: a library added or removed moves it (an upload knows from memory that there is none); its scans keep it.
    expect(
      moves("INSERT INTO libraries (id, name, path, account_id, folder_id, created_at) VALUES ('l', 'L', '/srv/l', 'o', 'a', 0)"),
    ).toBe(true);
    expect(moves("UPDATE libraries SET scanned_at = 1, scan_entries = 2, available = 0 WHERE id = 'l'")).toBe(false);
    expect(moves("DELETE FROM libraries WHERE id = 'l'")).toBe(true);
    // A rolled-back change restores the value; the next change takes a value never seen, not the one the rollback undid.
    const before = generation();
    let undone = '';
    expect(() =>
      sqlite.transaction(() => {
        sqlite.run(
          "INSERT INTO item_members (item_id, owner_id, account_id, role, added_by, added_at) VALUES ('a', 'o', 't', 'viewer', 'o', 0)",
        );
        undone = generation();
        throw new Error('rolled back');
      })(),
    ).toThrow('rolled back');
    expect(generation()).toBe(before);
    expect(undone).not.toBe(before);
    sqlite.run(
      "INSERT INTO item_members (item_id, owner_id, account_id, role, added_by, added_at) VALUES ('a', 'o', 't', 'viewer', 'o', 0)",
    );
    expect([before, undone]).not.toContain(generation());
    closeDatabase(db);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});

describe('0037_content_fts_usermerge', () => {
  test('keeps the existing index searchable, prefix queries of 2 and 3 characters included, through the merges after it', () => {
    const dir = tempDir('coffer-migrate-');
    const db = openDatabase(path.join(dir, 'coffer.db'));
    const sqlite = db.$client;
    migrate(
      db,
      embeddedMigrations.slice(
        0,
        embeddedMigrations.findIndex((m) => m.tag === '0037_content_fts_usermerge'),
      ),
    );
    const words = ['boiler', 'bolt', 'invoice', 'inventory', 'gutter'];
    const write = (from: number, to: number) =>
      sqlite.transaction(() => {
        for (let seq = from; seq < to; seq++)
          sqlite.run('INSERT INTO content_fts (rowid, body, account) VALUES (?, ?, ?)', [
            seq,
            `${words[seq % words.length]} number${seq}`,
            'aowner',
          ]);
      })();
    write(1, 41);
    migrate(db);
    const config = sqlite.query<{ v: number }, []>("SELECT v FROM content_fts_config WHERE k = 'usermerge'").get();
    expect(config?.v).toBe(16);
    // Batches of 8 with the writer's merge step after each, as the index writer does.
    const repo = new ContentRepo(sqlite);
    for (let from = 41; from < 201; from += 8) {
      write(from, from + 8);
      repo.mergeSome(128 * 8);
    }
    const found = (match: string) =>
      sqlite
        .query<{ seq: number }, [string]>('SELECT rowid AS seq FROM content_fts WHERE content_fts MATCH ? ORDER BY rowid')
        .all(`account : aowner AND body : (${match})`)
        .map((r) => r.seq);
    const expected = (...indexes: number[]) =>
      Array.from({ length: 200 }, (_, i) => i + 1).filter((seq) => indexes.includes(seq % words.length));
    expect(found('"bo"*')).toEqual(expected(0, 1));
    expect(found('"inv"*')).toEqual(expected(2, 3));
    expect(found('"gutter"')).toEqual(expected(4));
    expect(found('"number7"')).toEqual([7]);
    expect(found('"number199"')).toEqual([199]);
    closeDatabase(db);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});

describe('0038_upload_intents_without_rowid', () => {
  test('keeps every intent, in one b-tree keyed by the storage key, which still refuses a second row for a key', () => {
    const dir = tempDir('coffer-migrate-');
    const db = openDatabase(path.join(dir, 'coffer.db'));
    const sqlite = db.$client;
    const upTo = embeddedMigrations.findIndex((m) => m.tag === '0038_upload_intents_without_rowid');
    migrate(db, embeddedMigrations.slice(0, upTo));
    const repo = new UploadIntentsRepo(sqlite);
    repo.record('key-b', 2);
    repo.record('key-a', 1);
    migrate(db);
    const btrees = sqlite
      .query<{ name: string }, []>("SELECT name FROM sqlite_schema WHERE tbl_name = 'upload_intents' AND rootpage > 0")
      .all()
      .map((r) => r.name);
    expect(btrees).toEqual(['upload_intents']);
    const table = sqlite.query<{ wr: number }, []>("SELECT wr FROM pragma_table_list WHERE name = 'upload_intents'").get();
    expect(table?.wr).toBe(1);
    repo.record('key-a', 3);
    expect(sqlite.query('SELECT storage_key AS key, created_at AS at FROM upload_intents ORDER BY storage_key').all()).toEqual([
      { key: 'key-a', at: 1 },
      { key: 'key-b', at: 2 },
    ]);
    repo.clear('key-a');
    expect(repo.page('', 10)).toEqual([{ storageKey: 'key-b', referenced: 0 }]);
    closeDatabase(db);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});

describe('0039_items_taken_at_unchanged', () => {
  test('a new file whose object has no thumbnail, or new content that leaves its date as it was, is written once, not rewritten by a trigger', () => {
    const dir = tempDir('coffer-migrate-');
    const db = openDatabase(path.join(dir, 'coffer.db'));
    const sqlite = db.$client;
    const upTo = embeddedMigrations.findIndex((m) => m.tag === '0039_items_taken_at_unchanged');
    migrate(db, embeddedMigrations.slice(0, upTo));
    sqlite.run("INSERT INTO users (id, email, email_key, created_at, updated_at) VALUES ('u', 'u@example.test', 'u@example.test', 0, 0)");
    // Rows written by the statement and by the triggers it fires.
    const writes = (sql: string, params: string[]) => {
      const before = sqlite.query<{ n: number }, []>('SELECT total_changes() AS n').get()!.n;
      sqlite.run(sql, params);
      return sqlite.query<{ n: number }, []>('SELECT total_changes() AS n').get()!.n - before;
    };
    const file = (id: string, key: string) =>
      writes(
        `INSERT INTO items (id, account_id, parent_id, type, name, name_key, size, mime_type, storage_key, starred, modified_at, accessed_at, created_at)
         VALUES (?, 'u', NULL, 'file', ?, ?, 1, 'image/jpeg', ?, 0, 5000, 5000, 0)`,
        [id, `${id}.jpg`, `${id}.jpg`, key],
      );
    const repoint = (id: string, key: string) => writes('UPDATE items SET storage_key = ? WHERE id = ?', [key, id]);
    const beforeInsert = file('a', 'k1');
    const beforeRepoint = repoint('a', 'k2');
    migrate(db);
    expect(file('b', 'k3')).toBe(beforeInsert - 1);
    expect(repoint('b', 'k4')).toBe(beforeRepoint - 1);
    sqlite.run(
      "INSERT INTO thumbnails (storage_key, status, small_size, large_size, width, height, taken_at, created_at) VALUES ('k5', 'ready', 1, 1, 10, 10, 5000, 0)",
    );
    expect(file('c', 'k5')).toBe(beforeInsert);
    expect(repoint('c', 'k6')).toBe(beforeRepoint);
    const taken = (id: string) => sqlite.query<{ t: number | null }, [string]>('SELECT taken_at AS t FROM items WHERE id = ?').get(id)!.t;
    expect([taken('a'), taken('b'), taken('c')]).toEqual([null, null, null]);
    expect(repoint('b', 'k5')).toBe(beforeRepoint);
    expect(taken('b')).toBe(5000);
    closeDatabase(db);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});

describe('0042_changes_item_row', () => {
  test("an item's change rows carry its row number (backfilled, then on every append) and its history reads by it, in seq order by an index", () => {
    const dir = tempDir('coffer-migrate-');
    const db = openDatabase(path.join(dir, 'coffer.db'));
    const sqlite = db.$client;
    const upTo = embeddedMigrations.findIndex((m) => m.tag === '0042_changes_item_row');
    migrate(db, embeddedMigrations.slice(0, upTo));
    sqlite.run("INSERT INTO users (id, email, email_key, created_at, updated_at) VALUES ('u', 'u@example.test', 'u@example.test', 0, 0)");
    const item = (id: string) =>
      sqlite.run(
        `INSERT INTO items (id, account_id, parent_id, type, name, name_key, size, starred, modified_at, accessed_at, created_at)
         VALUES (?, 'u', NULL, 'file', ?, ?, 1, 0, 0, 0, 0)`,
        [id, `${id}.txt`, `${id}.txt`],
      );
    const change = (kind: string, itemId: string) => ({
      at: 1,
      accountId: 'u',
      actorKind: 'login' as const,
      actorId: 'u',
      kind,
      itemId,
      itemType: 'file' as const,
      nameBefore: null,
      parentBefore: null,
      nameAfter: `${itemId}.txt`,
      parentAfter: null,
      details: null,
    });
    const oldAppend = (kind: string, itemId: string) =>
      sqlite.run(
        `INSERT INTO changes (at, account_id, actor_kind, actor_id, kind, item_id, item_type, name_after) VALUES (1, 'u', 'login', 'u', ?, ?, 'file', ?)`,
        [kind, itemId, `${itemId}.txt`],
      );
    item('filler');
    item('live');
    oldAppend('item.uploaded', 'live');
    item('purged');
    oldAppend('item.uploaded', 'purged');
    oldAppend('item.renamed', 'live');
    sqlite.run("DELETE FROM items WHERE id = 'purged'");
    migrate(db);

    const rowOf = (id: string) => sqlite.query<{ seq: number }, [string]>('SELECT seq FROM items WHERE id = ?').get(id)!.seq;
    const numbers = () =>
      sqlite.query<{ kind: string; itemRow: number | null }, []>('SELECT kind, item_row AS itemRow FROM changes ORDER BY seq').all();
    expect(numbers()).toEqual([
      { kind: 'item.uploaded', itemRow: rowOf('live') },
      { kind: 'item.uploaded', itemRow: null },
      { kind: 'item.renamed', itemRow: rowOf('live') },
    ]);
    const repo = new ChangesRepo(sqlite);
    item('new');
    sqlite.transaction(() => {
      repo.append(change('item.moved', 'live'));
      repo.append(change('item.uploaded', 'new'));
      // An item already gone when its change is appended (a file moved onto another goes first).
      repo.append(change('item.purged', 'purged'));
    })();
    expect(numbers().slice(3)).toEqual([
      { kind: 'item.moved', itemRow: rowOf('live') },
      { kind: 'item.uploaded', itemRow: rowOf('new') },
      { kind: 'item.purged', itemRow: null },
    ]);

    const kinds = (rows: ChangeRow[]) => rows.map((r) => `${r.seq} ${r.kind}`);
    expect(kinds(repo.pageOfItem('live', 0, 10))).toEqual(['1 item.uploaded', '3 item.renamed', '4 item.moved']);
    expect(kinds(repo.pageOfItem('live', 1, 1))).toEqual(['3 item.renamed']);
    expect(kinds(repo.pageOfItemBefore('live', Number.MAX_SAFE_INTEGER, 10))).toEqual([
      '4 item.moved',
      '3 item.renamed',
      '1 item.uploaded',
    ]);
    expect(kinds(repo.pageOfItemBefore('live', 4, 1))).toEqual(['3 item.renamed']);
    expect(kinds(repo.pageOfItem('new', 0, 10))).toEqual(['5 item.uploaded']);
    // A purged item's history is not asked for (GET /api/activity answers 404 for an id without a row, as before 0042).
    expect(repo.pageOfItem('purged', 0, 10)).toEqual([]);
    expect(repo.pageOfItem('filler', 0, 10)).toEqual([]);

    // Both reads walk the new index in seq order: no scan of the log, no sort.
    const plans: string[][] = [];
    const query = sqlite.query.bind(sqlite);
    (sqlite as { query: unknown }).query = (sql: string) => {
      if (sql.includes('FROM changes'))
        plans.push(
          query<{ detail: string }, [number, number, number]>(`EXPLAIN QUERY PLAN ${sql}`)
            .all(rowOf('live'), 1, 10)
            .map((r) => r.detail),
        );
      return query(sql);
    };
    repo.pageOfItem('live', 0, 10);
    repo.pageOfItemBefore('live', Number.MAX_SAFE_INTEGER, 10);
    (sqlite as { query: unknown }).query = query;
    expect(plans).toEqual([
      ['SEARCH changes USING INDEX changes_item_row_seq (item_row=? AND seq>?)'],
      ['SEARCH changes USING INDEX changes_item_row_seq (item_row=? AND seq<?)'],
    ]);
    closeDatabase(db);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});

describe('0045_dav_property_xml_prefix', () => {
  test('rewrites dead-property values stored with the XML namespace under another prefix as they are written now, and leaves the others as they are', () => {
    const dir = tempDir('coffer-migrate-');
    const db = openDatabase(path.join(dir, 'coffer.db'));
    const sqlite = db.$client;
    const upTo = embeddedMigrations.findIndex((m) => m.tag === '0045_dav_property_xml_prefix');
    migrate(db, embeddedMigrations.slice(0, upTo));
    sqlite.run("INSERT INTO users (id, email, email_key, created_at, updated_at) VALUES ('u', 'u@example.test', 'u@example.test', 0, 0)");
    sqlite.run(
      `INSERT INTO items (id, account_id, parent_id, type, name, name_key, size, starred, modified_at, accessed_at, created_at)
       VALUES ('f', 'u', NULL, 'file', 'f.txt', 'f.txt', 1, 0, 0, 0, 0)`,
    );
    const XML = 'http://www.w3.org/XML/1998/namespace';
    const stored = {
      // An attribute of another namespace before xml:lang numbered it a1.
      attrs: `<t xmlns="urn:z" xmlns:a0="urn:o" a0:x="1" xmlns:a1="${XML}" a1:lang="fr">Bonjour</t>`,
      element: `<note xmlns="${XML}"><i xmlns="">n</i></note>`,
      current: '<k xml:lang="de">Hallo</k>',
      plain: 'text naming http://www.w3.org/XML/1998/namespace',
      // A value the parser refuses today (a character outside XML's) is kept as it was, as a read kept it.
      refused: `<r xmlns:a0="${XML}" a0:lang="fr">\u0001</r>`,
    };
    for (const [name, value] of Object.entries(stored))
      sqlite.run("INSERT INTO dav_properties (item_id, ns, name, value) VALUES ('f', 'urn:z', ?, ?)", [name, value]);
    expect(migrate(db).applied).toEqual([
      '0045_dav_property_xml_prefix',
      '0046_mfa_enabled_at',
      '0047_content_pending_rename',
      '0048_email_trusted',
      '0049_unfinished_attempts',
    ]);
    const values = Object.fromEntries(
      sqlite
        .query<{ name: string; value: string }, []>('SELECT name, value FROM dav_properties')
        .all()
        .map((r) => [r.name, r.value]),
    );
    expect(values).toEqual({
      attrs: '<t xmlns="urn:z" xmlns:a0="urn:o" a0:x="1" xml:lang="fr">Bonjour</t>',
      element: '<xml:note><i>n</i></xml:note>',
      current: stored.current,
      plain: stored.plain,
      refused: stored.refused,
    });
    closeDatabase(db);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});

describe('0048_email_trusted', () => {
  test('owners keep being linked by email, except a public sign-up the audit log shows; the admin always; sub-users and team folders never', () => {
    const dir = tempDir('coffer-migrate-');
    const db = openDatabase(path.join(dir, 'coffer.db'));
    const sqlite = db.$client;
    const upTo = embeddedMigrations.findIndex((m) => m.tag === '0048_email_trusted');
    migrate(db, embeddedMigrations.slice(0, upTo));
    const user = (id: string, extra: { admin?: boolean; parent?: string; email?: string } = {}) =>
      sqlite.run(
        'INSERT INTO users (id, email, email_key, is_admin, parent_user_id, created_at, updated_at) VALUES (?, ?, ?, ?, ?, 0, 0)',
        [id, extra.email ?? `${id}@example.test`, extra.email ?? `${id}@example.test`, extra.admin ? 1 : 0, extra.parent ?? null],
      );
    const signedUp = (id: string, details: object) =>
      sqlite.run(
        "INSERT INTO audit_log (at, action, status, actor, target_type, target_id, details) VALUES (0, 'auth.signup', 'success', 'login', 'user', ?, ?)",
        [id, JSON.stringify(details)],
      );
    user('admin', { admin: true });
    signedUp('admin', { admin: true });
    user('made');
    user('self');
    signedUp('self', { admin: false });
    user('sso');
    signedUp('sso', { method: 'idp', admin: false, issuer: 'https://idp.example.test' });
    // A sign-up still in the queue (the server stopped before moving it into the log).
    user('queued');
    sqlite.run('INSERT INTO audit_queue (event, queued_at) VALUES (?, 0)', [
      JSON.stringify({ action: 'auth.signup', status: 'success', at: 0, targetId: 'queued', details: { admin: false } }),
    ]);
    user('sub', { parent: 'made' });
    user('team', { email: 'team:team' });
    expect(migrate(db).applied).toEqual(['0048_email_trusted', '0049_unfinished_attempts']);
    const trusted = sqlite
      .query<{ id: string; t: number }, []>('SELECT id, email_trusted AS t FROM users ORDER BY id')
      .all()
      .map((r) => [r.id, r.t]);
    expect(trusted).toEqual([
      ['admin', 1],
      ['made', 1],
      ['queued', 0],
      ['self', 0],
      ['sso', 1],
      ['sub', 0],
      ['team', 0],
    ]);
    closeDatabase(db);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
