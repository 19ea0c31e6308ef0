import { createHash } from 'node:crypto';
import type { Db } from './client.ts';
import { type EmbeddedMigration, embeddedMigrations } from './migrations.ts';
import { DatabaseRepo } from './repos/database.ts';

export class DatabaseTooNewError extends Error {}

interface AppliedRow {
  tag: string;
  hash: string;
}

const hashOf = (sql: string) => createHash('sha256').update(sql).digest('hex');

/** Migrations this database has not applied yet; refuses a database written by a newer Coffer. */
export function pendingMigrations(db: Db, migrations: ReadonlyArray<EmbeddedMigration> = embeddedMigrations): EmbeddedMigration[] {
  const sqlite = db.$client;
  sqlite.run(`CREATE TABLE IF NOT EXISTS coffer_migrations (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    tag TEXT NOT NULL UNIQUE,
    hash TEXT NOT NULL,
    applied_at INTEGER NOT NULL
  )`);
  const applied = sqlite.query<AppliedRow, []>('SELECT tag, hash FROM coffer_migrations ORDER BY id').all();
  const done = new Set<string>();
  for (const row of applied) {
    // A former tag counts only with the same SQL: the hash a build of that time recorded.
    const m = migrations.find((m) => m.tag === row.tag || (m.formerTags?.includes(row.tag) && hashOf(m.sql) === row.hash));
    if (!m) {
      throw new DatabaseTooNewError(
        `This database was written by a newer version of Coffer (it has migration ${row.tag}); ` +
          'upgrade Coffer or restore a backup made by this version',
      );
    }
    done.add(m.tag);
  }
  return migrations.filter((m) => !done.has(m.tag));
}

export class MigrationFailedError extends Error {}

/**
 * Applies pending migrations in order, recording each in coffer_migrations, all in one transaction: a
 * migration that fails leaves the database exactly as it was before any of them.
 */
export function migrate(db: Db, migrations: ReadonlyArray<EmbeddedMigration> = embeddedMigrations): { applied: string[] } {
  const sqlite = db.$client;
  const pending = pendingMigrations(db, migrations);
  if (pending.length === 0) return { applied: [] };
  sqlite
    .transaction(() => {
      for (const m of pending) {
        const statements = m.sql
          .split('--> statement-breakpoint')
          .map((s) => s.trim())
          .filter((s) => s.split('\n').some((line) => line.trim() !== '' && !line.trim().startsWith('--')));
        try {
          for (const statement of statements) sqlite.run(statement);
          m.repair?.(sqlite);
        } catch (err) {
          throw new MigrationFailedError(`migration ${m.tag} failed (${err instanceof Error ? err.message : String(err)})`);
        }
        sqlite.query('INSERT INTO coffer_migrations (tag, hash, applied_at) VALUES (?, ?, ?)').run(m.tag, hashOf(m.sql), Date.now());
      }
    })
    .immediate();
  return { applied: pending.map((m) => m.tag) };
}

/** The Coffer version that last opened this database (null before versions were recorded), and recording this one. */
export function lastCofferVersion(db: Db): string | null {
  const sqlite = db.$client;
  createMetaTable(db);
  return sqlite.query<{ value: string }, []>("SELECT value FROM coffer_meta WHERE key = 'version'").get()?.value ?? null;
}

function createMetaTable(db: Db): void {
  db.$client.run('CREATE TABLE IF NOT EXISTS coffer_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)');
}

export function recordCofferVersion(db: Db, version: string): void {
  // Unchanged, nothing is written: a command that only reads, opened beside a server, then needs no write lock.
  if (lastCofferVersion(db) === version) return;
  db.$client.query("INSERT INTO coffer_meta (key, value) VALUES ('version', ?1) ON CONFLICT (key) DO UPDATE SET value = ?1").run(version);
}

/**
 * The instance's id (the end of every `oc:id`), made once and kept in the database: a Nextcloud client that finds
 * it changed walks every folder, and downloads a file moved meanwhile again instead of moving its copy.
 */
export function instanceIdOf(db: Db): string {
  const sqlite = db.$client;
  createMetaTable(db);
  const read = () => sqlite.query<{ value: string }, []>("SELECT value FROM coffer_meta WHERE key = 'instance_id'").get()?.value;
  const kept = read();
  if (kept) return kept;
  // Read first: a command opened beside the server that made the id then needs no write lock.
  sqlite.query("INSERT INTO coffer_meta (key, value) VALUES ('instance_id', ?) ON CONFLICT (key) DO NOTHING").run(crypto.randomUUID());
  return read()!;
}

/** A consistent copy of the database (one transaction's view) in `file`. */
export function snapshotDatabase(db: Db, file: string): void {
  new DatabaseRepo(db.$client).snapshotTo(file);
}

/** The last migration this database has applied, or null for a new database. */
export function appliedSchema(db: Db): string | null {
  return db.$client.query<{ tag: string }, []>('SELECT tag FROM coffer_migrations ORDER BY id DESC LIMIT 1').get()?.tag ?? null;
}
