import { afterAll, describe, expect, test } from 'bun:test';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Database } from 'bun:sqlite';
import { dataPaths } from '../../src/data-dir.ts';
import { closeDatabase, openDatabase } from '../../src/db/client.ts';
import { migrate, pendingMigrations } from '../../src/db/migrate.ts';
import { embeddedMigrations, knownMigration } from '../../src/db/migrations.ts';
import { listUpgradeSnapshots, rollbackTo, upgradeDatabase } from '../../src/services/maintenance/upgrade.ts';
import { BACKEND_VERSION, buildVersion, sourceCommit } from '../../src/services/admin/version.ts';
import { startTestServer, tempDir } from '../helpers/server.ts';
import * as seed from '../helpers/seed.ts';
import { parseJson, runCli } from '../helpers/cli.ts';
import { downloaded, upload } from '../helpers/files.ts';
import { DavClient, davLogin, propfindRows } from '../helpers/dav.ts';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

// The newest migration that adds a schema object stands for what the previous release lacked; migrations after it
// change settings (an FTS5 option), rebuild a table under its own name (`__new_x` renamed to x) or drop and create an
// object again under its name (a trigger's new condition), so taking their records away is enough to undo them and
// they apply again.
const named = (sql: string, pattern: RegExp) => [...sql.matchAll(pattern)].map((m) => m[1]!);
/** What a migration adds, read from its SQL: tables (plain and virtual), indexes, triggers and columns it did not drop first. */
function addedBy(sql: string) {
  const dropped = new Set(named(sql, /DROP (?:TABLE|INDEX|TRIGGER) (?:IF EXISTS )?`?(\w+)`?/g));
  const fresh = (names: string[]) => names.filter((name) => !name.startsWith('__new_') && !dropped.has(name));
  return {
    tables: fresh(named(sql, /CREATE (?:VIRTUAL )?TABLE `?(\w+)`?/g)),
    indexes: fresh(named(sql, /CREATE (?:UNIQUE )?INDEX `?(\w+)`?/g)),
    triggers: fresh(named(sql, /CREATE TRIGGER `?(\w+)`?/g)),
    columns: [...sql.matchAll(/ALTER TABLE `?(\w+)`? ADD (?:COLUMN )?`?(\w+)`?/g)].map((m) => [m[1]!, m[2]!] as const),
    // Indexes it drops for good (not created again under their name): the previous release had them.
    droppedIndexes: named(sql, /DROP INDEX (?:IF EXISTS )?`?(\w+)`?/g).filter(
      (name) => !named(sql, /CREATE (?:UNIQUE )?INDEX `?(\w+)`?/g).includes(name),
    ),
  };
}
const addsObjects = (sql: string) => {
  const { droppedIndexes: _, ...added } = addedBy(sql);
  return Object.values(added).some((objects) => objects.length > 0);
};
const latestAt = embeddedMigrations.findLastIndex((m) => addsObjects(m.sql));
const previous = embeddedMigrations.slice(0, latestAt);
const latest = embeddedMigrations[latestAt]!;
/** The migrations the previous release did not have, in order. */
const since = embeddedMigrations.slice(latestAt).map((m) => m.tag);
const forgetSince = (run: (tag: string) => void) => since.forEach(run);

/** A data directory of its own for a test (removed after the file), with a secrets file: its paths. */
function scratchDataDir(prefix: string): ReturnType<typeof dataPaths> {
  const dir = tempDir(prefix);
  dirs.push(dir);
  const paths = dataPaths(dir);
  fs.writeFileSync(paths.secrets, '{}');
  return paths;
}

/** What the latest migration added. */
const added = addedBy(latest.sql);
// A schema object the latest migration adds (a column as `table.column`), to tell its database from the previous release's.
const newObject =
  added.tables[0] ?? added.indexes[0] ?? added.triggers[0] ?? added.columns.map(([table, column]) => `${table}.${column}`)[0]!;

/** The database as the previous release left it: the latest migration's schema undone, and the records since forgotten. */
function toPreviousSchema(db: ReturnType<typeof openDatabase>): void {
  revertLatest((sql) => db.$client.run(sql));
  forgetSince((tag) => db.$client.query('DELETE FROM coffer_migrations WHERE tag = ?').run(tag));
}

/** Undoes the latest migration's schema (not its record). */
function revertLatest(run: (sql: string) => void): void {
  for (const trigger of added.triggers) run(`DROP TRIGGER IF EXISTS ${trigger}`);
  for (const table of added.tables) run(`DROP TABLE IF EXISTS ${table}`);
  // Before the columns: an index on a column must go first.
  for (const index of added.indexes) run(`DROP INDEX IF EXISTS ${index}`);
  for (const [table, column] of added.columns) run(`ALTER TABLE ${table} DROP COLUMN ${column}`);
  for (const index of added.droppedIndexes) run(createdBefore(index));
}

