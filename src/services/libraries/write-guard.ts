import { LIBRARY_READ_ONLY } from '../../contract/libraries.ts';
import type { ItemChange } from '../../db/repos/items.ts';
import type { LibrariesRepo, LibraryRow } from '../../db/repos/libraries.ts';
import { conflict, forbidden } from '../../errors.ts';
import type { LibraryHostWrites } from './host-writes.ts';

const ROOT_MANAGED = "A library's own folder is managed by the admin (Admin → Libraries): it cannot be renamed, moved or deleted here.";
const NOT_COPIED_IN =
  "Copying Coffer's own files (or another library's) into a library is not built yet: download the files and upload them into the library.";
const LEFT_LIBRARY = 'The folder left its library while the file was being uploaded: upload it again.';
const NOT_ACROSS = "An item cannot be moved across a library's edge this way: copy it where it goes, then delete the original.";

/**
 * What Coffer may change in a library. A read-only one: nothing but what the host folder itself did (the
 * scanner's own writes, made inside `asHost`). A writable one: new folders, renames and moves within it,
 * file content staged in the host folder by the upload (every door's), and deletes into its trash folder
 * (restored from it, purged with Coffer's trash), each made on the host inside the write's transaction
 * (LibraryHostWrites). Every door's writes reach the tree's
 * repository, which asks this guard first, so a write into a library cannot land in Coffer's index without
 * landing on the host.
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
    if (!library) return this.outside(change);
    // A purge removes what the trash kept on the host, whatever the library has become since.
    if (change.kind === 'purge') return () => this.host.purgeTrashed(library, change.itemId);
    if (library.readOnly) throw forbidden(LIBRARY_READ_ONLY);
    if (library.folderId === change.itemId) throw forbidden(ROOT_MANAGED);
    // Ahead of an edit whose kind is not known yet, a writable library lets it through to its own check.
    if (change.kind === 'change') return undefined;
    if (change.kind === 'content') {
      const staged = change.staged;
      if (!staged) throw forbidden(NOT_COPIED_IN);
      return () => this.host.land(library, change.itemId, staged, true);
    }
    if (change.kind === 'restore') {
      const target = change.parentId ? this.libraries.ofItem(change.parentId) : null;
      if (target?.id !== library.id) throw forbidden(NOT_ACROSS);
      return () => this.host.restore(library, change.itemId, change.parentId!, change.name);
    }
    return () => this.host.trash(library, change.itemId);
  };

  private insert(change: Extract<ItemChange, { kind: 'insert' }>): (() => void) | undefined {
    const library = change.parentId ? this.libraries.ofItem(change.parentId) : null;
    if (!library) return this.outside(change);
    if (library.readOnly) throw forbidden(LIBRARY_READ_ONLY);
    const item = change.item;
    // Ahead of the write (a tus upload's creation), before its content is known.
    if (!item) return undefined;
    if (change.type === 'folder') return () => this.host.makeFolder(library, change.parentId!, item);
    const staged = change.staged;
    if (!staged) throw forbidden(NOT_COPIED_IN);
    return () => this.host.land(library, item.id, staged, false);
  }

  /** A write outside every library: content staged for one means its target left the library meanwhile. */
  private outside(change: ItemChange): undefined {
    if ('staged' in change && change.staged) throw conflict(LEFT_LIBRARY);
    return undefined;
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
