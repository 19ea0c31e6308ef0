import { LIBRARY_READ_ONLY } from '../../contract/libraries.ts';
import type { ItemChange } from '../../db/repos/items.ts';
import type { LibrariesRepo, LibraryRow } from '../../db/repos/libraries.ts';
import { forbidden } from '../../errors.ts';

const ROOT_MANAGED = "A library's own folder is managed by the admin (Admin → Libraries): it cannot be renamed, moved or deleted here.";
const NOT_WRITABLE = 'Coffer does not write into libraries yet: add, change or delete these files on the host, and the library follows.';

/**
 * What Coffer may change in a library: nothing but what the host folder itself did (the scanner's own writes,
 * made inside `asHost`). Every door's writes reach the tree's repository, which asks this guard first, so a
 * write into a library cannot land in Coffer's index without landing on the host.
 */
export class LibraryWriteGuard {
  private hostDepth = 0;

  constructor(private readonly libraries: LibrariesRepo) {}

  /** Runs `fn` as the host's own changes (the scanner indexing what it found). */
  asHost<T>(fn: () => T): T {
    this.hostDepth++;
    try {
      return fn();
    } finally {
      this.hostDepth--;
    }
  }

  readonly check = (change: ItemChange): void => {
    if (this.hostDepth > 0) return;
    if (change.kind === 'change') {
      const library = this.libraries.ofItem(change.itemId);
      if (library?.folderId === change.itemId) throw forbidden(ROOT_MANAGED);
      if (library) refuse(library);
    }
    if (change.parentId) {
      const target = this.libraries.ofItem(change.parentId);
      if (target) refuse(target);
    }
  };
}

function refuse(library: LibraryRow): never {
  throw forbidden(library.readOnly ? LIBRARY_READ_ONLY : NOT_WRITABLE);
}
