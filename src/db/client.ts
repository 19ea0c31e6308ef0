import fs from 'node:fs';
import { Database } from 'bun:sqlite';
import { drizzle, type BunSQLiteDatabase } from 'drizzle-orm/bun-sqlite';
import * as schema from './schema/index.ts';
import { DATABASE_BUSY_TIMEOUT_MS, StartupError } from '../errors.ts';

export type Db = BunSQLiteDatabase<typeof schema> & { $client: Database };

/**
 * The database and its -wal and -shm files are readable by the owner only, like secrets.json: they hold
 * every wrapped data key and password hash. SQLite gives the -wal and -shm files the database's mode, so
 * the database is created 0600 before SQLite opens it; files left wider by an older version are narrowed.
 */
function restrictDatabaseFiles(path: string): void {
  fs.closeSync(fs.openSync(path, 'a', 0o600));
  for (const file of [path, `${path}-wal`, `${path}-shm`]) {
    try {
      if ((fs.statSync(file).mode & 0o077) !== 0) fs.chmodSync(file, 0o600);
    } catch (err) {
      // Gone, or another user's file (an admin command run as someone else): leave it as it is.
      if (!['ENOENT', 'EPERM'].includes((err as NodeJS.ErrnoException).code ?? '')) throw err;
    }
  }
}

// SQL texts db.query() keeps prepared; the runtime's 20 is fewer than the server uses, and an evicted statement's
// native memory waits for a collector that does not count it (docs/performance.md, what a WebDAV PUT allocates).
const PREPARED_TEXTS = 256;

/** A database file that cannot be used at all, said in one line with what to do; any other error as it is. */
function unusableDatabase(path: string, err: unknown): unknown {
  const code = (err as { code?: unknown } | null)?.code;
  if (code === 'SQLITE_NOTADB' || code === 'SQLITE_CORRUPT') {
    return new StartupError(
      `${path} is not a Coffer database, or it is damaged (${code}): point --data-dir (COFFER_DATA_DIR) at the instance's directory, or restore the instance from a backup (coffer restore)`,
    );
  }
  if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS' || (typeof code === 'string' && /^SQLITE_(CANTOPEN|READONLY)/.test(code))) {
    return new StartupError(
      `cannot open the database ${path} (${code}): it, its -wal and -shm files and its directory must be readable and writable by the user running Coffer`,
    );
  }
  return err;
}

/** Opens the database with the pragmas every Coffer process uses. */
export function openDatabase(path: string): Db {
  let sqlite: Database | undefined;
  try {
    restrictDatabaseFiles(path);
    Database.MAX_QUERY_CACHE_SIZE = PREPARED_TEXTS;
    sqlite = new Database(path, { create: true, strict: true });
    // busy_timeout first, so switching to WAL waits for a concurrent opener instead of failing.
    sqlite.run(`PRAGMA busy_timeout = ${DATABASE_BUSY_TIMEOUT_MS}`);
    sqlite.run('PRAGMA journal_mode = WAL');
    sqlite.run('PRAGMA synchronous = NORMAL');
    sqlite.run('PRAGMA foreign_keys = ON');
    sqlite.run('PRAGMA temp_store = MEMORY');
  } catch (err) {
    sqlite?.close();
    throw unusableDatabase(path, err);
  }
  return drizzle({ client: sqlite, schema }) as Db;
}

/** Frees the connection's page cache (what start-up's migrations and checks read, about 1 MiB); pages are read again as needed. */
export function releasePageCache(db: Db): void {
  db.$client.run('PRAGMA shrink_memory');
}

/** `fn` in a transaction, or in a savepoint when one is open; `immediate` begins with BEGIN IMMEDIATE. */
export interface Transact {
  <T>(fn: () => T): T;
  immediate<T>(fn: () => T): T;
}

const transacts = new WeakMap<Database, Transact>();

/**
 * The connection's one reusable transaction wrapper: bun:sqlite's `transaction()` builds five closures and
 * defines their properties at every call (about 3 µs), and an upload's writes made three or four such calls.
 */
export function transactOf(sqlite: Database): Transact {
  let transact = transacts.get(sqlite);
  if (!transact) {
    transact = sqlite.transaction((fn: () => unknown) => fn()) as Transact;
    transacts.set(sqlite, transact);
  }
  return transact;
}

/** Closes the database; the one way code outside src/db lets go of it. */
export function closeDatabase(db: Db): void {
  db.$client.close();
}
