import { Database } from 'bun:sqlite';
import { drizzle, type BunSQLiteDatabase } from 'drizzle-orm/bun-sqlite';
import * as schema from './schema/index.ts';

export type Db = BunSQLiteDatabase<typeof schema> & { $client: Database };

/** Opens the database with the pragmas every Coffer process uses. */
export function openDatabase(path: string): Db {
  const sqlite = new Database(path, { create: true, strict: true });
  // busy_timeout first, so switching to WAL waits for a concurrent opener instead of failing.
  sqlite.run('PRAGMA busy_timeout = 5000');
  sqlite.run('PRAGMA journal_mode = WAL');
  sqlite.run('PRAGMA synchronous = NORMAL');
  sqlite.run('PRAGMA foreign_keys = ON');
  sqlite.run('PRAGMA temp_store = MEMORY');
  return drizzle({ client: sqlite, schema }) as Db;
}
