// ZIPs are written with archiver, not fflate (docs/development.md › ZIP): ZIP64 past 65,535 entries or 4 GiB, 0.81 against 2.48 CPU s/GiB.
import { Readable } from 'node:stream';
import type { Archiver, ZipEntryData } from 'archiver';
import type { Clock } from '../../clock.ts';
import type { Item, ItemsRepo } from '../../db/repos/items.ts';
import { AppError, Messages, notFound } from '../../errors.ts';
import type { Logger } from '../../log.ts';
import type { ByteRange } from '../../storage/driver.ts';
import type { AccessTracker } from './access.ts';
import type { HostLocation, LibraryFiles } from './library-files.ts';
import type { VersionsRepo } from '../../db/repos/versions.ts';
import type { HeldItem, Tree } from './tree.ts';
import type { SealedStore } from '../../storage/sealed.ts';
import { numberedName, stripBidiControls } from './names.ts';
import type { Principal } from '../identity/principal.ts';
import { AuditActions, type AuditPrincipal, type AuditService } from '../admin/audit.ts';
import { detectMimeType } from '../../lib/file-type.ts';
import { keepCentralDirectoryAsBytes } from './zip-directory.ts';
import { KeyedCap } from '../../lib/keyed-cap.ts';

/** Raster image types a browser may display inline; SVG and anything scriptable never qualify. */
const INLINE_IMAGE_TYPES = new Set([
  'image/png',
  'image/jpeg',
  'image/gif',
  'image/webp',
  'image/bmp',
  'image/avif',
  'image/apng',
  'image/x-icon',
  'image/vnd.microsoft.icon',
]);
/** Whether a browser may display a stored image of this type as it is (the share pages' full zoom). */
export const isInlineImageType = (mimeType: string | null) => mimeType !== null && INLINE_IMAGE_TYPES.has(mimeType);

// One 64 KiB segment is decrypted whatever is asked of it; office documents (ZIP containers) need most of it.
const SNIFF_BYTES = 64 * 1024;
const CHILD_PAGE = 500;
// A ZIP entry's name length is a 16-bit field: a longer path (a tree some hundred levels deep) would be written with its length cut.
const ZIP_NAME_MAX_BYTES = 0xffff;

// Long enough for a small ZIP to finish; a client that waits and asks again gets the next free slot.
const ZIP_RETRY_AFTER_SECONDS = 30;
/** The one key of the instance's count of ZIPs. */
const INSTANCE = '';

export interface ZipDownload {
  filename: string;
  stream: ReadableStream<Uint8Array>;
}

interface ZipEntry {
  path: string;
  row: Item;
}

function timestampName(ms: number): string {
  const d = new Date(ms).toISOString();
  return `download-${d.slice(0, 10).replaceAll('-', '')}-${d.slice(11, 19).replaceAll(':', '')}.zip`;
}

/** A file a route hands back to be read: a held item, or one of its versions. */
export type DownloadFile = HeldItem & { versionId?: string };
/** A live item as a download door holds it: with its object key, which names its content in its ETag (fileEtag). */
export type CurrentFile = HeldItem & Pick<Item, 'storageKey'>;

export interface DownloadDeps {
  clock: Clock;
  log: Logger;
  storage: Pick<SealedStore, 'get' | 'readBytes'>;
  items: ItemsRepo;
  versions: Pick<VersionsRepo, 'get'>;
  tree: Tree;
  access: AccessTracker;
  audit: AuditService;
  libraryFiles: LibraryFiles;
  /** ZIPs made at once: on the instance, and of one account's files. */
  zipLimits: { instance: number; perAccount: number };
}

/**
 * ZIPs being made, counted for the instance and per account: each keeps a record of every entry written
 * until its end (the central directory), so many at once took the memory of a small machine.
 */
class ZipSlots {
  private readonly instance: KeyedCap;
  private readonly ofAccount: KeyedCap;

  constructor(limits: { instance: number; perAccount: number }) {
    this.instance = new KeyedCap(limits.instance);
    this.ofAccount = new KeyedCap(limits.perAccount);
  }

  /** A slot for a ZIP of the account's files, or a 429 (the account's) or 503 (the instance's); the release is idempotent. */
  take(accountId: string): () => void {
    const retry = { 'Retry-After': String(ZIP_RETRY_AFTER_SECONDS) };
    if (!this.ofAccount.acquire(accountId))
      throw new AppError(
        429,
        `This account's ZIP downloads being made already reach the limit of ${this.ofAccount.max} at once; try again when one has finished (or cancel one)`,
        undefined,
        retry,
      );
    if (!this.instance.acquire(INSTANCE)) {
      this.ofAccount.release(accountId);
      throw new AppError(
        503,
        `The server is making as many ZIP downloads as it can at once (${this.instance.max}); try again in a minute`,
        undefined,
        retry,
      );
    }
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      this.instance.release(INSTANCE);
      this.ofAccount.release(accountId);
    };
  }
}