/** The statement by which the previous release's migrations last created `index`. */
function createdBefore(index: string): string {
  const pattern = new RegExp(`CREATE (?:UNIQUE )?INDEX \`?${index}\`? [^;]*`, 'g');
  const created = previous.flatMap((m) => [...m.sql.matchAll(pattern)].map((match) => match[0]));
  if (created.length === 0) throw new Error(`no earlier migration creates ${index}`);
  return created.at(-1)!;
}

/** Turns a database back into the previous release's schema: the latest schema change's objects go, and the records since. */
function toPreviousRelease(database: string): void {
  const db = new Database(database);
  try {
    revertLatest((sql) => db.run(sql));
    db.run('DROP TABLE IF EXISTS coffer_meta');
    forgetSince((tag) => db.query('DELETE FROM coffer_migrations WHERE tag = ?').run(tag));
  } finally {
    db.close();
  }
}

const schemaObjects = (database: string) => {
  const db = new Database(database, { readonly: true });
  try {
    return db
      .query<{ name: string }, []>(
        `SELECT name FROM sqlite_master WHERE type IN ('table', 'index', 'trigger')
         UNION ALL SELECT m.name || '.' || c.name FROM sqlite_master m JOIN pragma_table_info(m.name) c WHERE m.type = 'table'`,
      )
      .all()
      .map((r) => r.name);
  } finally {
    db.close();
  }
};

