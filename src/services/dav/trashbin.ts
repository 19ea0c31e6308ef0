import type { Item, ItemsRepo } from '../../db/repos/items.ts';
import type { Clock } from '../../clock.ts';
import { Messages, notFound } from '../../errors.ts';
import type { Principal } from '../identity/principal.ts';
import type { TrashService } from '../files/trash.ts';
import { type DavItem, type DavService, davItem } from './dav.ts';
import { runInTurns } from '../../lib/steps.ts';

/** One trash entry as the Nextcloud clients list it under /remote.php/dav/trashbin/<id>/trash/. */
export interface TrashbinEntry {
  /** Its name in the trash listing: fileid, name and deletion second, so it names one entry only. */
  entryName: string;
  item: DavItem;
  /** Where it was, relative to the account's root, its own name included (as Nextcloud writes it). */
  originalLocation: string;
  /** Unix seconds. */
  deletedAt: number;
  /** A file's size; a folder's, the files trashed with it. */
  size: number;
}

const PAGE = 500;

/** The entry name of a trash root: `<fileid>-<name>.d<deletion second>`. */
function entryNameOf(row: Item): string {
  return `${row.seq}-${row.name}.d${Math.floor(row.deletedAt! / 1000)}`;
}

/**
 * The trash as the Nextcloud clients' trashbin: the trash roots with where they were, restored (to where
 * they were, a taken name getting `(n)`) or deleted for good one at a time, through the trash service.
 */
export class DavTrashbin {
  constructor(private readonly d: { items: ItemsRepo; trash: TrashService; dav: DavService; clock: Clock }) {}

  /** The account's trash roots, a page at a time, in fileid order. */
  async *entries(principal: Principal): AsyncGenerator<TrashbinEntry[]> {
    const parents = new Map<string, string | null>();
    let after = 0;
    for (;;) {
      const rows = this.d.items.trashRootsBySeq(principal.accountId, after, PAGE);
      if (rows.length) yield rows.map((r) => this.entryOf(r, parents));
      if (rows.length < PAGE) return;
      after = rows.at(-1)!.seq;
    }
  }

  /** The entry of the account's trash with this name; 404 when there is none. */
  entry(principal: Principal, entryName: string): TrashbinEntry {
    const seq = /^(\d{1,15})-/.exec(entryName)?.[1];
    const row = seq ? this.d.items.trashRootBySeq(principal.accountId, Number(seq)) : null;
    if (!row || entryNameOf(row) !== entryName) throw notFound(Messages.itemNotFound);
    return this.entryOf(row, new Map());
  }

  /** Puts an entry back where it was (or at the root when that folder is gone); its items keep their ids. */
  async restore(principal: Principal, entry: TrashbinEntry): Promise<void> {
    this.d.dav.allow(principal, 'trash.restore');
    await runInTurns(this.d.trash.restoreSteps(principal.accountId, principal.loginId, [entry.item.id], {}));
  }

  /** Deletes an entry and everything trashed with it for good. */
  async purge(principal: Principal, entry: TrashbinEntry): Promise<void> {
    this.d.dav.allow(principal, 'trash.delete');
    await runInTurns(this.d.trash.deleteSteps(principal.accountId, principal.loginId, [entry.item.id], {}));
  }

  /** Empties the account's trash of what is in it now. */
  async empty(principal: Principal): Promise<void> {
    this.d.dav.allow(principal, 'trash.empty');
    await runInTurns(this.d.trash.emptySteps(principal, this.d.clock.now()));
  }

  private entryOf(row: Item, parents: Map<string, string | null>): TrashbinEntry {
    const folder = row.parentId ? this.pathOf(row.accountId, row.parentId, parents) : '';
    return {
      entryName: entryNameOf(row),
      item: davItem(row),
      originalLocation: folder === null ? row.name : `${folder}${row.name}`,
      deletedAt: Math.floor(row.deletedAt! / 1000),
      size: row.type === 'file' ? row.size : row.treeSize,
    };
  }

  /** A folder's path with a trailing '/' (live or trashed), null when one of its folders is gone; memoized per listing. */
  private pathOf(accountId: string, folderId: string, known: Map<string, string | null>): string | null {
    const cached = known.get(folderId);
    if (cached !== undefined) return cached;
    const row = this.d.items.get(accountId, folderId);
    let path: string | null = null;
    if (row) {
      const above = row.parentId ? this.pathOf(accountId, row.parentId, known) : '';
      path = above === null ? null : `${above}${row.name}/`;
    }
    known.set(folderId, path);
    return path;
  }
}
