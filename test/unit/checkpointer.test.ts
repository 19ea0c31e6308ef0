import { afterAll, describe, expect, test } from 'bun:test';
import { Database } from 'bun:sqlite';
import fs from 'node:fs';
import path from 'node:path';
import { Checkpointer } from '../../src/db/checkpointer.ts';
import { closeDatabase, openDatabase } from '../../src/db/client.ts';
import { DatabaseRepo } from '../../src/db/repos/database.ts';
import { tempDir } from '../helpers/server.ts';

const dir = tempDir('coffer-checkpointer-');
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

async function until(done: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!done()) {
    if (Date.now() > end) throw new Error('timed out');
    await Bun.sleep(10);
  }
}

/** The server's pragmas (automatic checkpoint at 1,000 frames), a table, and a writer of ~10 frames a commit. */
function setUp(name: string, opts: { triggerFrames?: number } = {}) {
  const file = path.join(dir, `${name}.db`);
  const db = openDatabase(file);
  const sqlite = db.$client;
  sqlite.run('CREATE TABLE t (id INTEGER PRIMARY KEY, b BLOB)');
  const insert = sqlite.query('INSERT INTO t (b) VALUES (randomblob(3000))');
  const commit = () => sqlite.transaction(() => Array.from({ length: 10 }, () => insert.run()))();
  const repo = new DatabaseRepo(sqlite);
  const checkpointer = new Checkpointer(sqlite, file, { triggerFrames: 200, idleMs: 300, pollMs: 20, ...opts });
  repo.offloadCheckpoints(checkpointer);
  checkpointer.start();
  const close = async () => {
    await checkpointer.stop();
    closeDatabase(db);
  };
  return { file, sqlite, commit, checkpointer, repo, close };
}

describe('checkpoints off the request thread (db/checkpointer.ts)', () => {
  test('a log past the trigger is checkpointed by the worker, well before the request connection would, and the thread is let go when idle', async () => {
    const { file, commit, checkpointer, close } = setUp('offload');
    for (let i = 0; i < 30; i++) commit();
    // About 300 frames: under the request connection's own automatic checkpoint (1,000), so only the worker can have copied them.
    expect(checkpointer.pendingFrames()).toBeGreaterThanOrEqual(200);
    await until(() => checkpointer.checkpoints > 0 && checkpointer.pendingFrames() === 0);
    expect(checkpointer.threadRunning).toBe(true);
    expect(checkpointer.fallbacks).toBe(0);
    const other = new Database(file, { readonly: true });
    expect(other.query<{ n: number }, []>('SELECT COUNT(*) AS n FROM t').get()!.n).toBe(300);
    other.close();
    await until(() => !checkpointer.threadRunning, 5_000);
    // Started again when the log grows again.
    const before = checkpointer.checkpoints;
    for (let i = 0; i < 30; i++) commit();
    await until(() => checkpointer.checkpoints > before && checkpointer.pendingFrames() === 0);
    await close();
  });

  test('while replication holds the log (automatic checkpoints off), the worker checkpoints nothing; on again, it does', async () => {
    const { commit, checkpointer, repo, close } = setUp('paused');
    repo.setAutoCheckpoint(false);
    for (let i = 0; i < 60; i++) commit();
    await Bun.sleep(400);
    expect(checkpointer.checkpoints).toBe(0);
    expect(checkpointer.threadRunning).toBe(false);
    expect(checkpointer.pendingFrames()).toBeGreaterThanOrEqual(600);
    repo.setAutoCheckpoint(true);
    await until(() => checkpointer.checkpoints > 0 && checkpointer.pendingFrames() === 0);
    await close();
  });

  test('1,000 frames not checkpointed (the worker behind) are checkpointed on the request thread, as SQLite did', async () => {
    const { commit, checkpointer, close } = setUp('fallback', { triggerFrames: 100_000 });
    let most = 0;
    for (let i = 0; i < 150; i++) {
      commit();
      checkpointer.poke();
      most = Math.max(most, checkpointer.pendingFrames());
    }
    expect(checkpointer.fallbacks).toBeGreaterThan(0);
    expect(checkpointer.checkpoints).toBe(0);
    // Never more than the bound and one commit's frames waiting for a checkpoint.
    expect(most).toBeLessThan(1000 + 15);
    await close();
  });

  test('stopping lets the worker finish and close its connection, so the database closes last and removes its log', async () => {
    const { file, commit, checkpointer, close } = setUp('stop');
    for (let i = 0; i < 30; i++) commit();
    await until(() => checkpointer.threadRunning);
    await close();
    expect(checkpointer.threadRunning).toBe(false);
    expect(fs.existsSync(`${file}-wal`)).toBe(false);
  });
});
