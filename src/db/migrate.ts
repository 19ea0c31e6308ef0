import { createHash } from 'node:crypto';
import type { Db } from './client.ts';
import { embeddedMigrations } from './migrations.ts';

export class DatabaseTooNewError extends Error {}

interface AppliedRow {
  tag: string;
  hash: string;
}

const hashOf = (sql: string) => createHash('sha256').update(sql).digest('hex');

/** Migrations this database has not applied yet; refuses a database written by a newer Coffer. */
function pendingMigrations(db: Db, migrations = embeddedMigrations): Array<{ tag: string; sql: string }> {
  const sqlite = db.$client;
  sqlite.run(`CREATE TABLE IF NOT EXISTS coffer_migrations (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    tag TEXT NOT NULL UNIQUE,
    hash TEXT NOT NULL,
    applied_at INTEGER NOT NULL
  )`);
  const applied = sqlite.query<AppliedRow, []>('SELECT tag, hash FROM coffer_migrations ORDER BY id').all();
  const known = new Set(migrations.map((m) => m.tag));
  const unknown = applied.find((row) => !known.has(row.tag));
  if (unknown) {
    throw new DatabaseTooNewError(
      `This database was written by a newer version of Coffer (it has migration ${unknown.tag}); ` +
        'upgrade Coffer or restore a backup made by this version',
    );
  }
  const done = new Set(applied.map((row) => row.tag));
  return migrations.filter((m) => !done.has(m.tag));
}

/** Applies pending migrations in order, each in its own transaction, recording each in coffer_migrations. */
export function migrate(db: Db, migrations = embeddedMigrations): { applied: string[] } {
  const sqlite = db.$client;
  const applied: string[] = [];
  for (const m of pendingMigrations(db, migrations)) {
    const statements = m.sql
      .split('--> statement-breakpoint')
      .map((s) => s.trim())
      .filter(Boolean);
    sqlite
      .transaction(() => {
        for (const statement of statements) sqlite.run(statement);
        sqlite.query('INSERT INTO coffer_migrations (tag, hash, applied_at) VALUES (?, ?, ?)').run(m.tag, hashOf(m.sql), Date.now());
      })
      .immediate();
    applied.push(m.tag);
  }
  return { applied };
}
