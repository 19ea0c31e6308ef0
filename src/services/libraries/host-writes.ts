import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import type { ItemsRepo } from '../../db/repos/items.ts';
import type { LibrariesRepo, LibraryRow } from '../../db/repos/libraries.ts';
import { AppError, badRequest, conflict, forbidden } from '../../errors.ts';
import { writeFully } from '../../lib/file-writes.ts';
import type { StagedHostFile } from '../../lib/staged-host-file.ts';
import { HostPathError, hostNameProblem, hostPath, hostPathProblem, inFolderInside, STAGING_PREFIX } from '../../storage/host-paths.ts';
import { fileIdOf, hostTimeOf, LIBRARY_TRASH } from './scanner.ts';

const MAX_DEPTH = 10_000;
const IN_TRASH = 'The file is in the trash: restore it, then save it again.';
const STAGED_CHANGED = "The file's temporary copy in the library folder was changed on the server meanwhile: upload it again.";

/** A rename or move on the host, planned before the index changes (the old path is read from it). */
export interface HostMove {
  library: LibraryRow;
  from: { folder: readonly string[]; name: string };
  to: { folder: readonly string[]; name: string };
}

/**
 * A name Coffer may write in the folder `folder` of a library: the host's limits (its path too: one past them is made
 * through the open folder, then no door could open it), and none of the names the library keeps for itself.
 */
function writtenNameProblem(library: LibraryRow, folder: readonly string[], name: string): string | null {
  if (name.startsWith(STAGING_PREFIX))
    return `A name starting with "${STAGING_PREFIX}" is kept for Coffer's temporary files in a library (its scans leave them out and remove them): choose another name.`;
  if (folder.length === 0 && name === LIBRARY_TRASH)
    return `"${LIBRARY_TRASH}" at the top of a library is its trash folder: choose another name.`;
  return hostNameProblem(name) ?? hostPathProblem(library.path, [...folder, name]);
}

/** What a failed host write answers: the host's reason in words a person can act on. */
function hostError(err: unknown, library: LibraryRow, name: string): AppError {
  if (err instanceof AppError) return err;
  if (err instanceof HostPathError) return badRequest(err.message);
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'EEXIST' || code === 'ENOTEMPTY') return conflict(`"${name}" already exists in the library's folder on the server.`);
  if (code === 'ENOSPC' || code === 'EDQUOT')
    return new AppError(507, `The disk of the library folder ${library.path} is full: free some space there, or save the file elsewhere.`);
  if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS') {
    return forbidden(`The server cannot write in the library folder ${library.path} (${code}): its permissions allow no change by Coffer.`);
  }
  if (code === 'ENAMETOOLONG') return badRequest(`"${name}" is too long for the library's file system.`);
  if (code === 'ENOENT') return conflict('The library folder changed on the server meanwhile: try again once it has been scanned.');
  return badRequest(`The server could not write in the library folder (${code ?? 'error'}).`);
}

