import type { AttemptsRepo } from '../../db/repos/attempts.ts';
import { randomBytes } from 'node:crypto';
import type { Clock } from '../../clock.ts';
import type { Item, ItemsRepo } from '../../db/repos/items.ts';
import type { LibrariesRepo, LibraryRow } from '../../db/repos/libraries.ts';
import type { PhotoRow, PhotoWindow, SharedPhotoRow, ThumbnailRow, ThumbnailsRepo } from '../../db/repos/thumbnails.ts';
import { Messages, notFound, validationFailed } from '../../errors.ts';
import { Jobs } from '../../jobs/catalog.ts';
import type { JobQueue } from '../../jobs/queue.ts';
import type { Logger } from '../../log.ts';
import { type ByteRange, ObjectIntegrityError, StorageNotFoundError } from '../../storage/driver.ts';
import { wrappedKeyId } from '../../storage/keyring.ts';
import { thumbnailKey } from '../../storage/keys.ts';
import type { SealedStore } from '../../storage/sealed.ts';
import type { Principal } from '../identity/principal.ts';
import type { LibraryFiles } from '../files/library-files.ts';
import type { HeldItem, Tree } from '../files/tree.ts';
import type { Photo, ThumbnailSize } from '../../contract/files.ts';
import { decodeCursor, encodeCursor } from '../../lib/cursor.ts';
import { type HasThumbnail, withThumbnails } from '../files/item-views.ts';
import { hasThumbnailWith, type MakeSource, sourceKind, THUMBNAIL_TYPES, VIDEO_TYPES } from './formats.ts';
import type { ThumbnailPool } from './pool.ts';
import type { VideoFrames } from './video.ts';
import { isMatroska, matroskaHeader } from './matroska-header.ts';
import { type MovieHeader, movieHeader } from './movie-header.ts';
import { noneMatchNames } from '../../lib/etags.ts';
import { isDiskFullError } from '../files/disk-space.ts';

// Larger files are not read into memory for a thumbnail (a 100 MP JPEG is far smaller).
const MAX_SOURCE_BYTES = 256 * 1024 * 1024;
// Files one sweep job makes before it queues the next and lets other jobs (and requests) in between.
const SWEEP_BATCH = 16;
// The pause between two sweep jobs: existing files are caught up with at a pace the box stays usable at.
const SWEEP_PAUSE_MS = 250;
// Thumbnails of library content that changed or left, removed per round of the sweep.
const PRUNE_BATCH = 500;
// unfinished_attempts' purpose for making a stored object's thumbnails.
const MAKING = 'thumbnail';
// A photo taken further ahead than this is a camera's wrong clock (2100, 9999): it sorts by its modification time.
const TAKEN_AHEAD_MS = 86_400_000;
/**
 * A first try at a thumbnail that failed (a time-out on a loaded box, a worker that died, a decoder error) is made once
 * more this long after, by a sweep queued for then (a `thumbnails.retry` job), or at a request for it; a second failure is final, so a file that fails
 * every time costs two tries, never a loop. Until then a request for it is a 404 that makes nothing.
 */
const RETRY_AFTER_MS = 3_600_000;

// The Photos view's images: every type a thumbnail is made of except documents (PDF).
const PHOTO_IMAGE_TYPES = THUMBNAIL_TYPES.filter((t) => t.startsWith('image/'));

/** Whether a file belongs in Photos (and in albums): an image a thumbnail is made of, or a video. */
export const isPhotoType = (mimeType: string | null) =>
  mimeType !== null && (PHOTO_IMAGE_TYPES.includes(mimeType) || mimeType.startsWith('video/'));

/**
 * A Photos row as the API answers it, `pictured` telling which have a thumbnail (ThumbnailService.previewable);
 * another account's says whose it is (and its album, when reached only through one).
 */