/** Reading content: single files (with ranges) and folders or selections as streamed ZIPs. */
export class DownloadService {
  private readonly zipSlots: ZipSlots;

  constructor(private readonly d: DownloadDeps) {
    this.zipSlots = new ZipSlots(d.zipLimits);
  }

  /** Marks the file read (accessedAt, written behind): a download, or a GET answered 304 from the client's own copy. */
  markRead(row: DownloadFile): void {
    this.d.access.touch([row]);
  }

  /** The live item to download, else 404. */
  resolve(principal: Principal, id: string): CurrentFile {
    return this.d.tree.requireLive(this.d.tree.actor(principal, { ids: [id] }, 'view'), id);
  }

  /**
   * The file's plaintext, or the `range` of it; decrypts only the segments the range touches. Marks it
   * read, and audits a download by `reader` once per transfer (not for every later range of a stream).
   */
  async openFile(row: DownloadFile, range?: ByteRange, reader?: AuditPrincipal): Promise<ReadableStream<Uint8Array>> {
    const stream = this.libraryContent(row, range) ?? (await this.sealedContent(row, range));
    this.markRead(row);
    if (reader && (!range || range.start === 0)) {
      this.d.audit.record({
        action: AuditActions.fileDownload,
        principal: reader,
        targetType: 'file',
        targetId: row.id,
        details: { name: row.name },
      });
    }
    return stream;
  }

  /** A library file's bytes from its host folder as they are, or null for a file of the encrypted store (or a version). */
  private libraryContent(row: DownloadFile, range?: ByteRange): ReadableStream<Uint8Array> | null {
    if (row.versionId) return null;
    const location = this.d.libraryFiles.locate(row);
    return location ? this.d.libraryFiles.open(location, row.size, range, { whole: true }) : null;
  }

  private sealedContent(row: DownloadFile, range?: ByteRange): Promise<ReadableStream<Uint8Array>> {
    const stored = this.stored(row);
    return this.d.storage.get(stored.storageKey, { size: stored.size, wrappedKey: stored.wrappedKey }, range, (err) =>
      // The response is under way: the client sees it cut off, the admin reads why here.
      this.d.log.warn('download failed part-way', {
        fileId: row.id,
        err: err instanceof Error ? err.message : String(err),
      }),
    );
  }

  /** The detected image type when the content is a raster image safe to show inline, else null. */
  async inlineImageType(row: DownloadFile): Promise<string | null> {
    if (row.type !== 'file' || !row.mimeType?.startsWith('image/')) return null;
    const mime = await this.detectType(row);
    return mime && INLINE_IMAGE_TYPES.has(mime) ? mime : null;
  }

  /** The type the file's first bytes show (decrypting only the first segment); null when unrecognised or empty. */
  async detectType(row: DownloadFile): Promise<string | null> {
    if (row.type !== 'file' || row.size === 0) return null;
    const location = row.versionId ? null : this.d.libraryFiles.locate(row);
    if (location) return detectMimeType(this.d.libraryFiles.head(location, SNIFF_BYTES)).catch(() => null);
    const stored = this.stored(row);
    const bytes = await this.d.storage.readBytes(
      stored.storageKey,
      { size: stored.size, wrappedKey: stored.wrappedKey },
      { start: 0, end: Math.min(stored.size, SNIFF_BYTES) },
    );
    return detectMimeType(bytes).catch(() => null);
  }

  /** Where a held file's content is stored: its version's, or the item's current one (a primary-key read). */
  private stored(row: DownloadFile): { storageKey: string; wrappedKey: string; size: number } {
    const stored = row.versionId ? this.d.versions.get(row.id, row.versionId) : this.d.items.get(row.accountId, row.id);
    if (!stored?.storageKey || !stored.wrappedKey) throw notFound(Messages.itemNotFound);
    return { storageKey: stored.storageKey, wrappedKey: stored.wrappedKey, size: stored.size };
  }

  /** A folder of the account as `<folder>.zip`, entries under `<folder>/`, empty folders included. */
  zipFolder(accountId: string, folder: HeldItem): ZipDownload {
    const stored = this.d.items.getLive(accountId, folder.id);
    if (!stored) throw notFound(Messages.itemNotFound);
    return { filename: `${folder.name}.zip`, stream: this.zip(accountId, [stored]) };
  }