/**
 * The changes Coffer makes in a writable library's host folder, through the safe-path module: a folder
 * made, an entry renamed or moved within the library (never over an existing entry), a file's content
 * staged under a temporary name and renamed into place. Each but the staging runs inside the index
 * write's transaction, so a refusal by the host leaves the index as it was.
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
      const folder = this.namesOf(library, parentId);
      const problem = writtenNameProblem(library, folder, item.name);
      if (problem) throw badRequest(problem);
      inFolderInside(library.path, folder, (parent) => {
        fs.mkdirSync(`${parent}/${item.name}`);
        const st = fs.statSync(`${parent}/${item.name}`);
        this.d.libraries.putEntry({
          itemId: item.id,
          libraryId: library.id,
          fileId: fileIdOf(st),
          hostModifiedAt: hostTimeOf(st),
          unavailable: false,
        });
      });
    } catch (err) {
      throw hostError(err, library, item.name);
    }
  }

  /**
   * Writes `body` to a new temporary file in the host folder of `folderId` (a folder of `library`), synced,
   * with `modifiedAt` as its mtime; `land` renames it into place at the commit, `unstage` removes it.
   */
  async stage(library: LibraryRow, folderId: string, body: AsyncIterable<Uint8Array>, modifiedAt: number): Promise<StagedHostFile> {
    let path: string | null = null;
    try {
      const name = `${STAGING_PREFIX}${randomBytes(9).toString('base64url')}`;
      const names = this.namesOf(library, folderId);
      const problem = hostPathProblem(library.path, [...names, name]);
      if (problem) throw badRequest(problem);
      const opened = await inFolderInside(library.path, names, async (folder) => ({
        // Where the held folder is: the staged file's path, which the commit renames and a failure removes.
        at: `${fs.readlinkSync(folder)}/${name}`,
        file: await fs.promises.open(`${folder}/${name}`, 'wx', 0o666),
      }));
      path = opened.at;
      const file = opened.file;
      let fileId: string;
      try {
        fileId = fileIdOf(await file.stat());
        for await (const chunk of body) await writeFully(file, chunk);
        await file.utimes(new Date(modifiedAt), new Date(modifiedAt));
        await file.sync();
      } finally {
        await file.close();
      }
      return { libraryId: library.id, path, modifiedAt, fileId };
    } catch (err) {
      if (path) this.unstage({ libraryId: library.id, path, modifiedAt, fileId: '' });
      throw hostError(err, library, 'the file');
    }
  }

  /** Removes a staged file that was not landed (a failed or refused commit); gone already is fine. */
  unstage(staged: StagedHostFile): void {
    fs.rmSync(staged.path, { force: true });
  }

  /**
   * Renames staged content into place as the file `itemId` (its row already written in this transaction) and
   * indexes it under its new inode, so the watch sees nothing new. A new file never replaces an entry Coffer
   * does not list (`409`); new content of an indexed file replaces it in one rename, never half-written.
   */
  land(library: LibraryRow, itemId: string, staged: StagedHostFile, replace: boolean): void {
    const names = this.namesOf(library, itemId);
    const name = names.at(-1)!;
    try {
      if (staged.libraryId !== library.id) throw conflict('The file was uploaded for another library: upload it again.');
      // A trashed file's host entry is in the library's trash folder, not under its names: new content would land beside it.
      if (replace && this.d.items.nameAndParent(itemId)?.deletedAt !== null) throw conflict(IN_TRASH);
      const problem = writtenNameProblem(library, names.slice(0, -1), name);
      if (problem) throw badRequest(problem);
      inFolderInside(library.path, names.slice(0, -1), (folder) => {
        const target = `${folder}/${name}`;
        if (!replace && exists(target)) throw conflict(`"${name}" already exists in the library's folder on the server.`);
        checkStaged(staged, replace ? modeOf(target) : null);
        fs.renameSync(staged.path, target);
        syncFolder(folder);
        const st = fs.statSync(target);
        this.d.libraries.putEntry({
          itemId,
          libraryId: library.id,
          fileId: fileIdOf(st),
          hostModifiedAt: hostTimeOf(st),
          unavailable: false,
        });
      });
    } catch (err) {
      throw hostError(err, library, name);
    }
  }

  /**
   * Moves a trashed item's host file or folder into the library's trash folder, named by the item's id (the
   * index keeps its name and place for the restore); the scans and listings never show that folder.
   */
  trash(library: LibraryRow, itemId: string): void {
    const names = this.namesOf(library, itemId);
    try {
      fs.mkdirSync(hostPath(library.path, [LIBRARY_TRASH]), { recursive: true, mode: 0o700 });
      inFolderInside(library.path, names.slice(0, -1), (from) =>
        inFolderInside(library.path, [LIBRARY_TRASH], (bin) => fs.renameSync(`${from}/${names.at(-1)!}`, `${bin}/${itemId}`)),
      );
    } catch (err) {
      throw hostError(err, library, names.at(-1)!);
    }
  }

  /** Moves a trashed item back from the library's trash folder to `name` in the folder `parentId` (never over an entry). */
  restore(library: LibraryRow, itemId: string, parentId: string, name: string): void {
    try {
      const to = this.namesOf(library, parentId);
      const problem = writtenNameProblem(library, to, name);
      if (problem) throw badRequest(problem);
      inFolderInside(library.path, [LIBRARY_TRASH], (bin) => {
        const kept = `${bin}/${itemId}`;
        if (!exists(kept)) throw conflict(`"${name}" is no longer in the library's trash folder on the server (${LIBRARY_TRASH}).`);
        inFolderInside(library.path, to, (folder) => {
          const target = `${folder}/${name}`;
          if (exists(target)) throw conflict(`"${name}" already exists in the library's folder on the server.`);
          fs.renameSync(kept, target);
        });
      });
    } catch (err) {
      throw hostError(err, library, name);
    }
  }

  /**
   * Removes what the library's trash folder keeps for a trashed item (nothing for an item trashed inside a
   * folder). A host that refuses (its folder gone, its permissions) keeps the entry in its trash folder, and
   * the item still leaves Coffer's trash, which must never be stuck on a host.
   */
  purgeTrashed(library: LibraryRow, itemId: string): void {
    try {
      inFolderInside(library.path, [LIBRARY_TRASH], (bin) => fs.rmSync(`${bin}/${itemId}`, { recursive: true, force: true }));
    } catch {
      // The entry stays in the library's trash folder on the host.
    }
  }

  /** Where `itemId` is on the host now and where it goes (`parentId` undefined: the same folder). */
  planMove(library: LibraryRow, itemId: string, parentId: string | undefined, name: string): HostMove {
    const names = this.namesOf(library, itemId);
    const from = { folder: names.slice(0, -1), name: names.at(-1)! };
    const folder = parentId === undefined ? from.folder : this.namesOf(library, parentId);
    const problem = writtenNameProblem(library, folder, name);
    if (problem) throw badRequest(problem);
    return { library, from, to: { folder, name } };
  }

  move(plan: HostMove): void {
    const { library, from, to } = plan;
    try {
      if (from.name === to.name && from.folder.join('/') === to.folder.join('/')) return;
      inFolderInside(library.path, from.folder, (fromFolder) =>
        inFolderInside(library.path, to.folder, (toFolder) => {
          const source = `${fromFolder}/${from.name}`;
          const target = `${toFolder}/${to.name}`;
          // rename(2) replaces an existing file silently: an entry already there (one Coffer does not list) is refused.
          if (exists(target) && !sameEntry(source, target))
            throw conflict(`"${to.name}" already exists in the library's folder on the server.`);
          fs.renameSync(source, target);
        }),
      );
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

/** The permission bits of the file new content replaces (kept, as other programs set them), or null when it is gone. */
function modeOf(target: string): number | null {
  try {
    return fs.statSync(target).mode & 0o7777;
  } catch {
    return null;
  }
}

/**
 * Checks that the entry at the staged path is still the file `stage` wrote, and gives it `mode` through its
 * descriptor: a symlink someone with write access to the folder put in its place is never followed (a chmod by
 * path would change the file it leads to, outside the library) nor landed.
 */
function checkStaged(staged: StagedHostFile, mode: number | null): void {
  let fd: number;
  try {
    fd = fs.openSync(staged.path, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ELOOP') throw conflict(STAGED_CHANGED);
    throw err;
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile() || fileIdOf(st) !== staged.fileId) throw conflict(STAGED_CHANGED);
    if (mode !== null) fs.fchmodSync(fd, mode);
  } finally {
    fs.closeSync(fd);
  }
}

/** Makes a rename in `folder` durable (its entry written), as the store's own writes are. */
function syncFolder(folder: string): void {
  const fd = fs.openSync(folder, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
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