export function photoOf(row: PhotoRow | SharedPhotoRow, pictured: ReadonlySet<string>): Photo {
  const { modifiedAt, starred, duration, ...r } = row;
  const base: Photo = {
    id: r.id,
    name: r.name,
    takenAt: new Date(r.takenAt).toISOString(),
    width: r.width,
    height: r.height,
    parentId: r.parentId,
    mimeType: r.mimeType,
    size: r.size,
    modified: new Date(modifiedAt).toISOString(),
    starred: starred === 1,
    hasThumbnail: pictured.has(r.id),
  };
  if (duration != null) base.duration = duration;
  if (!('ownerId' in row)) return base;
  return { ...base, owner: { id: row.ownerId, name: row.ownerName }, ...(row.albumId ? { albumId: row.albumId } : {}) };
}

/**
 * Keyset pages of one order (newest taken, then id, first), each of at most `limit` rows, merged into one,
 * each file once (the first source wins). `cut`: a source ran out of the rows it was given before the page
 * was full, so what comes after it is not known here, and the page ends early with more to come.
 */
function mergePhotoPages<T extends PhotoRow>(sources: T[][], limit: number): { rows: T[]; cut: boolean } {
  if (sources.length === 1) return { rows: sources[0]!.slice(0, limit), cut: false };
  const out: T[] = [];
  const seen = new Set<string>();
  const at = sources.map(() => 0);
  while (out.length < limit) {
    let best = -1;
    for (let s = 0; s < sources.length; s++) {
      const row = sources[s]![at[s]!];
      if (!row) {
        if (sources[s]!.length === limit) return { rows: out, cut: true };
        continue;
      }
      const top = best < 0 ? null : sources[best]![at[best]!]!;
      if (!top || row.takenAt > top.takenAt || (row.takenAt === top.takenAt && row.id > top.id)) best = s;
    }
    if (best < 0) break;
    const row = sources[best]![at[best]!++]!;
    if (seen.has(row.id)) continue;
    seen.add(row.id);
    out.push(row);
  }
  return { rows: out, cut: false };
}

/**
 * A stored object that is gone or fails its integrity check stays so until it is restored: its file has no thumbnail
 * (recorded once, so the sweep goes on to the next file); any other failure (storage unreachable) is thrown to be retried.
 */
function unreadable(err: unknown): { ok: false; reason: string; final: true } {
  if (err instanceof StorageNotFoundError || err instanceof ObjectIntegrityError)
    return { ok: false, reason: `the stored file cannot be read: ${err.message}`, final: true };
  throw err;
}

/**
 * What a thumbnail is made of: a stored file's object, or a library file's bytes read from its host folder.
 * `key` names the content (the object's key, or the library entry's content key): the thumbnail row and
 * objects are keyed by it, sealed under `wrappedKey` (the file's own data key, or its library's).
 */
interface Subject {
  row: Item;
  key: string;
  wrappedKey: string;
  /** False for a library file Coffer cannot read now: its thumbnail, when made before, is still served. */
  readable: boolean;
  read(range?: ByteRange): Promise<ReadableStream<Uint8Array>>;
  /** The file's bytes (or `range` of them) in memory: a source read in its worker's turn, a container's headers. */
  bytes(range?: ByteRange): Promise<Uint8Array>;
}

/** What was made of a content: its row, and its images themselves when a full disk kept them from being stored. */
type Made = ThumbnailRow & { unstored?: Record<ThumbnailSize, Uint8Array> };

/** The client holds the thumbnail already: a 304 names its ETag. */
export interface UnchangedThumbnail {
  etag: string;
  unchanged: true;
}

export interface ServedThumbnail {
  etag: string;
  size: number;
  body: ReadableStream<Uint8Array>;
}

export interface ThumbnailDeps {
  clock: Clock;
  log: Logger;
  queue: JobQueue;
  storage: SealedStore;
  items: ItemsRepo;
  thumbnails: ThumbnailsRepo;
  attempts: AttemptsRepo;
  tree: Tree;
  libraries: LibrariesRepo;
  libraryFiles: Pick<LibraryFiles, 'locate' | 'open'>;
  pool: ThumbnailPool;
  /** ffmpeg, when configured: videos get their first frame; without it they have no thumbnail. */
  video: VideoFrames | null;
}

