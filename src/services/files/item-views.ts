import type { Item, ListedItem } from '../../db/repos/items.ts';
import type { Item as ItemView } from '../../contract/files.ts';
import type { LibrariesRepo } from '../../db/repos/libraries.ts';
import type { SharesRepo, ShareStatus } from '../../db/repos/shares.ts';
import type { ThumbnailRow, ThumbnailsRepo } from '../../db/repos/thumbnails.ts';

/** Whether a file of this type gets a thumbnail (the `hasThumbnail` of listings); the thumbnails domain decides. */
export type HasThumbnail = (mimeType: string | null) => boolean;

/**
 * Of these files' thumbnail states (ThumbnailsRepo.statusOfItems), those that have a thumbnail or can have
 * one made when asked (none tried yet or only one that failed, and the bytes at hand): one rule for listings, share pages and WebDAV.
 */
export function withThumbnails(
  rows: ReadonlyArray<{ id: string; mimeType: string | null; status: ThumbnailRow['status'] | null; readable: boolean }>,
  canHave: HasThumbnail,
): Set<string> {
  const out = new Set<string>();
  // One failed try: the page must ask for it, which makes it again once its time has come (RETRY_AFTER_MS in thumbnails.ts).
  for (const r of rows) if (r.status === 'ready' || (r.status !== 'none' && r.readable && canHave(r.mimeType))) out.add(r.id);
  return out;
}

/** An item as a share page shows it. */
export interface PublicItem {
  id: string;
  name: string;
  type: 'file' | 'folder';
  size: number | null;
  mimeType: string | null;
  modified: string;
  /** Files: whether it has a thumbnail, or can have one made when asked (GET /s/:token/thumbnail/:id). */
  hasThumbnail?: boolean;
}

export const iso = (ms: number) => new Date(ms).toISOString();

/** `pictured`: the files with a thumbnail (ItemViews.pictured); folders have none. */
export function toPublicItem(
  r: Pick<Item, 'id' | 'name' | 'type' | 'size' | 'mimeType' | 'modifiedAt'>,
  pictured: ReadonlySet<string>,
): PublicItem {
  const item: PublicItem = {
    id: r.id,
    name: r.name,
    type: r.type,
    size: r.type === 'folder' ? null : r.size,
    mimeType: r.type === 'folder' ? null : r.mimeType,
    modified: iso(r.modifiedAt),
  };
  if (r.type === 'file') item.hasThumbnail = pictured.has(r.id);
  return item;
}

function toItemView(
  row: ListedItem,
  share: ShareStatus | undefined,
  library: { unavailable: boolean } | undefined,
  pictured: ReadonlySet<string>,
  duration: number | undefined,
): ItemView {
  const view: ItemView = {
    id: row.id,
    name: row.name,
    type: row.type,
    size: row.type === 'folder' ? null : row.size,
    mimeType: row.type === 'folder' ? null : row.mimeType,
    parentId: row.parentId,
    starred: row.starred,
    shared: share !== undefined,
    modified: iso(row.modifiedAt),
    accessedAt: iso(row.accessedAt),
    sharedAt: share ? iso(share.sharedAt) : null,
    expiresAt: share?.expiresAt != null ? iso(share.expiresAt) : null,
  };
  if (row.deletedAt !== null) view.deletedAt = iso(row.deletedAt);
  if (row.type === 'file') view.hasThumbnail = pictured.has(row.id);
  if (duration !== undefined) view.duration = duration;
  if (library) {
    view.library = true;
    if (library.unavailable) view.unavailable = true;
  }
  return view;
}

/** Rows as the API shows them, with their share status (one lookup per list). */
export class ItemViews {
  constructor(
    private readonly shares: SharesRepo,
    private readonly libraries: LibrariesRepo,
    private readonly thumbnails: ThumbnailsRepo,
    private readonly hasThumbnail: HasThumbnail,
  ) {}

  /** Of these rows, the files that have a thumbnail or can have one made when asked (one lookup, only when a type can). */
  pictured(rows: ReadonlyArray<Pick<ListedItem, 'id' | 'type' | 'mimeType'>>): Set<string> {
    const candidates = rows.filter((r) => r.type === 'file' && this.hasThumbnail(r.mimeType)).map((r) => r.id);
    return candidates.length === 0 ? new Set() : withThumbnails(this.thumbnails.statusOfItems(candidates), this.hasThumbnail);
  }

  many(accountId: string, rows: readonly ListedItem[]): ItemView[] {
    const ids = rows.map((r) => r.id);
    const status = this.shares.statusOf(accountId, ids);
    const library = this.libraries.statusOf(ids);
    const pictured = this.pictured(rows);
    // Only a page with videos asks for running times.
    const videos = rows.filter((r) => r.type === 'file' && r.mimeType?.startsWith('video/')).map((r) => r.id);
    const durations = videos.length ? this.thumbnails.durationsOf(videos) : new Map<string, number>();
    return rows.map((r) => toItemView(r, status.get(r.id), library.get(r.id), pictured, durations.get(r.id)));
  }

  one(accountId: string, row: ListedItem): ItemView {
    return this.many(accountId, [row])[0]!;
  }

  /**
   * A file row inserted under a new id in this request: no share names it yet, and only a library's file
   * (no storage key) or a video (its running time) can have more than its thumbnail state to look up.
   */
  inserted(accountId: string, row: Item): ItemView {
    if (row.storageKey === null || row.mimeType?.startsWith('video/')) return this.one(accountId, row);
    return toItemView(row, undefined, undefined, this.pictured([row]), undefined);
  }
}