describe('a snapshot before every upgrade, and coffer rollback', () => {
  test("upgrading from the previous release's schema snapshots it; rollback gives the older version a database it accepts, with today's objects", async () => {
    expect(newObject).toBeDefined();
    const t = await startTestServer();
    const paths = dataPaths(t.dataDir);
    const owner = await seed.owner(t);
    const before = await upload(owner.client, 'before-upgrade.txt', 'written by the older version');
    await t.restart({ whileDown: async () => toPreviousRelease(paths.database) });
    const [snapshot, ...others] = listUpgradeSnapshots(paths);
    expect(others).toHaveLength(0);
    expect(path.basename(snapshot!.dir)).toStartWith(`schema-${previous.at(-1)!.tag}-`);
    expect(snapshot!.pending).toEqual(since);
    expect(schemaObjects(path.join(snapshot!.dir, 'coffer.db'))).not.toContain(newObject);
    expect(fs.readFileSync(path.join(snapshot!.dir, 'secrets.json'))).toEqual(fs.readFileSync(paths.secrets));
    expect(schemaObjects(paths.database)).toContain(newObject);
    let client = await seed.login(t, owner.email);
    await upload(client, 'after-upgrade.txt', 'written by the newer version');

    // The server holds the data directory: rollback refuses while it runs.
    let r = await runCli(['rollback', '--to', snapshot!.dir, '--data-dir', t.dataDir]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('already using');
    await t.server.stop({ graceMs: 1000 });

    r = await runCli(['rollback', '--data-dir', t.dataDir, '--json']);
    expect(parseJson(r).snapshots.map((s: { dir: string }) => s.dir)).toEqual([snapshot!.dir]);
    r = await runCli(['rollback', '--to', snapshot!.dir, '--data-dir', t.dataDir]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(schemaObjects(paths.database)).not.toContain(newObject);
    const db = openDatabase(paths.database);
    try {
      // What the older executable checks at start: nothing it does not know, nothing to apply.
      expect(pendingMigrations(db, previous)).toEqual([]);
    } finally {
      closeDatabase(db);
    }
    expect(fs.readdirSync(t.dataDir).some((n) => n.startsWith('coffer.db.before-rollback-'))).toBe(true);

    // The snapshot and today's objects: every file the older database names is there.
    t.server = await startTestServer({ dataDir: t.dataDir }).then((s) => s.server);
    t.url = t.server.url;
    try {
      client = await seed.login(t, owner.email);
      expect((await downloaded(client, before.id)).toString()).toBe('written by the older version');
    } finally {
      await t.stop();
    }
  }, 120_000);

  test('after a rollback, folder and root ETags never repeat one the newer version answered: a sync client would take new changes for known ones', async () => {
    const t = await startTestServer();
    const paths = dataPaths(t.dataDir);
    const owner = await seed.owner(t);
    let dav: DavClient = await davLogin(t, owner);
    expect((await dav.request('MKCOL', 'A/')).status).toBe(201);
    await t.restart({ whileDown: async () => toPreviousRelease(paths.database) });
    dav = new DavClient(t.url, dav.email, dav.password);
    const etags = async () => propfindRows(await (await dav.propfind('', '1')).text()).map((row) => `${row.href} ${row.props.getetag}`);
    expect((await dav.put('A/newer.txt', 'made by the newer version')).status).toBe(201);
    const seen = await etags();
    await t.server.stop({ graceMs: 1000 });
    const r = await runCli(['rollback', '--to', listUpgradeSnapshots(paths)[0]!.dir, '--data-dir', t.dataDir]);
    expect(r.code).toBe(0);
    t.server = await startTestServer({ dataDir: t.dataDir }).then((s) => s.server);
    try {
      dav = new DavClient(t.server.url, dav.email, dav.password);
      expect((await dav.put('A/older.txt', 'made after the rollback')).status).toBe(201);
      const after = await etags();
      expect(after).toHaveLength(seen.length);
      for (const etag of after) expect(seen).not.toContain(etag);
    } finally {
      await t.stop();
    }
  }, 120_000);

  test("rollback keeps the newer database with its write-ahead log's commits, and the newer secrets.json beside it (0600)", async () => {
    const dir = tempDir('coffer-rollback-keeps-');
    dirs.push(dir);
    const paths = dataPaths(dir);
    fs.writeFileSync(paths.secrets, '{"masterKey":"the key of the older version"}', { mode: 0o600 });
    const db = openDatabase(paths.database);
    let snapshotDir: string;
    try {
      upgradeDatabase(db, paths);
      toPreviousSchema(db);
      snapshotDir = upgradeDatabase(db, paths).snapshot!.dir;
      // A key rotation after the upgrade: only the newer secrets.json opens the newer database.
      fs.writeFileSync(paths.secrets, '{"masterKey":"the rotated key"}');
      // The last commits of a server killed with -9 live only in the write-ahead log.
      db.$client.run('PRAGMA wal_autocheckpoint = 0');
      db.$client.run('CREATE TABLE written_after_upgrade (what TEXT)');
      db.$client.run("INSERT INTO written_after_upgrade VALUES ('the last commit')");
      for (const suffix of ['', '-wal']) fs.copyFileSync(`${paths.database}${suffix}`, path.join(dir, `killed${suffix}`));
    } finally {
      closeDatabase(db);
    }
    for (const suffix of ['', '-wal']) fs.renameSync(path.join(dir, `killed${suffix}`), `${paths.database}${suffix}`);
    expect(fs.statSync(`${paths.database}-wal`).size).toBeGreaterThan(0);

    const r = await runCli(['rollback', '--to', snapshotDir, '--data-dir', dir, '--json']);
    expect(r.stderr).toBe('');
    const { keptAs, secretsKeptAs } = parseJson(r);
    const kept = new Database(keptAs, { readonly: true });
    try {
      expect(kept.query('SELECT what FROM written_after_upgrade').all()).toEqual([{ what: 'the last commit' }]);
    } finally {
      kept.close();
    }
    expect(secretsKeptAs).toBe(`${paths.secrets}.before-rollback-${path.basename(keptAs).split('.before-rollback-')[1]}`);
    expect(fs.readFileSync(secretsKeptAs, 'utf8')).toBe('{"masterKey":"the rotated key"}');
    expect(fs.statSync(secretsKeptAs).mode & 0o777).toBe(0o600);
    expect(fs.readFileSync(paths.secrets, 'utf8')).toBe('{"masterKey":"the key of the older version"}');
    expect(schemaObjects(paths.database)).not.toContain('written_after_upgrade');

    // A database SQLite cannot open (it would delete the log on trying) goes aside too, its log with it.
    fs.writeFileSync(paths.database, 'x'.repeat(4096));
    fs.writeFileSync(`${paths.database}-wal`, 'its log');
    const again = rollbackTo(paths, snapshotDir, Date.now() + 60_000);
    expect(fs.readFileSync(again.keptAs, 'utf8')).toBe('x'.repeat(4096));
    expect(fs.readFileSync(`${again.keptAs}-wal`, 'utf8')).toBe('its log');
    expect(schemaObjects(paths.database)).not.toContain('written_after_upgrade');
  });

  test('the newest three snapshots are kept, and a fresh database takes none', () => {
    const dir = tempDir('coffer-snapshots-');
    dirs.push(dir);
    const paths = dataPaths(dir);
    fs.writeFileSync(paths.secrets, '{}');
    const db = openDatabase(paths.database);
    try {
      expect(upgradeDatabase(db, paths).snapshot).toBeNull();
      for (let i = 0; i < 4; i++) {
        toPreviousSchema(db);
        const { snapshot, applied } = upgradeDatabase(db, paths, { now: Date.UTC(2026, 0, 1 + i) });
        expect(applied).toEqual(since);
        expect(snapshot!.cofferVersion).not.toStartWith('schema-');
      }
      expect(listUpgradeSnapshots(paths).map((s) => s.createdAt.slice(0, 10))).toEqual(['2026-01-04', '2026-01-03', '2026-01-02']);
      expect(fs.readdirSync(paths.snapshots)).toHaveLength(3);
    } finally {
      closeDatabase(db);
    }
  });

  test('a snapshot is named by the build that last ran (its version and commit); rollback still lists and takes one named by the version alone', async () => {
    const paths = scratchDataDir('coffer-snapshot-names-');
    const dir = paths.root;
    const db = openDatabase(paths.database);
    try {
      upgradeDatabase(db, paths);
      toPreviousSchema(db);
      const { snapshot } = upgradeDatabase(db, paths, { now: Date.UTC(2026, 1, 1) });
      // Running from source, the build is the checkout: its commit (and -dirty with changes not committed), when git tells it.
      const build = buildVersion();
      if (sourceCommit() !== null) expect(build).toBe(`${BACKEND_VERSION}+${sourceCommit()}`);
      expect(snapshot!.cofferVersion).toBe(build);
      expect(path.basename(snapshot!.dir)).toBe(`${build}-20260201T000000Z`);
    } finally {
      closeDatabase(db);
    }
    // One taken by a build before commits were recorded: named by the version alone.
    const older = path.join(paths.snapshots, `${BACKEND_VERSION}-20260101T000000Z`);
    fs.cpSync(listUpgradeSnapshots(paths)[0]!.dir, older, { recursive: true });
    const description = JSON.parse(fs.readFileSync(path.join(older, 'snapshot.json'), 'utf8'));
    fs.writeFileSync(
      path.join(older, 'snapshot.json'),
      JSON.stringify({ ...description, cofferVersion: BACKEND_VERSION, createdAt: '2026-01-01T00:00:00.000Z' }),
    );
    let r = await runCli(['rollback', '--data-dir', dir]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(older);
    expect(r.stdout).toContain(description.schema);
    r = await runCli(['rollback', '--to', older, '--data-dir', dir]);
    expect(r.stderr).toBe('');
    expect(r.stdout).toContain(`rolled back to the database of Coffer ${BACKEND_VERSION} (2026-01-01T00:00:00.000Z)`);
  });

  test('a database from before folder ETags (as a rollback to such a version leaves it) upgrades with folder and root versions past any a client holds, never 0 again', () => {
    const paths = scratchDataDir('coffer-before-folder-etags-');
    const db = openDatabase(paths.database);
    try {
      migrate(
        db,
        embeddedMigrations.slice(
          0,
          embeddedMigrations.findIndex((m) => m.tag === '0021_tree_versions'),
        ),
      );
      db.$client.run(
        "INSERT INTO users (id, email, email_key, created_at, updated_at) VALUES ('owner-1', 'o@example.test', 'o@example.test', 0, 0)",
      );
      db.$client.run(
        "INSERT INTO users (id, email, email_key, created_at, updated_at) VALUES ('owner-2', 'p@example.test', 'p@example.test', 0, 0)",
      );
      db.$client.run(
        "INSERT INTO items (id, account_id, type, name, name_key, modified_at, accessed_at, created_at) VALUES ('folder-1', 'owner-1', 'folder', 'A', 'a', 0, 0, 0)",
      );
      const now = Date.UTC(2026, 11, 1);
      upgradeDatabase(db, paths, { now });
      const folder = db.$client.query<{ v: number }, []>("SELECT tree_version AS v FROM items WHERE id = 'folder-1'").get()!.v;
      const roots = db.$client.query<{ v: number }, []>('SELECT version AS v FROM tree_versions ORDER BY account_id').all();
      // At 0 (the column's default) they would repeat ETags that the newer version answered before the rollback.
      expect(folder).toBeGreaterThanOrEqual(now);
      expect(roots.map((r) => r.v >= now)).toEqual([true, true]);
    } finally {
      closeDatabase(db);
    }
  });

  test('a snapshot a crash cut short (its .partial directory, as big as the database) goes at the next upgrade', () => {
    const dir = tempDir('coffer-snapshot-crash-');
    dirs.push(dir);
    const paths = dataPaths(dir);
    fs.writeFileSync(paths.secrets, '{}');
    const db = openDatabase(paths.database);
    try {
      upgradeDatabase(db, paths);
      const cut = path.join(paths.snapshots, '0.1.0-20260101T000000Z.partial');
      fs.mkdirSync(cut, { recursive: true });
      fs.writeFileSync(path.join(cut, 'coffer.db'), 'half a database');
      toPreviousSchema(db);
      const { snapshot } = upgradeDatabase(db, paths, { now: Date.UTC(2026, 0, 2) });
      expect(fs.readdirSync(paths.snapshots)).toEqual([path.basename(snapshot!.dir)]);
    } finally {
      closeDatabase(db);
    }
  });

  test("a database main's builds recorded under a migration's former tag (renumbered at a merge, the same SQL) upgrades; another SQL under it is refused", () => {
    const dir = tempDir('coffer-former-tags-');
    dirs.push(dir);
    const at = embeddedMigrations.findIndex((m) => m.tag === '0013_share_link_options');
    const contentSearch = embeddedMigrations.find((m) => m.tag === '0017_content_search')!;
    const sha = (sql: string) => createHash('sha256').update(sql).digest('hex');
    // As a build of 2026-11-27 01:01 left it: 0000-0012, then the content search as 0013_content_search.
    const asBuilt = (file: string, hash: string) => {
      const db = openDatabase(path.join(dir, file));
      migrate(db, embeddedMigrations.slice(0, at));
      for (const statement of contentSearch.sql.split('--> statement-breakpoint')) if (statement.trim()) db.$client.run(statement);
      db.$client.query('INSERT INTO coffer_migrations (tag, hash, applied_at) VALUES (?, ?, ?)').run('0013_content_search', hash, 1);
      return db;
    };
    const db = asBuilt('renumbered.db', sha(contentSearch.sql));
    try {
      expect(migrate(db).applied).toEqual(
        embeddedMigrations
          .slice(at)
          .map((m) => m.tag)
          .filter((tag) => tag !== contentSearch.tag),
      );
      expect(pendingMigrations(db)).toEqual([]);
      expect(knownMigration('0013_content_search')).toBe(true);
    } finally {
      closeDatabase(db);
    }
    const other = asBuilt('other.db', sha('another content search'));
    try {
      expect(() => pendingMigrations(other)).toThrow('written by a newer version of Coffer (it has migration 0013_content_search)');
    } finally {
      closeDatabase(other);
    }
  });

  test('a command of the newer version leaves the database alone while an older server runs on it (its lock held by a live process)', async () => {
    const dir = tempDir('coffer-upgrade-beside-server-');
    dirs.push(dir);
    const paths = dataPaths(dir);
    fs.writeFileSync(paths.secrets, '{}');
    const db = openDatabase(paths.database);
    const server = Bun.spawn(['sleep', '60']);
    try {
      upgradeDatabase(db, paths);
      toPreviousSchema(db);
      fs.writeFileSync(paths.lock, String(server.pid));
      expect(() => upgradeDatabase(db, paths)).toThrow(`a Coffer server (pid ${server.pid}) is running on ${dir}`);
      expect(pendingMigrations(db).map((m) => m.tag)).toEqual(since);
      expect(fs.existsSync(paths.snapshots) ? fs.readdirSync(paths.snapshots) : []).toEqual([]);
      server.kill();
      await server.exited;
      expect(upgradeDatabase(db, paths).applied).toEqual(since);
    } finally {
      server.kill();
      closeDatabase(db);
    }
  });

  test('migrations that fail part-way leave the database exactly as before', () => {
    const dir = tempDir('coffer-failed-migration-');
    dirs.push(dir);
    const db = openDatabase(path.join(dir, 'coffer.db'));
    try {
      migrate(db, previous);
      const broken = [
        ...previous,
        { tag: '9998_fine', sql: 'CREATE TABLE fine (a INTEGER)' },
        { tag: '9999_broken', sql: 'CREATE TABLE half (a INTEGER);\n--> statement-breakpoint\nINSERT INTO nowhere VALUES (1)' },
      ];
      expect(() => migrate(db, broken)).toThrow('migration 9999_broken failed');
      const names = db.$client
        .query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type IN ('table', 'index', 'trigger')")
        .all()
        .map((r) => r.name);
      expect(names).not.toContain('fine');
      expect(names).not.toContain('half');
      expect(pendingMigrations(db, previous)).toEqual([]);
    } finally {
      closeDatabase(db);
    }
  });
});
