import { afterAll, describe, expect, test } from 'bun:test';
import { Database } from 'bun:sqlite';
import fs from 'node:fs';
import path from 'node:path';
import { lastFramePerPage, positionIn, readFrames, readWalHeader, scanCommitted, type WalHeader } from '../../src/lib/sqlite-wal.ts';
import { tempDir } from '../helpers/server.ts';

const dir = tempDir('coffer-sqlite-wal-');
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const FRAME = 24 + 4096;

/**
 * A database whose log holds `commits` transactions of ten 3,000-byte rows each (several hundred frames, so
 * more than one read's worth), never checkpointed: its file before them, a copy of its log, and the file
 * SQLite's own checkpoint of that log gives.
 */
function logOf(name: string, commits: number): { base: string; wal: string; checkpointed: string } {
  const file = path.join(dir, `${name}.db`);
  const db = new Database(file, { create: true });
  db.run('PRAGMA page_size = 4096');
  db.run('PRAGMA journal_mode = WAL');
  db.run('PRAGMA wal_autocheckpoint = 0');
  db.run('CREATE TABLE t (id INTEGER PRIMARY KEY, b BLOB)');
  db.run('PRAGMA wal_checkpoint(TRUNCATE)');
  const base = path.join(dir, `${name}.base`);
  fs.copyFileSync(file, base);
  const insert = db.query('INSERT INTO t (b) VALUES (randomblob(3000))');
  for (let c = 0; c < commits; c++) db.transaction(() => Array.from({ length: 10 }, () => insert.run()))();
  db.run('UPDATE t SET b = randomblob(100) WHERE id % 7 = 0');
  const wal = path.join(dir, `${name}.wal`);
  fs.copyFileSync(`${file}-wal`, wal);
  db.run('PRAGMA wal_checkpoint(TRUNCATE)');
  db.close();
  return { base, wal, checkpointed: file };
}

function withLog<T>(wal: string, read: (fd: number, header: WalHeader) => T): T {
  const fd = fs.openSync(wal, 'r');
  try {
    return read(fd, readWalHeader(fd)!);
  } finally {
    fs.closeSync(fd);
  }
}

describe('reading the write-ahead log (lib/sqlite-wal.ts)', () => {
  test('the last frame of each page, applied to the file before the log, gives the file SQLite checkpoints', () => {
    const { base, wal, checkpointed } = logOf('apply', 40);
    const frames = (fs.statSync(wal).size - 32) / FRAME;
    expect(frames).toBeGreaterThan(500);
    const applied = path.join(dir, 'apply.applied');
    fs.copyFileSync(base, applied);
    const out = fs.openSync(applied, 'r+');
    withLog(wal, (fd, header) => {
      const run = scanCommitted(fd, header, positionIn(header, null))!;
      expect(run.lastFrame).toBe(frames);
      expect(run.pages.length).toBe(frames);
      const kept = lastFramePerPage(1, run.pages);
      expect(new Set(kept.map((f) => run.pages[f - 1])).size).toBe(kept.length);
      readFrames(fd, header, kept, (pgno, page) => fs.writeSync(out, page, 0, page.length, (pgno - 1) * 4096));
      fs.ftruncateSync(out, run.dbPages * 4096);
    });
    fs.closeSync(out);
    expect(Buffer.compare(fs.readFileSync(applied), fs.readFileSync(checkpointed))).toBe(0);
  });

  test('read from a position, only the frames after it; sparse frames far apart are each read', () => {
    const { wal } = logOf('resume', 30);
    withLog(wal, (fd, header) => {
      const all = scanCommitted(fd, header, positionIn(header, null))!;
      // Where the first half's run ends, its checksum continues into the rest.
      const cut = path.join(dir, 'resume.half');
      const half = Math.floor(all.lastFrame / 2);
      fs.writeFileSync(cut, fs.readFileSync(wal).subarray(0, 32 + half * FRAME));
      const first = withLog(cut, (cfd, h) => scanCommitted(cfd, h, positionIn(h, null))!);
      expect(first.lastFrame).toBeLessThanOrEqual(half);
      const rest = scanCommitted(fd, header, {
        salt1: header.salt1,
        salt2: header.salt2,
        nextFrame: first.lastFrame + 1,
        checksum: first.checksum,
      })!;
      expect(rest.lastFrame).toBe(all.lastFrame);
      expect(rest.pages).toEqual(all.pages.slice(first.lastFrame));
      expect(rest.checksum).toEqual(all.checksum);

      const wanted = [1, 2, 130, 131, 400, all.lastFrame];
      const got: number[] = [];
      readFrames(fd, header, wanted, (pgno) => got.push(pgno));
      expect(got).toEqual(wanted.map((f) => all.pages[f - 1]!));
    });
  });

  test('a transaction cut short or a changed byte ends the run at the commit before it', () => {
    const { wal } = logOf('damaged', 20);
    const bytes = fs.readFileSync(wal);
    const all = withLog(wal, (fd, header) => scanCommitted(fd, header, positionIn(header, null))!);
    // Commits are the frames whose header carries the database's size.
    const commits = Array.from({ length: all.lastFrame }, (_, i) => i + 1).filter(
      (f) => bytes.readUInt32BE(32 + (f - 1) * FRAME + 4) !== 0,
    );
    const target = commits[commits.length - 3]!;
    const previous = commits[commits.length - 4]!;

    const cut = path.join(dir, 'damaged.cut');
    fs.writeFileSync(cut, bytes.subarray(0, 32 + (target - 1) * FRAME));
    expect(withLog(cut, (fd, h) => scanCommitted(fd, h, positionIn(h, null))!.lastFrame)).toBe(previous);

    const flipped = Buffer.from(bytes);
    const at = 32 + (target - 1) * FRAME + 24 + 100;
    flipped[at] = flipped[at]! ^ 1;
    const changed = path.join(dir, 'damaged.flipped');
    fs.writeFileSync(changed, flipped);
    expect(withLog(changed, (fd, h) => scanCommitted(fd, h, positionIn(h, null))!.lastFrame)).toBe(previous);

    withLog(cut, (fd, h) => {
      expect(() => readFrames(fd, h, [1, target + 5], () => {})).toThrow(`lost frame ${target + 5}`);
    });
  });
});
