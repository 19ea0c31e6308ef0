import fs from 'node:fs';
import type { Infrastructure } from '../infrastructure.ts';
import { type AppError, diskFailing, diskFull } from '../../errors.ts';
import { formatSize } from '../../contract/size.ts';

export interface DiskSpace {
  /** Bytes the service may still write on the data directory's filesystem. */
  free: number;
  total: number;
  /** Bytes kept free for the database (COFFER_MIN_FREE_BYTES). */
  reserve: number;
  /** Less than twice the reserve is free: uploads and copies are refused, or soon will be. */
  low: boolean;
}

const WARN_EVERY_MS = 60_000;
const MiB = 1024 * 1024;

/** SQLite's and the filesystem's "no space left": the write cannot succeed until space is freed. */
export function isDiskFullError(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown } | null;
  return (
    e?.code === 'ENOSPC' || e?.code === 'SQLITE_FULL' || /database or disk is full|no space left on device/i.test(String(e?.message ?? ''))
  );
}

/** A read-only file system or a failing disk (SQLite's I/O and read-only errors): no write can succeed until the administrator acts. */
export function isDiskFailingError(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown } | null;
  const code = typeof e?.code === 'string' ? e.code : '';
  return (
    code === 'EROFS' ||
    code === 'EIO' ||
    code.startsWith('SQLITE_IOERR') ||
    code.startsWith('SQLITE_READONLY') ||
    /disk I\/O error|attempt to write a readonly database|read-only file system/i.test(String(e?.message ?? ''))
  );
}

/** The answer to an error the disk gave: 507 for a full one, 503 for a read-only or failing one; null for any other error. */
export function diskRefusal(err: unknown): AppError | null {
  if (isDiskFullError(err)) return diskFull();
  return isDiskFailingError(err) ? diskFailing() : null;
}

/**
 * A write that only records use (when a session or an app password was last used): on a full, read-only
 * or failing disk it is left out, so the read that made it is still answered.
 */
export function recordUnlessDiskRefuses(write: () => void): void {
  try {
    write();
  } catch (err) {
    if (!isDiskFullError(err) && !isDiskFailingError(err)) throw err;
  }
}

/**
 * The free space on the data directory's disk, against a reserve kept for the database: uploads and
 * copies stop while less than the reserve is free, so trash, permanent delete and empty trash (which
 * write rows and jobs to free space) always have room. Used by the upload paths and by `coffer doctor`.
 */
export class DiskSpaceService {
  private lastWarning = 0;
  /** What unfinished uploads (tus, chunked) announced and are yet to send, each kind's own count. */
  private readonly promisers: Array<() => number> = [];

  constructor(private readonly ctx: Pick<Infrastructure, 'config' | 'paths' | 'log' | 'driver'>) {}

  status(): DiskSpace {
    const s = fs.statfsSync(this.ctx.paths.root);
    const free = s.bavail * s.bsize;
    const reserve = this.ctx.config.minFreeBytes;
    return { free, total: s.blocks * s.bsize, reserve, low: free < 2 * reserve };
  }

  /** How often (in bytes written) a long write checks the reserve again: a quarter of it, 1 to 8 MiB. */
  get checkEvery(): number {
    return Math.max(MiB, Math.min(8 * MiB, Math.floor(this.ctx.config.minFreeBytes / 4)));
  }

  /** Throws the 507 when writing `bytes` more to the data directory's disk would leave less than the reserve free. */
  assertRoom(bytes = 0): void {
    // Objects in a bucket take no room here; the database still needs its reserve.
    this.assertFree(this.ctx.driver.location.driver === 'local' ? bytes : 0);
  }

  /** Counts the bytes a kind of unfinished upload is yet to receive in every later assertRoomToStage. */
  addPromised(promised: () => number): void {
    this.promisers.push(promised);
  }

  /** The 507 unless `bytes` more of an upload already counted fit above the reserve. Staged bytes are on this disk whatever the driver. */
  assertRoomToStage(bytes: number): void {
    this.assertFree(bytes);
  }

  /** The 507 unless a new upload's `bytes` fit beside the bytes unfinished ones are still to receive, above the reserve. */
  assertRoomToReserve(bytes: number): void {
    this.assertFree(this.promisers.reduce((sum, promised) => sum + promised(), bytes));
  }

  private assertFree(bytes: number): void {
    const space = this.status();
    if (space.free - bytes >= space.reserve) return;
    this.warnLow(space);
    throw diskFull();
  }

  /** A warn log line about low space, at most once a minute. */
  warnLow(space: DiskSpace = this.status()): void {
    const now = Date.now();
    if (now - this.lastWarning < WARN_EVERY_MS) return;
    this.lastWarning = now;
    this.ctx.log.warn('disk space low: uploads and copies are refused until space is freed', {
      dataDir: this.ctx.paths.root,
      free: space.free,
      reserve: space.reserve,
      hint: `${formatSize(space.free)} free, ${formatSize(space.reserve)} kept for the database (COFFER_MIN_FREE_BYTES)`,
    });
  }
}