  /** GET /:id/download of a folder: the ZIP, audited. */
  downloadFolder(principal: Principal, folder: HeldItem): ZipDownload {
    this.d.audit.record({
      action: AuditActions.fileDownload,
      principal,
      targetType: 'folder',
      targetId: folder.id,
      details: { name: folder.name },
    });
    return this.zipFolder(folder.accountId, folder);
  }

  /** POST /download/bulk: live items of the account (else 404), as one ZIP. */
  zipSelection(principal: Principal, ids: string[]): ZipDownload {
    const actor = this.d.tree.actor(principal, { ids }, 'view');
    const rows = this.d.tree.requireLiveMany(actor, ids);
    const filename = rows.length === 1 ? `${rows[0]!.name}.zip` : timestampName(this.d.clock.now());
    this.d.audit.record({ action: AuditActions.fileDownload, principal, targetType: 'selection', details: { ids: rows.map((r) => r.id) } });
    return { filename, stream: this.zip(actor.accountId, rows) };
  }

  private async *walk(accountId: string, row: Item, path: string): AsyncGenerator<ZipEntry> {
    if (row.type === 'file') {
      yield { path, row };
      return;
    }
    yield { path: `${path}/`, row };
    // The folders being listed, outermost first: a generator per level cost every entry a step per level above
    // it, and overflowed the stack some 4,000 levels down.
    const open = [{ id: row.id, path, children: this.d.items.liveChildren(accountId, row.id, '', CHILD_PAGE), next: 0 }];
    while (open.length > 0) {
      const folder = open.at(-1)!;
      if (folder.next === folder.children.length) {
        if (folder.children.length < CHILD_PAGE) {
          open.pop();
        } else {
          folder.children = this.d.items.liveChildren(accountId, folder.id, folder.children.at(-1)!.id, CHILD_PAGE);
          folder.next = 0;
        }
        continue;
      }
      const child = folder.children[folder.next++]!;
      const childPath = `${folder.path}/${stripBidiControls(child.name)}`;
      if (child.type === 'file') {
        yield { path: childPath, row: child };
        continue;
      }
      yield { path: `${childPath}/`, row: child };
      open.push({ id: child.id, path: childPath, children: this.d.items.liveChildren(accountId, child.id, '', CHILD_PAGE), next: 0 });
    }
  }

  /**
   * Streams a ZIP of the given roots: entries are appended one at a time as the client reads, so
   * neither the archive nor the list of entries is ever held whole. Stored, not deflated: most
   * large files are already compressed and the box has two cores.
   */
  private zip(accountId: string, roots: Item[]): ReadableStream<Uint8Array> {
    return this.zipStream(accountId, () => this.rootEntries(accountId, roots));
  }

  /**
   * Files of any accounts (the caller checked them), each at the ZIP's top level, read `next(afterId)` a page at
   * a time in id order until a page is empty: an album link's "Download all", counted as a ZIP of `accountId`'s files.
   */
  zipFiles(accountId: string, filename: string, next: (afterId: string) => Item[]): ZipDownload {
    const names = uniqueNames();
    async function* entries(): AsyncGenerator<ZipEntry> {
      for (let after = ''; ; ) {
        const page = next(after);
        if (page.length === 0) return;
        for (const row of page) if (row.type === 'file') yield { path: names(row.name), row };
        after = page.at(-1)!.id;
      }
    }
    return { filename, stream: this.zipStream(accountId, entries) };
  }

  private async *rootEntries(accountId: string, roots: Item[]): AsyncGenerator<ZipEntry> {
    const names = uniqueNames();
    for (const root of roots) yield* this.walk(accountId, root, names(root.name));
  }

  /** The ZIP as a stream, holding a slot from now until it ends: read to its end, failed, or cancelled (the client gone). */
  private zipStream(accountId: string, entries: () => AsyncIterable<ZipEntry>): ReadableStream<Uint8Array> {
    const release = this.zipSlots.take(accountId);
    let session: Promise<ZipSession> | null = null;
    const open = () => (session ??= this.zipSession(entries));
    return new ReadableStream<Uint8Array>(
      {
        pull: async (controller) => {
          try {
            if (await (await open()).pull(controller)) release();
          } catch (err) {
            release();
            throw err;
          }
        },
        cancel: async () => {
          release();
          if (session) await (await session).cancel();
        },
      },
      { highWaterMark: 0 },
    );
  }