/** Thumbnails of images, PDFs and (with ffmpeg) videos: made once per stored object, sealed beside it, served by size. */
export class ThumbnailService {
  // One making per object at a time: a request and the sweep asking for the same file share it.
  private readonly making = new Map<string, Promise<Made | null>>();
  /** Where the sweep has got to in library files (an items seq): each pass over them is one walk, not one per batch. */
  private libraryAfter = 0;
  /** Library content changed or left since the last prune: its old thumbnails are removed by the next sweep. */
  private pruneWanted = true;
  // The types a thumbnail is made of here: videos only with ffmpeg.
  private readonly types: readonly string[];
  /** Whether a file of this type can have a thumbnail (the `hasThumbnail` of listings). */
  readonly canHave: HasThumbnail;

  constructor(private readonly d: ThumbnailDeps) {
    this.types = d.video ? [...THUMBNAIL_TYPES, ...VIDEO_TYPES] : THUMBNAIL_TYPES;
    this.canHave = hasThumbnailWith(d.video !== null);
  }

  private kind(mimeType: string | null) {
    return this.canHave(mimeType) ? sourceKind(mimeType) : null;
  }

  /**
   * GET /api/files/photos: the account's live images and videos, newest taken first; the cursor is the last
   * item's (takenAt, id), so a page never repeats or skips an item when newer ones arrive meanwhile.
   */
  photos(
    caller: Principal,
    q: { limit: number; cursor?: string; whose?: 'mine' | 'shared' | 'all' },
  ): { items: Photo[]; nextCursor: string | null } {
    let after: { takenAt: number; id: string } | null = null;
    if (q.cursor) {
      const values = decodeCursor(q.cursor, ['number', 'string']);
      if (!values) throw validationFailed([{ field: 'cursor', message: Messages.invalidCursor }]);
      after = { takenAt: values[0] as number, id: values[1] as string };
    }
    const whose = q.whose ?? 'mine';
    const n = q.limit + 1;
    // Each source is a keyset page in the same order; merged, the first `limit` rows are the page.
    const sources: Array<Array<PhotoRow | SharedPhotoRow>> = [];
    const window: PhotoWindow = { after, floor: null };
    // Once one source fills a page, no row older than its last can be on it: the next sources read down to there only.
    const add = (rows: Array<PhotoRow | SharedPhotoRow>) => {
      sources.push(rows);
      if (window.floor === null && rows.length === n) window.floor = rows.at(-1)!.takenAt;
    };
    if (whose !== 'shared') add(this.d.thumbnails.photosPage(caller.accountId, PHOTO_IMAGE_TYPES, window, n));
    // While the admin has sharing with people off, nothing of another account's is listed.
    if (whose !== 'mine' && this.d.tree.peopleSharingEnabled()) {
      for (const owner of this.d.thumbnails.sharingOwners(caller.accountId))
        add(this.d.thumbnails.sharedPhotosPage(caller.accountId, owner, PHOTO_IMAGE_TYPES, window, n));
      add(this.d.thumbnails.albumPhotosPage(caller.accountId, window, n).filter((r) => isPhotoType(r.mimeType)));
    }
    const { rows, cut } = mergePhotoPages(sources, n);
    const more = rows.length > q.limit || (cut && rows.length > 0);
    const page = more ? rows.slice(0, q.limit) : rows;
    const last = page.at(-1);
    const pictured = this.previewable(page.map((r) => r.id));
    return {
      items: page.map((r) => photoOf(r, pictured)),
      nextCursor: more && last ? encodeCursor([last.takenAt, last.id]) : null,
    };
  }

  /** GET /api/files/:id/thumbnail: a live file of the caller's account or of a share it is a member of, else 404. */
  forCaller(caller: Principal, id: string, size: ThumbnailSize, etag: string | null): Promise<ServedThumbnail | UnchangedThumbnail> {
    return this.serveStored(this.d.tree.requireLive(this.d.tree.actor(caller, { ids: [id] }, 'view'), id), size, etag);
  }

