import type { SortField, SortOrder } from '../../src/contract/files.ts';
import type { Crumb } from '../app/folders.ts';
import { sortBy, sortOrder } from '../app/prefs.ts';
import { collectionSource, folderSource, type ListingSource, recentSource, searchSource, sharedWithMeSource } from '../app/listings.ts';
import type { ViewKind } from './actions.tsx';
import type { Column } from './item-cells.tsx';
import type { SortKey } from './list-props.ts';

// Photos has its own screen (web/photos/); every other view is the file browser.
export type BrowserKind = Exclude<ViewKind, 'photos'>;

const TITLES: Record<Exclude<BrowserKind, 'folder' | 'search'>, string> = {
  recent: 'Recent',
  starred: 'Starred',
  shared: 'Shared',
  sharedWithMe: 'Shared with me',
  trash: 'Trash',
};

export const COLUMNS: Record<BrowserKind, Column[]> = {
  folder: ['size', 'modified'],
  recent: ['location', 'size', 'accessed'],
  starred: ['size', 'modified'],
  shared: ['sharedAt', 'expires'],
  sharedWithMe: ['owner', 'role', 'sharedAt'],
  trash: ['size', 'deleted'],
  search: ['location', 'size', 'modified'],
};

export const EMPTY: Record<BrowserKind, string> = {
  folder: 'This folder is empty.',
  recent: 'Files you open or download will appear here.',
  starred: 'Nothing starred yet. Star files and folders (S) to find them here quickly.',
  shared: 'Nothing shared yet. Select items and choose Share to create a link or add people.',
  sharedWithMe: 'Nothing is shared with you yet. When someone on this Coffer shares a file or folder with you, it appears here.',
  trash: 'The trash is empty. Deleted items wait here until you empty the trash or they expire.',
  search: 'No files or folders match.',
};

export function sourceFor(kind: BrowserKind, folderId: string | null, query: string, by: SortField, order: SortOrder): ListingSource {
  switch (kind) {
    case 'folder':
      return folderSource(folderId, by, order);
    case 'recent':
      return recentSource;
    case 'search':
      return searchSource(query);
    case 'trash':
      return collectionSource('trash', 'deletedAt', 'desc');
    case 'sharedWithMe':
      return sharedWithMeSource;
    default:
      return collectionSource(kind, by, order);
  }
}

export function titleOf(kind: BrowserKind, crumbs: Crumb[], query: string): string {
  if (kind === 'folder') return crumbs[crumbs.length - 1]?.name ?? 'My files';
  return kind === 'search' ? `Results for “${query}”` : TITLES[kind];
}

export const isSortable = (kind: BrowserKind) => kind === 'folder' || kind === 'starred' || kind === 'shared';

/** A column header pressed: the same column again reverses the order; names start A–Z, sizes and dates largest and newest. */
export function sortByColumn(key: SortKey): void {
  if (sortBy.value === key) sortOrder.value = sortOrder.value === 'asc' ? 'desc' : 'asc';
  else {
    sortBy.value = key;
    sortOrder.value = key === 'name' ? 'asc' : 'desc';
  }
}