  /**
   * A library file's bytes for a ZIP, or null when the host no longer has it as a readable regular file (gone,
   * unreadable, swapped for a pipe or a device since the last scan): left out, so one such file does not cut the archive.
   */
  private libraryMember(location: HostLocation, entry: ZipEntry): ReadableStream<Uint8Array> | null {
    try {
      return this.d.libraryFiles.open(location, entry.row.size);
    } catch (err) {
      if (!(err instanceof AppError)) throw err;
      this.d.log.warn('ZIP download left out a library file the host no longer serves', { item: entry.row.id, reason: err.message });
      return null;
    }
  }

  private async zipSession(entries: () => AsyncIterable<ZipEntry>): Promise<ZipSession> {
    // Loaded at the first ZIP download: archiver and its streams weigh on the idle server's memory.
    const { ZipArchive } = await import('archiver');
    const archive = new ZipArchive({ store: true, highWaterMark: 256 * 1024 });
    keepCentralDirectoryAsBytes(archive);
    let cancelled = false;
    // An aborted archive never reports the entry in flight: cancelling settles it and closes its source.
    const stop = new AbortController();
    let current: Readable | null = null;

    const append = (source: Buffer | Readable, data: ZipEntryData) =>
      new Promise<void>((resolve, reject) => {
        const aborted = () => resolve();
        const done = () => {
          archive.off('error', failed);
          // One listener per entry left on the signal held every entry's promise, and each new one scanned them all.
          stop.signal.removeEventListener('abort', aborted);
          resolve();
        };
        const failed = (err: Error) => {
          archive.off('entry', done);
          stop.signal.removeEventListener('abort', aborted);
          reject(err);
        };
        archive.once('entry', done);
        archive.once('error', failed);
        // archiver does not listen for its sources' errors: a file whose storage broke off mid-read took the process down.
        if (source instanceof Readable) source.on('error', failed);
        stop.signal.addEventListener('abort', aborted, { once: true });
        archive.append(source, data);
      });

    const produce = async () => {
      try {
        for await (const entry of entries()) {
          if (cancelled) return;
          if (Buffer.byteLength(entry.path) > ZIP_NAME_MAX_BYTES)
            throw new Error(`${entry.path.slice(0, 200)}…: a path of more than ${ZIP_NAME_MAX_BYTES} bytes does not fit in a ZIP`);
          this.d.access.touch([entry.row]);
          const date = new Date(entry.row.modifiedAt);
          if (entry.row.type === 'folder') {
            await append(Buffer.alloc(0), { name: entry.path, type: 'directory', date });
          } else {
            const location = entry.row.storageKey === null ? this.d.libraryFiles.locate(entry.row) : null;
            const body = location
              ? this.libraryMember(location, entry)
              : await this.d.storage.get(entry.row.storageKey!, { size: entry.row.size, wrappedKey: entry.row.wrappedKey! });
            if (body === null) continue;
            if (cancelled) {
              // Cancelled while the file was being opened: nothing else will close it.
              await body.cancel();
              return;
            }
            current = Readable.fromWeb(body as import('node:stream/web').ReadableStream<Uint8Array>);
            await append(current, { name: entry.path, date });
            current = null;
          }
        }
        if (!cancelled) await archive.finalize();
      } catch (err) {
        if (cancelled) return;
        this.d.log.error('ZIP download failed part-way', { err: err instanceof Error ? (err.stack ?? err.message) : String(err) });
        archive.destroy(err instanceof Error ? err : new Error(String(err)));
      }
    };

    const chunks = (archive as Archiver)[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
    let started = false;
    return {
      async pull(controller) {
        if (!started) {
          started = true;
          void produce();
        }
        const next = await chunks.next();
        if (next.done) {
          controller.close();
          return true;
        }
        controller.enqueue(new Uint8Array(next.value.buffer, next.value.byteOffset, next.value.byteLength));
        return false;
      },
      async cancel() {
        cancelled = true;
        stop.abort();
        current?.destroy();
        archive.abort();
        await chunks.return?.();
      },
    };
  }
}

/** Names for the ZIP's top level, each once whatever its case (`a (1).jpg` after `A.jpg`). */
function uniqueNames(): (name: string) => string {
  const used = new Set<string>();
  return (original) => {
    // Entry names never carry bidirectional controls, which would disguise a file's type in an unzip tool.
    const plain = stripBidiControls(original);
    let name = plain;
    for (let n = 1; used.has(name.toLowerCase()); n++) name = numberedName(plain, n);
    used.add(name.toLowerCase());
    return name;
  };
}

/** A ZIP being produced: the stream's pull (true once the ZIP has ended) and cancel, once archiver is loaded. */
interface ZipSession {
  pull(controller: ReadableStreamDefaultController<Uint8Array>): Promise<boolean>;
  cancel(): Promise<void>;
}
