import fs from 'node:fs';
import type { ItemsRepo } from '../../db/repos/items.ts';
import type { LibrariesRepo, LibraryRow } from '../../db/repos/libraries.ts';
import { AppError, badRequest, conflict, diskFull, forbidden } from '../../errors.ts';
import { folderInside, HostPathError, hostNameProblem } from '../../storage/host-paths.ts';

const MAX_DEPTH = 10_000;

/** A rename or move on the host, planned before the index changes (the old path is read from it). */
export interface HostMove {
  library: LibraryRow;
  from: { folder: readonly string[]; name: string };
  to: { folder: readonly string[]; name: string };
}

/** What a failed host write answers: the host's reason in words a person can act on. */
function hostError(err: unknown, library: LibraryRow, name: string): AppError {
  if (err instanceof AppError) return err;
  if (err instanceof HostPathError) return badRequest(err.message);
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'EEXIST' || code === 'ENOTEMPTY') return conflict(`"${name}" already exists in the library's folder on the server.`);
  if (code === 'ENOSPC' || code === 'EDQUOT') return diskFull();
  if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS') {
    return forbidden(`The server cannot write in the library folder ${library.path} (${code}): its permissions allow no change by Coffer.`);
  }
  if (code === 'ENAMETOOLONG') return badRequest(`"${name}" is too long for the library's file system.`);
  if (code === 'ENOENT') return conflict('The library folder changed on the server meanwhile: try again once it has been scanned.');
  return badRequest(`The server could not write in the library folder (${code ?? 'error'}).`);
}

/**
 * The changes Coffer makes in a writable library's host folder, through the safe-path module: a folder
 * made, an entry renamed or moved within the library (never over an existing entry). Each runs inside
 * the index write's transaction, so a refusal by the host leaves the index as it was.
 */
export class LibraryHostWrites {
  constructor(
    private readonly d: {
      items: ItemsRepo;
      libraries: LibrariesRepo;
    },
  ) {}

  /** Makes the host folder of a new folder item and indexes it under its inode. */
  makeFolder(library: LibraryRow, parentId: string, item: { id: string; name: string }): void {
    try {
      const problem = hostNameProblem(item.name);
      if (problem) throw badRequest(problem);
      const parent = folderInside(library.path, this.namesOf(library, parentId));
      fs.mkdirSync(`${parent}/${item.name}`);
      const st = fs.statSync(`${parent}/${item.name}`);
      this.d.libraries.putEntry({
        itemId: item.id,
        libraryId: library.id,
        fileId: `${st.dev}:${st.ino}`,
        hostModifiedAt: Math.floor(st.mtimeMs),
        unavailable: false,
      });
    } catch (err) {
      throw hostError(err, library, item.name);
    }
  }

  /** Where `itemId` is on the host now and where it goes (`parentId` undefined: the same folder). */
  planMove(library: LibraryRow, itemId: string, parentId: string | undefined, name: string): HostMove {
    const problem = hostNameProblem(name);
    if (problem) throw badRequest(problem);
    const names = this.namesOf(library, itemId);
    const from = { folder: names.slice(0, -1), name: names.at(-1)! };
    const folder = parentId === undefined ? from.folder : this.namesOf(library, parentId);
    return { library, from, to: { folder, name } };
  }

  move(plan: HostMove): void {
    const { library, from, to } = plan;
    try {
      const source = `${folderInside(library.path, from.folder)}/${from.name}`;
      const target = `${folderInside(library.path, to.folder)}/${to.name}`;
      if (source === target) return;
      // rename(2) replaces an existing file silently: an entry already there (one Coffer does not list) is refused.
      if (exists(target) && !sameEntry(source, target))
        throw conflict(`"${to.name}" already exists in the library's folder on the server.`);
      fs.renameSync(source, target);
    } catch (err) {
      throw hostError(err, library, to.name);
    }
  }

  /** The host names of an item from the library root (the root itself: none). */
  private namesOf(library: LibraryRow, itemId: string): string[] {
    const names: string[] = [];
    let id: string | null = itemId;
    for (let depth = 0; id && id !== library.folderId; depth++) {
      const row = this.d.items.nameAndParent(id);
      if (!row || depth > MAX_DEPTH)
        throw conflict('The library folder changed on the server meanwhile: try again once it has been scanned.');
      names.unshift(row.name);
      id = row.parentId;
    }
    if (id !== library.folderId) throw conflict('The item is not in its library any more.');
    return names;
  }
}

function exists(p: string): boolean {
  try {
    fs.lstatSync(p);
    return true;
  } catch {
    return false;
  }
}

/** Whether two paths name one entry (a change of letter case only, on a file system that ignores case). */
function sameEntry(a: string, b: string): boolean {
  const x = fs.lstatSync(a);
  const y = fs.lstatSync(b);
  return x.dev === y.dev && x.ino === y.ino;
}
