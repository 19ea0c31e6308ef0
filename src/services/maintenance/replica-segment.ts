import fs from 'node:fs';
import path from 'node:path';
import { lastFramePerPage, positionIn, readFrames, readWalHeader, scanCommitted, type WalPosition } from '../../lib/sqlite-wal.ts';
import { objectName, SealedObjectWriter, type SegmentDescription } from './replica-format.ts';

/** What the next segment of a generation is made from. */
export interface SegmentInput {
  walFile: string;
  outbox: string;
  generation: string;
  key: Uint8Array;
  index: number;
  /** Where the segment starts reading the log. */
  position: WalPosition | null;
  at: number;
}

/** Where reading stopped, and the segment when there was anything committed to put in one. */
export interface SegmentOutput {
  position: WalPosition | null;
  segment: {
    name: string;
    /** Its sealed bytes, written beside the outbox (`.name`), not yet synced. */
    aside: string;
    bytes: number;
    /** Frames read from the log (more than the segment holds when a page was written more than once). */
    read: number;
  } | null;
}

/**
 * Reads what was committed to the log since `position` into one sealed segment. Safe beside the writer:
 * only frames whose checksums hold and that end in a commit are taken, and the replication's hold keeps
 * them from being overwritten until they were read.
 */
export function writeSegment(input: SegmentInput): SegmentOutput {
  const fd = openOrNull(input.walFile);
  if (fd === null) return { position: input.position, segment: null };
  try {
    const header = readWalHeader(fd);
    if (!header) return { position: input.position, segment: null };
    const from = positionIn(header, input.position);
    const run = scanCommitted(fd, header, from);
    if (!run) return { position: from, segment: null };
    const name = objectName.wal(input.generation, input.index, input.at);
    // A page written by several commits of the segment goes once, as the last of them left it.
    const kept = lastFramePerPage(from.nextFrame, run.pages);
    const description: SegmentDescription = {
      kind: 'wal',
      generation: input.generation,
      index: input.index,
      at: input.at,
      frames: kept.length,
      pageSize: header.pageSize,
      dbPages: run.dbPages,
    };
    const aside = path.join(input.outbox, `.${name}`);
    const out = fs.openSync(aside, 'w', 0o600);
    let bytes: number;
    try {
      const w = new SealedObjectWriter(Buffer.from(input.key), name, out, description);
      const number = Buffer.alloc(4);
      readFrames(fd, header, kept, (pgno, page) => {
        number.writeUInt32BE(pgno);
        w.write(number);
        w.write(page);
      });
      w.finish();
      bytes = w.bytes;
    } catch (err) {
      fs.rmSync(aside, { force: true });
      throw err;
    } finally {
      fs.closeSync(out);
    }
    return {
      position: { salt1: header.salt1, salt2: header.salt2, nextFrame: run.lastFrame + 1, checksum: run.checksum },
      segment: { name, aside, bytes, read: run.lastFrame - from.nextFrame + 1 },
    };
  } finally {
    fs.closeSync(fd);
  }
}

export function openOrNull(file: string): number | null {
  try {
    return fs.openSync(file, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}