  /** The Nextcloud apps' preview by fileid (an item's seq): as forCaller, found by its number. */
  forFileId(caller: Principal, fileId: number, size: ThumbnailSize, etag: string | null): Promise<ServedThumbnail | UnchangedThumbnail> {
    const row = this.d.items.liveBySeq(fileId);
    if (!row) throw notFound(Messages.noThumbnail);
    return this.forCaller(caller, row.id, size, etag);
  }

  /**
   * Which of these items have a thumbnail, or can have one made when asked (none tried yet, the bytes at
   * hand): nc:has-preview, and the `hasThumbnail` of listings and share pages.
   */
  previewable(ids: readonly string[]): Set<string> {
    return withThumbnails(this.d.thumbnails.statusOfItems(ids), this.canHave);
  }

  /** A thumbnail of `row` (already found and checked by the caller), made now when it was not yet. */
  serve(row: HeldItem, size: ThumbnailSize, ifNoneMatch: string | null): Promise<ServedThumbnail | UnchangedThumbnail> {
    if (row.type !== 'file' || !this.canHave(row.mimeType)) throw notFound(Messages.noThumbnail);
    return this.serveStored(this.stored(row), size, ifNoneMatch);
  }

  private async serveStored(row: Item, size: ThumbnailSize, ifNoneMatch: string | null): Promise<ServedThumbnail | UnchangedThumbnail> {
    const subject = row.type === 'file' && this.canHave(row.mimeType) ? this.subjectOf(row) : null;
    if (!subject) throw notFound(Messages.noThumbnail);
    const etag = `"t-${subject.key}-${size}"`;
    let made = await this.current(subject);
    if (made?.status !== 'ready') throw notFound(Messages.noThumbnail);
    if (ifNoneMatch && noneMatchNames(ifNoneMatch, etag)) return { etag, unchanged: true };
    if (made.unstored) return { etag, ...unstoredBody(made.unstored[size]) };
    try {
      return { etag, ...(await this.open(subject, made, size)) };
    } catch (err) {
      // Restored from a backup without thumbnails, or lost: made again.
      if (!(err instanceof StorageNotFoundError)) throw err;
      made = await this.makeOf(subject, true);
      if (made?.status !== 'ready') throw notFound(Messages.noThumbnail);
      if (made.unstored) return { etag, ...unstoredBody(made.unstored[size]) };
      return { etag, ...(await this.open(subject, made, size)) };
    }
  }

  private async open(subject: Subject, made: ThumbnailRow, size: ThumbnailSize) {
    const bytes = size === 'small' ? made.smallSize! : made.largeSize!;
    const body = await this.d.storage.get(thumbnailKey(subject.key, size), { size: bytes, wrappedKey: subject.wrappedKey });
    return { size: bytes, body };
  }

  /** What `row`'s thumbnails are made of, or null when it has no content Coffer keeps thumbnails of. */
  private subjectOf(row: Item): Subject | null {
    if (row.type !== 'file') return null;
    const { storageKey: key, wrappedKey } = row;
    if (key && wrappedKey) {
      const info = { size: row.size, wrappedKey };
      return {
        row,
        key,
        wrappedKey,
        readable: true,
        read: (range) => this.d.storage.get(key, info, range),
        bytes: (range) => this.d.storage.readBytes(key, info, range),
      };
    }
    const entry = this.d.libraries.mediaEntry(row.id);
    const location = entry ? this.d.libraryFiles.locate(row) : null;
    if (!entry || !location) return null;
    return {
      row,
      key: entry.contentKey,
      wrappedKey: this.libraryKey(location.library),
      readable: entry.readable,
      read: async (range) => this.d.libraryFiles.open(location, row.size, range),
      bytes: async (range) => new Uint8Array(await new Response(this.d.libraryFiles.open(location, row.size, range)).arrayBuffer()),
    };
  }

