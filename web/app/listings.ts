import { signal } from '@preact/signals';
import type { ItemPage } from './api.ts';
import type { Item, Photo, SearchHit, SortField, SortOrder } from '../../src/contract/files.ts';
import { api } from '../api/index.ts';
import { sharedWithMePage } from './people.ts';

/** Where a listing's pages come from. */
export interface ListingSource {
  key: string;
  /** What the listing shows: a folder's contents (its id, null for My files) or a collection. */
  view: { folder: string | null } | 'starred' | 'shared' | 'sharedWithMe' | 'trash' | 'recent' | 'search' | 'photos';
  /** Its items change by events the stream cannot replay (stars, a share with this account made or ended). */
  liveOnly?: boolean;
  load(cursor: string | undefined, limit: number, signal?: AbortSignal): Promise<ItemPage>;
}

type Change = (items: Item[], listing: Listing) => Item[];
// Changes made on screen that the server has not confirmed yet: a revalidation in the meantime must not undo them.
const pending = new Set<Change>();

const PAGE = 200;
// A revalidation refetches what is on screen up to this many items; beyond it the tail is kept.
const REFRESH_MAX = 2000;

/**
 * One view's items (a folder, Starred, the trash...): shown from cache at once, revalidated in the
 * background, paged on demand through X-Next-Cursor, patched optimistically by actions.
 */
export class Listing {
  readonly items = signal<Item[]>([]);
  readonly loaded = signal(false);
  readonly error = signal<string | null>(null);
  readonly more = signal(false);
  private cursor: string | null = null;
  private paging: Promise<void> | null = null;
  private refreshing: Promise<void> | null = null;
  private again = false;
  stale = true;
  watchers = 0;

  constructor(readonly source: ListingSource) {}

  /** The first load, or a revalidation of what is loaded. */
  refresh(): Promise<void> {
    if (this.refreshing) {
      this.again = true;
      return this.refreshing;
    }
    this.stale = false;
    this.refreshing = this.fetchFresh().finally(() => {
      this.refreshing = null;
      if (this.again) {
        this.again = false;
        void this.refresh();
      }
    });
    return this.refreshing;
  }

  private async fetchFresh(): Promise<void> {
    const want = Math.min(Math.max(this.items.value.length, PAGE), REFRESH_MAX);
    const fresh: Item[] = [];
    let cursor: string | undefined;
    try {
      do {
        const page = await this.source.load(cursor, Math.min(500, Math.max(PAGE, want - fresh.length)));
        fresh.push(...page.items);
        cursor = page.nextCursor ?? undefined;
      } while (cursor && fresh.length < want);
    } catch (err) {
      this.error.value = (err as Error).message;
      this.loaded.value = true;
      return;
    }
    const old = this.items.value;
    if (old.length > REFRESH_MAX && cursor) {
      const seen = new Set(fresh.map((i) => i.id));
      this.items.value = this.withPending([...fresh, ...old.slice(REFRESH_MAX).filter((i) => !seen.has(i.id))]);
      this.cursor ??= cursor;
    } else {
      this.items.value = this.withPending(fresh);
      this.cursor = cursor ?? null;
    }
    this.more.value = this.cursor !== null;
    this.error.value = null;
    this.loaded.value = true;
  }

  /** The next page, when scrolling nears the end. */
  loadMore(): Promise<void> {
    // Asked while a revalidation runs: once it is in, from its cursor (dropped, Photos' background paging stopped for good).
    if (this.refreshing) return this.refreshing.then(() => this.loadMore());
    if (!this.cursor) return Promise.resolve();
    this.paging ??= (async () => {
      try {
        const page = await this.source.load(this.cursor ?? undefined, 500);
        const seen = new Set(this.items.value.map((i) => i.id));
        this.items.value = [...this.items.value, ...this.withPending(page.items).filter((i) => !seen.has(i.id))];
        this.cursor = page.nextCursor;
        this.more.value = this.cursor !== null;
      } catch (err) {
        this.error.value = (err as Error).message;
      } finally {
        this.paging = null;
      }
    })();
    return this.paging;
  }

  private withPending(items: Item[]): Item[] {
    for (const change of pending) items = change(items, this);
    return items;
  }

  /** Everything is loaded: names in it can be checked without asking the server. */
  get complete(): boolean {
    return this.loaded.value && this.cursor === null;
  }
}

const cache = new Map<string, Listing>();
const LIMIT = 40;

export function listingFor(source: ListingSource): Listing {
  let l = cache.get(source.key);
  if (l) {
    cache.delete(source.key);
    cache.set(source.key, l);
    return l;
  }
  l = new Listing(source);
  cache.set(source.key, l);
  for (const [key, old] of cache) {
    if (cache.size <= LIMIT) break;
    if (old.watchers === 0) cache.delete(key);
  }
  return l;
}

/** Something changed on the server: listings on screen revalidate now, the rest when next shown. */
export function invalidateListings(): void {
  for (const l of cache.values()) {
    l.stale = true;
    if (l.watchers > 0) void l.refresh();
  }
}

