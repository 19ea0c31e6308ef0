import type { Item, ListedItem } from '../../db/repos/items.ts';
import type { Item as ItemView } from '../../contract/files.ts';
import type { LibrariesRepo } from '../../db/repos/libraries.ts';
import type { SharesRepo, ShareStatus } from '../../db/repos/shares.ts';
import type { ThumbnailsRepo } from '../../db/repos/thumbnails.ts';

/** Whether a file of this type gets a thumbnail (the `hasThumbnail` of listings); the thumbnails domain decides. */
export type HasThumbnail = (mimeType: string | null) => boolean;

/** An item as a share page shows it. */
export interface PublicItem {
  id: string;
  name: string;
  type: 'file' | 'folder';
  size: number | null;
  mimeType: string | null;
  modified: string;
  /** Files: whether the type can have a thumbnail (GET /s/:token/thumbnail/:id). */
  hasThumbnail?: boolean;
}

export const iso = (ms: number) => new Date(ms).toISOString();

export function toPublicItem(
  r: Pick<Item, 'id' | 'name' | 'type' | 'size' | 'mimeType' | 'modifiedAt'>,
  hasThumbnail: HasThumbnail,
): PublicItem {
  const item: PublicItem = {
    id: r.id,
    name: r.name,
    type: r.type,
    size: r.type === 'folder' ? null : r.size,
    mimeType: r.type === 'folder' ? null : r.mimeType,
    modified: iso(r.modifiedAt),
  };
  if (r.type === 'file') item.hasThumbnail = hasThumbnail(r.mimeType);
  return item;
}

function toItemView(
  row: ListedItem,
  share: ShareStatus | undefined,
  library: { unavailable: boolean } | undefined,
  hasThumbnail: HasThumbnail,
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
  // A library file's bytes are not in the store: no thumbnail is made of it (nc:has-preview says the same).
  if (row.type === 'file') view.hasThumbnail = !library && hasThumbnail(row.mimeType);
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

  many(accountId: string, rows: readonly ListedItem[]): ItemView[] {
    const ids = rows.map((r) => r.id);
    const status = this.shares.statusOf(accountId, ids);
    const library = this.libraries.statusOf(ids);
    // Only a page with videos asks for running times.
    const videos = rows.filter((r) => r.type === 'file' && r.mimeType?.startsWith('video/')).map((r) => r.id);
    const durations = videos.length ? this.thumbnails.durationsOf(videos) : new Map<string, number>();
    return rows.map((r) => toItemView(r, status.get(r.id), library.get(r.id), this.hasThumbnail, durations.get(r.id)));
  }

  one(accountId: string, row: ListedItem): ItemView {
    return this.many(accountId, [row])[0]!;
  }
}