  /** The data key a library's thumbnails are sealed under, made with its first thumbnail. */
  private libraryKey(library: LibraryRow): string {
    if (library.wrappedKey) return library.wrappedKey;
    const wrapped = this.d.storage.keyring.wrap(randomBytes(32));
    if (this.d.libraries.setWrappedKey(library.id, wrapped, wrappedKeyId(wrapped))) return wrapped;
    // Another process gave it one meanwhile.
    const current = this.d.libraries.get(library.id)?.wrappedKey;
    if (!current) throw notFound(Messages.noThumbnail);
    return current;
  }

  /** Whether `row` has its thumbnails (made now when they were not yet): a page shows them or does without. */
  async ready(row: HeldItem): Promise<boolean> {
    if (row.type !== 'file' || !this.canHave(row.mimeType)) return false;
    const stored = this.d.items.getLive(row.accountId, row.id);
    const subject = stored && this.subjectOf(stored);
    return subject !== null && (await this.current(subject))?.status === 'ready';
  }

  /** The stored row of a held file (its key material with it): one primary-key read; 404 once it is gone. */
  private stored(row: HeldItem): Item {
    const stored = this.d.items.getLive(row.accountId, row.id);
    if (!stored) throw notFound(Messages.noThumbnail);
    return stored;
  }

  /** What was made of the subject's content, made now (ahead of background work) when nothing was yet. */
  private async current(subject: Subject): Promise<Made | null> {
    const made = this.d.thumbnails.get(subject.key);
    if (made && !(made.status === 'failed' && made.createdAt <= this.retryBefore())) return made;
    return this.makeOf(subject, true);
  }

  /** A failed try made at this time or earlier is due to be made again. */
  private retryBefore(): number {
    return this.d.clock.now() - RETRY_AFTER_MS;
  }

  /**
   * Makes the thumbnails of `row`'s content and records what came of it; null when the row cannot have
   * any. `urgent`: someone waits for it, so it goes ahead of background work.
   */
  make(row: Item, urgent: boolean): Promise<ThumbnailRow | null> {
    const subject = this.subjectOf(row);
    return subject ? this.makeOf(subject, urgent) : Promise.resolve(null);
  }

  private makeOf(subject: Subject, urgent: boolean): Promise<Made | null> {
    const kind = this.kind(subject.row.mimeType);
    if (!kind || !subject.readable) return Promise.resolve(null);
    const key = subject.key;
    let pending = this.making.get(key);
    if (!pending) {
      pending = this.makeNow(subject, kind, urgent).finally(() => this.making.delete(key));
      this.making.set(key, pending);
    }
    return pending;
  }

  /**
   * Counts a try at `key` before the decoder gets it (false: given up). A disk too full to count it on lets the try go
   * uncounted: a request is still shown its thumbnail while the disk is full, as the images themselves are.
   */
  private beginTry(key: string): boolean {
    try {
      return this.d.attempts.begin(MAKING, key, this.d.clock.now());
    } catch (err) {
      if (isDiskFullError(err)) return true;
      throw err;
    }
  }

  /** The try at `key` ended; on a full disk its count stays, and is cleared by the next try that ends with room. */
  private endTry(key: string): void {
    try {
      this.d.attempts.finish(MAKING, key);
    } catch (err) {
      if (!isDiskFullError(err)) throw err;
    }
  }