/** The stream is live again: listings on screen that live-only events change revalidate now, every listing when next shown. */
export function revalidateLiveOnly(): void {
  for (const l of cache.values()) {
    l.stale = true;
    if (l.watchers > 0 && l.source.liveOnly) void l.refresh();
  }
}

/** Applies an optimistic change to every cached listing (rename, star, remove...). */
export function patchListings(fn: (items: Item[], listing: Listing) => Item[]): void {
  for (const l of cache.values()) l.items.value = fn(l.items.value, l);
}

/**
 * Updates every cached listing first, then asks the server. If the server refuses, each listing gets
 * its items back (or, if something else changed it meanwhile, is revalidated) and the refusal is
 * rethrown for the caller to show. Either way the listings reconcile with the server afterwards.
 */
export async function optimistic<T>(change: Change, work: () => Promise<T>): Promise<T> {
  const undo: { listing: Listing; before: Item[]; after: Item[] }[] = [];
  for (const listing of cache.values()) {
    const before = listing.items.value;
    const after = change(before, listing);
    listing.items.value = after;
    undo.push({ listing, before, after });
  }
  pending.add(change);
  try {
    return await work();
  } catch (err) {
    for (const u of undo) if (u.listing.items.value === u.after) u.listing.items.value = u.before;
    throw err;
  } finally {
    pending.delete(change);
    invalidateListings();
  }
}

/** Whether a listing shows the contents of this folder. */
export const showsFolder = (listing: Listing, folderId: string | null) =>
  typeof listing.source.view === 'object' && listing.source.view.folder === folderId;

export const folderSource = (parentId: string | null, sortBy: SortField, order: SortOrder): ListingSource => ({
  key: `folder:${parentId ?? ''}:${sortBy}:${order}`,
  view: { folder: parentId },
  load: (cursor, limit, signal) => api.files.list({ parentId: parentId ?? undefined, sortBy, order, limit, cursor }, { signal }),
});

export const collectionSource = (name: 'starred' | 'shared' | 'trash', sortBy: SortField, order: SortOrder): ListingSource => ({
  key: `${name}:${sortBy}:${order}`,
  view: name,
  liveOnly: name === 'starred',
  load: (cursor, limit, signal) => api.files.collection(name, { sortBy, order, limit, cursor }, { signal }),
});

export const sharedWithMeSource: ListingSource = { key: 'shared-with-me', view: 'sharedWithMe', liveOnly: true, load: sharedWithMePage };

export const recentSource: ListingSource = {
  key: 'recent',
  view: 'recent',
  load: async (_c, _l, signal) => ({ items: await api.files.recent(50, { signal }), nextCursor: null }),
};

/** The files whose text matched the latest search, with their snippets; the listing itself holds the name matches. */
export const textMatches = signal<{ q: string; hits: SearchHit[] }>({ q: '', hits: [] });

export const searchSource = (q: string): ListingSource => ({
  key: `search:${q}`,
  view: 'search',
  load: async (_c, _l, signal) => {
    // Names include what other accounts share with this one; content=true is ignored while content search is off.
    const hits = await api.files.searchWithContent(q, 100, { signal });
    textMatches.value = { q, hits: hits.filter((h) => h.match === 'content') };
    return { items: hits.filter((h) => h.match !== 'content'), nextCursor: null };
  },
});

/** A photo as the file actions see it (an item), with when it was taken, its size in pixels and a video's length. */
export type PhotoItem = Item & Pick<Photo, 'takenAt' | 'width' | 'height' | 'duration' | 'owner' | 'albumId'>;

const photoItem = (p: Photo): PhotoItem => ({
  ...p,
  type: 'file',
  shared: false,
  accessedAt: p.modified,
  sharedAt: null,
  expiresAt: null,
  hasThumbnail: p.hasThumbnail,
});

/** An album's photos, in the Photos order; the view acts as Photos does. Each comes through the album's door (a shared album's are another account's). */
export const albumSource = (id: string): ListingSource => ({
  key: `album:${id}`,
  view: 'photos',
  load: async (cursor, limit, signal) => {
    const page = await api.albums.get(id, { cursor, limit: Math.min(limit, 1000) }, { signal });
    // Another account's photo (the owner's in a shared album, an editor's in one's own) comes marked with whose it is:
    // only looked at and downloaded here, through the album.
    return { items: page.items.map((p) => photoItem({ ...p, albumId: id })), nextCursor: page.nextCursor };
  },
});

/** Whose photos Photos shows: the account's, what others share with it, or both. */
export type PhotosWhose = 'mine' | 'shared' | 'all';

const photosSources = new Map<PhotosWhose, ListingSource>();
/** Photos' listing for one choice of whose; each keeps its own pages. */
export function photosSource(whose: PhotosWhose): ListingSource {
  let source = photosSources.get(whose);
  if (!source) {
    source = {
      key: whose === 'mine' ? 'photos' : `photos:${whose}`,
      view: 'photos',
      liveOnly: whose !== 'mine',
      load: async (cursor, limit, signal) => {
        const page = await api.files.photos({ cursor, limit: Math.min(limit, 1000), whose }, { signal });
        return { items: page.items.map(photoItem), nextCursor: page.nextCursor };
      },
    };
    photosSources.set(whose, source);
  }
  return source;
}
