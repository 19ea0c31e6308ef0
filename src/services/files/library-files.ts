import fs from 'node:fs';
import { Readable } from 'node:stream';
import type { ItemsRepo } from '../../db/repos/items.ts';
import type { LibrariesRepo, LibraryRow } from '../../db/repos/libraries.ts';
import { AppError, notFound, Messages } from '../../errors.ts';
import type { ByteRange } from '../../storage/driver.ts';
import { HostPathError, openInside } from '../../storage/host-paths.ts';

const UNAVAILABLE =
  'This file is in a library Coffer cannot read right now (its disk may be away, or the host does not let Coffer read it).';
const SHORTER = 'The file became shorter on the server since it was scanned.';
// Reads of a host file: large enough that a 1 GiB download is a few thousand reads.
const READ_CHUNK = 1024 * 1024;
// Folders between a library item and its library's folder, at most (a cycle in a corrupt tree stops here).
const MAX_DEPTH = 10_000;

/** Where a library item is on the host: the library and the names from its root. */
export interface HostLocation {
  library: LibraryRow;
  names: string[];
}

/**
 * The content of library items, read from their host folder as it is (no decryption): every open goes
 * through the host-path module, so nothing outside the library is ever read.
 */
export class LibraryFiles {
  constructor(
    private readonly libraries: LibrariesRepo,
    private readonly items: ItemsRepo,
  ) {}

  /** The library an item is in, or null for an item of the encrypted store. */
  libraryOf(itemId: string): LibraryRow | null {
    return this.libraries.ofItem(itemId);
  }

  /** Where the item is on the host, or null when it is not a library item. */
  locate(item: { id: string; name: string; parentId: string | null }): HostLocation | null {
    const library = this.libraries.ofItem(item.id);
    if (!library) return null;
    if (item.id === library.folderId) return { library, names: [] };
    const names = [item.name];
    let parent = item.parentId;
    for (let depth = 0; parent !== library.folderId; depth++) {
      const row = parent ? this.items.nameAndParent(parent) : null;
      if (!row || depth > MAX_DEPTH) throw notFound(Messages.itemNotFound);
      names.unshift(row.name);
      parent = row.parentId;
    }
    return { library, names };
  }

  /**
   * The file's bytes, or `range` of them, straight from the host; at most `size` bytes (the indexed size). With
   * `whole`, a file that gives fewer (made shorter on the host since its scan) ends the stream with an error.
   */
  open(location: HostLocation, size: number, range?: ByteRange, opts: { whole?: boolean } = {}): ReadableStream<Uint8Array> {
    const fd = this.openFd(location);
    const start = range?.start ?? 0;
    const end = Math.min(range?.end ?? size, size);
    if (end <= start) {
      fs.closeSync(fd);
      return new ReadableStream({ start: (c) => c.close() });
    }
    const stream = fs.createReadStream('', { fd, start, end: end - 1, highWaterMark: READ_CHUNK, autoClose: true });
    const bytes = Readable.toWeb(stream) as unknown as ReadableStream<Uint8Array>;
    if (!opts.whole) return bytes;
    let sent = 0;
    return bytes.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          sent += chunk.byteLength;
          controller.enqueue(chunk);
        },
        // The client sees the transfer cut off, as for a stored file that fails mid-read, never a short file as whole.
        flush(controller) {
          if (sent < end - start) controller.error(new Error(SHORTER));
        },
      }),
    );
  }

  /** The first `length` bytes (fewer when the file is shorter). */
  head(location: HostLocation, length: number): Uint8Array {
    const fd = this.openFd(location);
    try {
      const buf = Buffer.alloc(length);
      return buf.subarray(0, fs.readSync(fd, buf, 0, length, 0));
    } finally {
      fs.closeSync(fd);
    }
  }

  private openFd(location: HostLocation): number {
    if (!location.library.available) throw new AppError(409, UNAVAILABLE);
    try {
      return openInside(location.library.path, location.names);
    } catch (err) {
      if (err instanceof HostPathError) throw new AppError(409, UNAVAILABLE);
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') throw notFound(Messages.itemNotFound);
      if (code === 'EACCES' || code === 'EPERM' || code === 'ELOOP') throw new AppError(409, UNAVAILABLE);
      throw err;
    }
  }
}