  private async makeNow(subject: Subject, kind: NonNullable<ReturnType<typeof sourceKind>>, urgent: boolean): Promise<Made | null> {
    const { row, key, wrappedKey } = subject;
    const none = (reason: string, final = false): ThumbnailRow => {
      // The first failure is tried again later (RETRY_AFTER_MS); one after a failed try, or of a remade thumbnail, is final,
      // as is an object that is gone or damaged (it stays so until restored, and `coffer thumbnails rebuild` then).
      const earlier = this.d.thumbnails.get(key)?.status;
      const status = final || earlier === 'failed' || earlier === 'none' ? 'none' : 'failed';
      this.d.log.info('no thumbnail', { fileId: row.id, reason, final: status === 'none' });
      return {
        storageKey: key,
        status,
        smallSize: null,
        largeSize: null,
        width: null,
        height: null,
        takenAt: null,
        camera: null,
        lens: null,
        latitude: null,
        longitude: null,
        duration: null,
        createdAt: this.d.clock.now(),
      };
    };
    let made: Made;
    if (kind !== 'video' && row.size > MAX_SOURCE_BYTES) made = none(`the file is larger than ${MAX_SOURCE_BYTES} bytes`, true);
    // The try is committed before the decoder gets the file: one that kills the process (a native crash, an
    // out-of-memory abort) counts too, and after a few the file gets none rather than being decoded at every start.
    else if (!this.beginTry(key)) made = none('making it stopped the server each time it was tried', true);
    else {
      const result = await this.d.pool
        .make(kind, this.source(kind, subject), urgent)
        .catch(unreadable)
        .finally(() => this.endTry(key));
      if (!result.ok) made = none(result.reason, 'final' in result);
      else {
        const put = (size: ThumbnailSize, data: Uint8Array) =>
          this.d.storage.putUnder(
            thumbnailKey(key, size),
            wrappedKey,
            (async function* () {
              yield data;
            })(),
          );
        let sizes: number[] | null = null;
        try {
          sizes = await Promise.all([put('small', result.small), put('large', result.large)]);
        } catch (err) {
          // A full disk: a request is shown the images all the same, made again at each one until there is room to keep
          // them; the background sweep fails as before and is retried later, rather than making every thumbnail in vain.
          if (!urgent || !isDiskFullError(err)) throw err;
          await this.remove(key).catch(() => {});
        }
        const movie = kind === 'video' ? await this.movieHeader(subject) : null;
        made = {
          storageKey: key,
          status: 'ready',
          smallSize: sizes?.[0] ?? result.small.byteLength,
          largeSize: sizes?.[1] ?? result.large.byteLength,
          ...(sizes ? {} : { unstored: { small: result.small, large: result.large } }),
          width: result.width,
          height: result.height,
          takenAt:
            (result.takenAt !== null && result.takenAt <= this.d.clock.now() + TAKEN_AHEAD_MS ? result.takenAt : null) ??
            movie?.recordedAt ??
            null,
          camera: result.camera,
          lens: result.lens,
          latitude: result.latitude,
          longitude: result.longitude,
          duration: movie?.duration ?? null,
          createdAt: this.d.clock.now(),
        };
      }
    }
    // The file may have been replaced or purged meanwhile: its objects go with it, this row must not stay.
    if (!this.d.items.isKeyReferenced(key)) {
      await this.remove(key);
      return null;
    }
    if (made.unstored) return made;
    try {
      this.d.thumbnails.save(made);
    } catch (err) {
      // A request is served from what was just made and stored; the row is written at a later request, once there is room.
      if (!urgent || !isDiskFullError(err)) throw err;
    }
    if (made.status === 'failed') this.retryAt(made.createdAt + RETRY_AFTER_MS);
    return made;
  }

  /**
   * A video's recording date and duration from its container (MP4, QuickTime, WebM, Matroska), null where it has none: the
   * Photos order then uses the file's time, and its tile shows no length.
   */
  private async movieHeader(subject: Subject): Promise<MovieHeader> {
    const row = subject.row;
    const size = row.size;
    const read = async (start: number, length: number) => {
      const end = Math.min(size, start + length);
      if (start >= end) return new Uint8Array(0);
      return subject.bytes({ start, end });
    };
    try {
      const parse = isMatroska(await read(0, 4)) ? matroskaHeader : movieHeader;
      return await parse(size, read, this.d.clock.now());
    } catch (err) {
      this.d.log.info('no movie header', { fileId: row.id, reason: err instanceof Error ? err.message : String(err) });
      return { recordedAt: null, duration: null };
    }
  }

