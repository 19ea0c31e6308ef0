import { Database } from 'bun:sqlite';
import path from 'node:path';
import type { TestServer } from './server.ts';

/**
 * Another connection holds the database's write lock, as a `coffer` command, a backup or the index writer's long
 * batch can, and the server's connection waits `waitMs` for it instead of 5 s: longer than the server tolerates.
 * The returned function lets go and puts the server's wait back.
 */
export function holdWriteLock(t: TestServer, waitMs = 50): () => void {
  const server = t.server.ctx.db.$client;
  server.run(`PRAGMA busy_timeout = ${waitMs}`);
  const other = new Database(path.join(t.dataDir, 'coffer.db'));
  other.run('BEGIN IMMEDIATE');
  return () => {
    other.run('ROLLBACK');
    other.close();
    server.run('PRAGMA busy_timeout = 5000');
  };
}
