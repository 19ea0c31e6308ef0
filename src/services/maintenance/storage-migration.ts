import type { Clock } from '../../clock.ts';
import type { ItemsRepo } from '../../db/repos/items.ts';
import type { StorageLocationRepo } from '../../db/repos/storage-location.ts';
import type { ThumbnailsRepo } from '../../db/repos/thumbnails.ts';
import { badRequest } from '../../errors.ts';
import { ObjectIntegrityError, StorageNotFoundError, type StorageDriver, type StorageLocation } from '../../storage/driver.ts';
import { describeLocation, sameLocation } from '../../storage/drivers.ts';
import { thumbnailKey } from '../../storage/keys.ts';
import { HEADER_SIZE, sealedSize, SEGMENT_SIZE } from '../../storage/sealed.ts';

const PAGE = 500;
const LANES = 8;
const TAG_SIZE = 16;

export interface MigrationProgress {
  objects: number;
  totalObjects: number;
  bytes: number;
  totalBytes: number;
}

export interface MigrationResult {
  from: StorageLocation;
  to: StorageLocation;
  /** Objects copied and verified by this run. */
  copied: number;
  /** Objects an earlier, interrupted run had already copied and verified. */
  alreadyCopied: number;
  /** File rows whose object the old storage does not have (already lost; see `coffer orphans scan`). */
  missing: string[];
  bytes: number;
  /** Whether the new location is now recorded (`--switch`). */
  switched: boolean;
  seconds: number;
}

/** The stored size of a file's object and the range of its last sealed segment. */
function lastSegment(plainSize: number): { start: number; end: number } {
  const total = sealedSize(plainSize);
  const lastPlain = plainSize === 0 ? 0 : plainSize - Math.floor((plainSize - 1) / SEGMENT_SIZE) * SEGMENT_SIZE;
  return { start: total - lastPlain - TAG_SIZE, end: total };
}

async function readRange(driver: StorageDriver, key: string, range: { start: number; end: number }): Promise<Buffer> {
  return Buffer.from(await new Response(await driver.get(key, range)).arrayBuffer());
}

/**
 * `coffer storage migrate`: copies every object a file row points at from the recorded storage to
 * another, verifying each copy (its size, and its header and last segment read back byte for byte),
 * remembering each verified copy so an interrupted run resumes where it stopped. The server may keep
 * running: `switch` pauses its writes (uploads and copies answer 503), copies what arrived meanwhile
 * and records the new location, so no row can point at an object the new storage lacks. The old
 * objects stay until `deleteSource`, run after a switch.
 */
/** Copies of one object tried before a size that keeps coming out wrong stops the migration. */
const COPY_ATTEMPTS = 3;

export class StorageMigrationService {
  constructor(private readonly d: { clock: Clock; locations: StorageLocationRepo; items: ItemsRepo; thumbnails: ThumbnailsRepo }) {}

  /** A file's thumbnail objects with their plaintext sizes: they move with it. */
  private thumbnailsOf(storageKey: string): Array<{ key: string; size: number }> {
    const row = this.d.thumbnails.get(storageKey);
    if (row?.status !== 'ready') return [];
    return [
      { key: thumbnailKey(storageKey, 'small'), size: row.smallSize! },
      { key: thumbnailKey(storageKey, 'large'), size: row.largeSize! },
    ];
  }

  /** The name copies to `target` are remembered under. */
  static targetId(l: StorageLocation, localRoot: string): string {
    return l.driver === 'local' ? `local:${localRoot}` : `s3:${l.bucket}/${l.prefix}`;
  }

  async migrate(
    source: StorageDriver,
    target: StorageDriver,
    targetId: string,
    opts: { switch?: boolean; signal?: AbortSignal; onProgress?: (p: MigrationProgress) => void } = {},
  ): Promise<MigrationResult> {
    const started = performance.now();
    const recorded = this.d.locations.get() ?? source.location;
    if (!sameLocation(recorded, source.location)) {
      throw badRequest(
        `files are recorded as stored on ${describeLocation(recorded)}, not on ${describeLocation(source.location)}: run migrate with the settings of the storage in use`,
      );
    }
    if (sameLocation(source.location, target.location))
      throw badRequest(`the files are already stored on ${describeLocation(target.location)}`);
    const result: MigrationResult = {
      from: source.location,
      to: target.location,
      copied: 0,
      alreadyCopied: 0,
      missing: [],
      bytes: 0,
      switched: false,
      seconds: 0,
    };
    await this.copyAll(source, target, targetId, result, true, opts.onProgress, opts.signal);
    if (opts.switch) {
      opts.signal?.throwIfAborted();
      // From here no upload or copy can commit a row; the last pass sees every row there will be.
      this.d.locations.setWritesPaused(this.d.clock.now());
      try {
        await this.copyAll(source, target, targetId, result, false, opts.onProgress, opts.signal);
        opts.signal?.throwIfAborted();
        this.d.locations.record(target.location, this.d.clock.now());
        result.switched = true;
      } catch (err) {
        this.d.locations.setWritesPaused(null);
        throw err;
      }
    }
    result.seconds = (performance.now() - started) / 1000;
    return result;
  }