  /**
   * What the pool makes a thumbnail of, read in its slot: the file's bytes, or for a video ffmpeg's first frame
   * of it (read in ranges, never whole).
   */
  private source(kind: string, subject: Subject): MakeSource {
    const video = this.d.video;
    if (kind === 'video' && video) {
      return async () => {
        try {
          const frame = await video.firstFrame(subject.row.size, (range) => subject.read(range));
          return frame.ok ? frame.png : frame;
        } catch (err) {
          // ffmpeg failing on this video is its answer (no thumbnail); a file that cannot be read throws instead.
          return { ok: false, reason: String(err) };
        }
      };
    }
    return () => subject.bytes();
  }

  /**
   * Job body of `thumbnails.retry`: a sweep for the failed tries due now, and the next retry queued for the earliest
   * not yet due (one that failed while an earlier retry waited queued none of its own).
   */
  retryDue(): void {
    this.requestSweep();
    this.scheduleRetry();
  }

  /** Queues the retry for when the earliest failed try not yet due is due. */
  private scheduleRetry(): void {
    const failedAt = this.d.thumbnails.earliestFailedAfter(this.retryBefore());
    if (failedAt !== null) this.retryAt(failedAt + RETRY_AFTER_MS);
  }

  /** A sweep is wanted at `due`: one `thumbnails.retry` job is queued for then, unless one waits for then or earlier. */
  private retryAt(due: number): void {
    const queued = this.d.queue.nextRunAtOf(Jobs.thumbnailsRetry);
    if (queued === null || queued > due) this.d.queue.insert(Jobs.thumbnailsRetry, null, { runAt: due });
  }

  /**
   * At start: queues a sweep when files stored before thumbnails existed (an upgrade, a restore) have none, and the
   * retry of failed tries not yet due; forgets the unfinished tries of content deleted since.
   */
  catchUp(): void {
    this.d.thumbnails.forgetTriesOfGoneContent(MAKING);
    this.scheduleRetry();
    if (
      this.d.thumbnails.sourcesPage(this.types, { afterSeq: 0, limit: 1, retryBefore: this.retryBefore() }).length > 0 ||
      this.d.thumbnails.librarySourcesPage(this.types, { afterSeq: 0, limit: 1, retryBefore: this.retryBefore() }).length > 0 ||
      this.d.thumbnails.libraryOrphans(1).length > 0
    )
      this.requestSweep();
  }

  /** A library scan changed what is indexed: thumbnails of new content are made, those of old content removed. */
  libraryChanged(): void {
    this.pruneWanted = true;
    this.requestSweep();
  }

  /** Queues a sweep unless one waits already (files just written get theirs from it). */
  requestSweep(): void {
    if (!this.d.queue.hasWaiting(Jobs.thumbnailsSweep)) this.d.queue.insert(Jobs.thumbnailsSweep, null);
  }

  /**
   * Job body of `thumbnails.sweep`: makes what is missing, a batch at a time, each batch its own job a
   * pause after the last, so a backlog (an upgrade, a large upload) never holds the worker or the cores.
   */
  async sweep(signal?: AbortSignal): Promise<number> {
    if (this.pruneWanted) await this.pruneLibrary();
    const retryBefore = this.retryBefore();
    const stored = this.d.thumbnails.sourcesPage(this.types, { afterSeq: 0, limit: SWEEP_BATCH, retryBefore });
    // Library files after the stored ones, from where the last batch ended: their host reads come after uploads'.
    const room = SWEEP_BATCH - stored.length;
    const library =
      room > 0 ? this.d.thumbnails.librarySourcesPage(this.types, { afterSeq: this.libraryAfter, limit: room, retryBefore }) : [];
    if (room > 0) this.libraryAfter = library.length === room ? library.at(-1)!.seq : 0;
    const sources = [...stored, ...library];
    let count = 0;
    await this.inLanes(sources, async (s) => {
      signal?.throwIfAborted();
      const row = this.d.items.getLive(s.accountId, s.id);
      if (!row) return;
      try {
        if (await this.make(row, false)) count++;
      } catch (err) {
        // A library file gone or unreadable since its scan: the next scan says what became of it.
        if (row.storageKey) throw err;
        this.d.log.info('no thumbnail of a library file now', { fileId: row.id, reason: err instanceof Error ? err.message : String(err) });
      }
    });
    if (sources.length === SWEEP_BATCH && !this.d.queue.hasWaiting(Jobs.thumbnailsSweep))
      this.d.queue.insert(Jobs.thumbnailsSweep, null, { runAt: this.d.clock.now() + SWEEP_PAUSE_MS });
    return count;
  }

