import { LIBRARY_READ_ONLY } from '../../contract/libraries.ts';
import type { ItemChange } from '../../db/repos/items.ts';
import type { LibrariesRepo, LibraryRow } from '../../db/repos/libraries.ts';
import { forbidden } from '../../errors.ts';
import type { LibraryHostWrites } from './host-writes.ts';

const ROOT_MANAGED = "A library's own folder is managed by the admin (Admin → Libraries): it cannot be renamed, moved or deleted here.";
const NO_FILE_WRITES =
  'Coffer does not yet upload, replace or delete files in a library: change these files on the host, and the library follows. New folders, renames and moves within the library work.';
const NOT_ACROSS =
  "Moving between a library and Coffer's own files (or another library) is not built yet: download the files and upload them where they go.";

/**
 * What Coffer may change in a library. A read-only one: nothing but what the host folder itself did (the
 * scanner's own writes, made inside `asHost`). A writable one: new folders, renames and moves within it,
 * each made on the host inside the write's transaction (LibraryHostWrites); file contents and deletes not
 * yet. Every door's writes reach the tree's repository, which asks this guard first, so a write into a
 * library cannot land in Coffer's index without landing on the host.
 */
export class LibraryWriteGuard {
  private hostDepth = 0;

  constructor(
    private readonly libraries: LibrariesRepo,
    private readonly host: LibraryHostWrites,
  ) {}

  /** Runs `fn` as the host's own changes (the scanner indexing what it found). */
  asHost<T>(fn: () => T): T {
    this.hostDepth++;
    try {
      return fn();
    } finally {
      this.hostDepth--;
    }
  }

  readonly check = (change: ItemChange): (() => void) | undefined => {
    if (this.hostDepth > 0) return undefined;
    if (change.kind === 'insert') return this.insert(change);
    const library = this.libraries.ofItem(change.itemId);
    if (change.kind === 'place') return this.place(change, library);
    if (!library) return undefined;
    if (library.readOnly) throw forbidden(LIBRARY_READ_ONLY);
    if (library.folderId === change.itemId) throw forbidden(ROOT_MANAGED);
    // Ahead of an edit whose kind is not known yet, a writable library lets it through to its own check.
    if (change.kind === 'change') return undefined;
    throw forbidden(NO_FILE_WRITES);
  };

  private insert(change: Extract<ItemChange, { kind: 'insert' }>): (() => void) | undefined {
    const library = change.parentId ? this.libraries.ofItem(change.parentId) : null;
    if (!library) return undefined;
    if (library.readOnly) throw forbidden(LIBRARY_READ_ONLY);
    if (change.type !== 'folder') throw forbidden(NO_FILE_WRITES);
    const item = change.item;
    const parentId = change.parentId!;
    return item ? () => this.host.makeFolder(library, parentId, item) : undefined;
  }

  private place(change: Extract<ItemChange, { kind: 'place' }>, library: LibraryRow | null): (() => void) | undefined {
    const target = change.parentId === undefined ? library : change.parentId === null ? null : this.libraries.ofItem(change.parentId);
    if (!library && !target) return undefined;
    if (library?.readOnly || target?.readOnly) throw forbidden(LIBRARY_READ_ONLY);
    if (library?.folderId === change.itemId) throw forbidden(ROOT_MANAGED);
    if (!library || !target || library.id !== target.id) throw forbidden(NOT_ACROSS);
    if (change.name === undefined) return undefined;
    // The host path before the write, while the index still has the old name and place.
    const move = this.host.planMove(library, change.itemId, change.parentId ?? undefined, change.name);
    return () => this.host.move(move);
  }
}