  /** After a switch: removes from `source` every object that was copied to the storage now recorded. */
  async deleteSource(
    source: StorageDriver,
    target: StorageDriver,
    targetId: string,
    onProgress?: (p: MigrationProgress) => void,
  ): Promise<{ deleted: number; missing: number }> {
    const recorded = this.d.locations.get();
    if (!recorded || !sameLocation(recorded, target.location)) {
      throw badRequest(
        `--delete-source removes the old objects only after a successful switch to ${describeLocation(target.location)}: run migrate with --switch first`,
      );
    }
    if (sameLocation(source.location, target.location)) throw badRequest('the source and the target are the same storage');
    const total = this.d.locations.copiedCount(targetId);
    let done = 0;
    let deleted = 0;
    let missing = 0;
    for (let after = ''; ; ) {
      const page = this.d.items.storedObjectPage(after, PAGE);
      if (page.length === 0) break;
      after = page.at(-1)!.storageKey;
      for (const row of page) {
        if (!this.d.locations.isCopied(targetId, row.storageKey)) continue;
        // Never remove the only copy: the target must still hold it.
        if ((await target.head(row.storageKey))?.size !== sealedSize(row.size)) {
          throw new ObjectIntegrityError(
            `object ${row.storageKey} is not in ${describeLocation(target.location)} as copied; nothing more was deleted`,
          );
        }
        if (await source.delete(row.storageKey)) deleted++;
        else missing++;
        for (const t of this.thumbnailsOf(row.storageKey))
          if ((await target.head(t.key))?.size === sealedSize(t.size)) await source.delete(t.key);
        onProgress?.({ objects: ++done, totalObjects: total, bytes: 0, totalBytes: 0 });
      }
    }
    this.d.locations.forgetCopies(targetId);
    return { deleted, missing };
  }

  private async copyAll(
    source: StorageDriver,
    target: StorageDriver,
    targetId: string,
    result: MigrationResult,
    firstPass: boolean,
    onProgress?: (p: MigrationProgress) => void,
    signal?: AbortSignal,
  ): Promise<void> {
    const totals = this.d.items.storedObjectTotals();
    const progress: MigrationProgress = { objects: 0, totalObjects: totals.objects, bytes: 0, totalBytes: totals.bytes };
    for (let after = ''; ; ) {
      const page = this.d.items.storedObjectPage(after, PAGE);
      if (page.length === 0) break;
      after = page.at(-1)!.storageKey;
      let next = 0;
      const lane = async () => {
        while (next < page.length) {
          // Stopped (Ctrl-C): the copies verified so far stay remembered, and a switch's pause is lifted by the caller.
          signal?.throwIfAborted();
          const row = page[next++]!;
          if (this.d.locations.isCopied(targetId, row.storageKey)) {
            if (firstPass) result.alreadyCopied++;
          } else if (await this.copyOne(source, target, row.storageKey, row.size)) {
            // A thumbnail missing at the source is made again on request: only the file itself must be there.
            for (const t of this.thumbnailsOf(row.storageKey)) await this.copyOne(source, target, t.key, t.size);
            this.d.locations.markCopied(targetId, row.storageKey, this.d.clock.now());
            result.copied++;
            result.bytes += row.size;
          } else if (firstPass || !result.missing.includes(row.storageKey)) result.missing.push(row.storageKey);
          progress.objects++;
          progress.bytes += row.size;
          onProgress?.(progress);
        }
      };
      await Promise.all(Array.from({ length: LANES }, lane));
    }
  }

  /** One byte copy, then its size, header and last segment compared with the source's; false when the source has no such object. */
  private async copyOne(source: StorageDriver, target: StorageDriver, key: string, plainSize: number): Promise<boolean> {
    const expected = sealedSize(plainSize);
    // A write of the same key cut off by a kill can still land after ours (small S3 servers store what they
    // got): a copy whose size is wrong is made again before the migration stops.
    for (let attempt = 1; ; attempt++) {
      let body: ReadableStream<Uint8Array>;
      try {
        body = await source.get(key);
      } catch (err) {
        if (err instanceof StorageNotFoundError) return false;
        throw err;
      }
      await target.put(key, body as unknown as AsyncIterable<Uint8Array>);
      const stored = await target.head(key);
      if (stored?.size === expected) break;
      if (attempt === COPY_ATTEMPTS) {
        throw new ObjectIntegrityError(
          `copy of ${key} has ${stored?.size ?? 'no'} bytes in ${describeLocation(target.location)}, expected ${expected}`,
        );
      }
      await Bun.sleep(250 * attempt);
    }
    const last = lastSegment(plainSize);
    for (const range of [{ start: 0, end: HEADER_SIZE }, last]) {
      const [a, b] = await Promise.all([readRange(source, key, range), readRange(target, key, range)]);
      if (!a.equals(b)) throw new ObjectIntegrityError(`copy of ${key} differs from the original in bytes ${range.start}-${range.end - 1}`);
    }
    return true;
  }
}