  /** Removes the thumbnails of library content no file has any more (changed on the host, or gone). */
  private async pruneLibrary(): Promise<void> {
    this.pruneWanted = false;
    for (;;) {
      const keys = this.d.thumbnails.libraryOrphans(PRUNE_BATCH);
      for (const key of keys) await this.remove(key);
      if (keys.length < PRUNE_BATCH) return;
    }
  }

  /** `coffer thumbnails rebuild`: makes every thumbnail again (of one account's files when given), reporting progress. */
  async rebuild(opts: { accountId?: string; onProgress?: (done: number, total: number) => void }): Promise<{ made: number; none: number }> {
    const scope = { accountId: opts.accountId, all: true };
    // The rebuild tries again the files given up on.
    this.d.attempts.clear(MAKING);
    const total = this.d.thumbnails.countSources(this.types, scope) + this.d.thumbnails.countLibrarySources(this.types, scope);
    let done = 0;
    const result = { made: 0, none: 0 };
    // Coffer's own files, then library files (those Coffer can read now).
    for (const pageOf of [
      (afterSeq: number) => this.d.thumbnails.sourcesPage(this.types, { ...scope, afterSeq, limit: SWEEP_BATCH }),
      (afterSeq: number) => this.d.thumbnails.librarySourcesPage(this.types, { ...scope, afterSeq, limit: SWEEP_BATCH }),
    ]) {
      for (let afterSeq = 0; ; ) {
        const page = pageOf(afterSeq);
        if (page.length === 0) break;
        afterSeq = page.at(-1)!.seq;
        await this.inLanes(page, async (s) => {
          const row = this.d.items.getLive(s.accountId, s.id);
          const made = row ? await this.remake(row) : null;
          if (made?.status === 'ready') result.made++;
          else result.none++;
          opts.onProgress?.(++done, total);
        });
      }
    }
    return result;
  }

  /** A file's thumbnail made again; a library file gone or unreadable since its scan has none now (the next scan says what became of it). */
  private async remake(row: Item): Promise<{ status: string } | null> {
    try {
      return await this.make(row, true);
    } catch (err) {
      if (row.storageKey) throw err;
      this.d.log.info('no thumbnail of a library file now', { fileId: row.id, reason: err instanceof Error ? err.message : String(err) });
      return null;
    }
  }

  /** `work` on each of `items`, as many at once as the pool has workers: only those files' bytes are in memory. */
  private async inLanes<T>(items: readonly T[], work: (item: T) => Promise<void>): Promise<void> {
    let next = 0;
    const lane = async () => {
      while (next < items.length) await work(items[next++]!);
    };
    await Promise.all(Array.from({ length: Math.min(this.d.pool.size, items.length) }, lane));
  }

  /** Ends the worker threads (the server's stop, or a command's end). */
  close(): void {
    this.d.pool.stop();
    this.d.video?.stop();
  }

  /** The thumbnails of a stored object that is being deleted: its objects, its row and its unfinished tries. */
  async remove(storageKey: string): Promise<void> {
    await Promise.all([this.d.storage.delete(thumbnailKey(storageKey, 'small')), this.d.storage.delete(thumbnailKey(storageKey, 'large'))]);
    this.d.thumbnails.delete(storageKey);
    this.endTry(storageKey);
  }
}

/** A thumbnail made but not stored (a full disk) as a served body. */
function unstoredBody(bytes: Uint8Array): { size: number; body: ReadableStream<Uint8Array> } {
  return { size: bytes.byteLength, body: new Response(bytes).body! };
}
