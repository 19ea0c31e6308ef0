import { afterAll, describe, expect, test } from 'bun:test';
import { Database } from 'bun:sqlite';
import fs from 'node:fs';
import path from 'node:path';
import { WalHold } from '../../src/db/wal-hold.ts';
import { tempDir } from '../helpers/server.ts';

const dir = tempDir('coffer-wal-hold-');
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

// Another process that holds SQLite's checkpoint lock on a database (byte 121 of its -shm file: the locks
// begin at 120, the checkpointer's is the second), as a `coffer` command checkpointing beside the server does.
const HOLDER = `
import { dlopen, FFIType, ptr } from 'bun:ffi';
import fs from 'node:fs';
const { symbols } = dlopen('libc.so.6', { fcntl: { args: [FFIType.i32, FFIType.i32, FFIType.ptr], returns: FFIType.i32 } });
const fd = fs.openSync(process.argv[2], 'r+');
const flock = new DataView(new ArrayBuffer(32));
flock.setInt16(0, 1, true); // F_WRLCK
flock.setBigInt64(8, 121n, true);
flock.setBigInt64(16, 1n, true);
if (symbols.fcntl(fd, 6, ptr(flock.buffer)) !== 0) process.exit(1); // F_SETLK
console.log('locked');
await Bun.sleep(60_000);
`;

describe('WalHold (db/wal-hold.ts)', () => {
  test('a checkpoint that finds another connection checkpointing is not a complete one', async () => {
    const file = path.join(dir, 'busy.db');
    const db = new Database(file, { create: true });
    db.run('PRAGMA journal_mode = WAL');
    db.run('PRAGMA wal_autocheckpoint = 0');
    db.run('CREATE TABLE t (id INTEGER PRIMARY KEY, b BLOB)');
    db.run('INSERT INTO t (b) VALUES (randomblob(3000))');
    const hold = new WalHold(file);
    const script = path.join(dir, 'holder.ts');
    fs.writeFileSync(script, HOLDER);
    const holder = Bun.spawn([process.execPath, script, `${file}-shm`], { stdout: 'pipe' });
    try {
      const reader = holder.stdout.getReader();
      expect(new TextDecoder().decode((await reader.read()).value)).toContain('locked');
      expect(hold.checkpointAfter(() => {})).toBe(false);
    } finally {
      holder.kill();
      await holder.exited;
    }
    expect(hold.checkpointAfter(() => {})).toBe(true);
    hold.close();
    db.close();
  });
});
