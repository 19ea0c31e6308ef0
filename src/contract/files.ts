import { z } from 'zod';
import { built, lazySchema } from './lazy-schema.ts';
import { pageLimit } from './paging.ts';

/** The file API's requests (docs/api.md › API reference, Upload rules) and the answers the web app reads. */

const SORT_FIELDS = ['name', 'size', 'modified', 'accessedAt', 'deletedAt'] as const;
export type SortField = (typeof SORT_FIELDS)[number];
export type SortOrder = 'asc' | 'desc';

const listQuery = (defaultSort: SortField) =>
  z.object({
    sortBy: z.enum(SORT_FIELDS).default(defaultSort).catch(defaultSort),
    order: z.enum(['asc', 'desc']).default('desc').catch('desc'),
    limit: pageLimit(500).default(200),
    cursor: z.string().min(1).optional(),
  });
// Built once: a zod schema costs more to build than a cached page costs to answer.
export const folderQuery = lazySchema(() => listQuery('modified').extend({ parentId: z.string().optional() }));
export const liveListQuery = lazySchema(() => listQuery('modified'));
export const trashQuery = lazySchema(() => listQuery('deletedAt'));
export const searchQuery = lazySchema(() =>
  z.object({
    q: z.string().optional(),
    query: z.string().optional(),
    limit: z.coerce.number().int().optional().catch(undefined),
    // Widening (docs/search.md): also match file contents, when the admin turned content search on.
    content: z.enum(['true', 'false']).optional().catch(undefined),
    // Also items inside what other accounts share with the caller's (widening: absent means own items only).
    includeShared: z.enum(['true', 'false']).optional().catch(undefined),
  }),
);
// include=people also lists items shared with people (widening: absent means links only, as before).
export const sharedQuery = lazySchema(() => liveListQuery.extend({ include: z.enum(['people']).optional().catch(undefined) }));
/** GET /api/files/events: `lastEventId` for a client that cannot send the `Last-Event-ID` header (a new EventSource). */
export const eventsQuery = lazySchema(() => z.object({ lastEventId: z.string().max(32, 'lastEventId is too long').optional() }));
export const recentQuery = lazySchema(() => z.object({ limit: z.coerce.number().int().optional().catch(undefined) }));

const idsField = lazySchema(() =>
  z
    .array(z.string().min(1), { error: 'ids must be an array of item ids' })
    .min(1, 'Select at least one item')
    .max(500, 'At most 500 ids per request'),
);

export const idsBody = lazySchema(() => z.object({ ids: built(idsField) }));
/** A selection and the folder it goes to (move, copy): null or absent is the root. */
export const placeBody = lazySchema(() => idsBody.extend({ parentId: z.string().min(1).nullable().optional() }));
const name = lazySchema(() => z.string({ error: 'name is required' }));
export const folderBody = lazySchema(() => z.object({ name: built(name), parentId: z.string().min(1).nullable().optional() }));
export const renameBody = lazySchema(() => z.object({ id: z.string({ error: 'id is required' }).min(1), name: built(name) }));
export const starBody = lazySchema(() => idsBody.extend({ starred: z.boolean({ error: 'starred must be true or false' }) }));
export const uploadCheckBody = lazySchema(() =>
  z.object({
    fileSize: z.number({ error: 'fileSize must be a number of bytes' }).int().min(0),
    // The target folder decides whose quota is checked: a folder shared with the caller spends its owner's.
    parentId: z.string().optional(),
  }),
);

export interface Item {
  id: string;
  name: string;
  type: 'file' | 'folder';
  size: number | null;
  mimeType: string | null;
  parentId: string | null;
  starred: boolean;
  shared: boolean;
  modified: string;
  accessedAt: string;
  sharedAt: string | null;
  expiresAt: string | null;
  deletedAt?: string;
  /** Files: whether the type can have a thumbnail (GET /api/files/:id/thumbnail). */
  hasThumbnail?: boolean;
  /** A video whose container says how long it plays: its running time in seconds (as in Photos). */
  duration?: number;
  /** A team folder at the top level of My files: it belongs to a team the account is in through a group. */
  teamFolder?: boolean;
  /** In a library: a host folder's file or folder, not encrypted by Coffer (the library's own folder included). */
  library?: boolean;
  /** A library item Coffer cannot read now: unreadable on the host, a symlink leading out, or its library's disk away. */
  unavailable?: boolean;
}

/** A search result: where it matched and, for a match in the text, a few words around it as HTML (null without Download). */
export type SearchHit = Item & { match?: 'name' | 'content'; snippet?: string | null };
/** The two thumbnail sizes by their long edge in pixels: grids and the lightbox. */
export const THUMBNAIL_SIZES = { small: 256, large: 1600 } as const;
export type ThumbnailSize = keyof typeof THUMBNAIL_SIZES;
export const thumbnailQuery = lazySchema(() =>
  z.object({
    size: z.enum(['small', 'large'], { error: 'size must be small or large' }).default('small'),
  }),
);

/** GET /api/files/photos: a keyset page of the account's images and videos, newest taken first. */
export const photosQuery = lazySchema(() =>
  z.object({
    limit: pageLimit(1000).default(200),
    cursor: z.string().min(1).optional(),
    // mine: the account's own; shared: what other accounts share with it (folders and albums); all: both.
    whose: z.enum(['mine', 'shared', 'all'], { error: 'whose must be mine, shared or all' }).default('mine'),
  }),
);

/** One image or video of the Photos view: `takenAt` is EXIF DateTimeOriginal when known, else the modification time. */
export interface Photo {
  id: string;
  name: string;
  takenAt: string;
  /** Upright pixels, known once its thumbnail was made (null for videos and before). */
  width: number | null;
  height: number | null;
  parentId: string | null;
  mimeType: string;
  /** As in file listings: what the web app's file actions show and act on. */
  size: number;
  modified: string;
  starred: boolean;
  /** Another account's file: whose it is. */
  owner?: { id: string; name: string };
  /** Reached only through this album shared with the caller: its thumbnail comes through the album's door. */
  albumId?: string;
  /** A video's length in seconds, when its container says (MP4, QuickTime); absent otherwise. */
  duration?: number;
  /** As in file listings: it has a thumbnail, or one can be made when asked. */
  hasThumbnail: boolean;
}

/** What rename answers: the item's id, its name as stored, type and modification time. */
export type ItemSummary = Pick<Item, 'id' | 'name' | 'type' | 'modified'>;
/** What creating a folder answers. */
export type NewFolder = ItemSummary & { type: 'folder'; size: null };

/** What a photo says of itself, read from its EXIF when its thumbnail was made; null where it says nothing. */
export interface PhotoDetails {
  takenAt: string | null;
  /** Upright pixels. */
  width: number | null;
  height: number | null;
  camera: string | null;
  lens: string | null;
  /** The GPS position in degrees (WGS 84, north and east positive). */
  location: { latitude: number; longitude: number } | null;
  /** A video's length in seconds, when its container says; absent otherwise. */
  duration?: number;
}

export interface ItemInfo {
  id: string;
  name: string;
  type: 'file' | 'folder';
  size: number | null;
  modified: string;
  accessedAt: string;
  parentId: string | null;
  mimeType?: string | null;
  shared?: boolean;
  sharedAt?: string | null;
  expiresAt?: string | null;
  folderInfo?: { totalSize: number; fileCount: number; folderCount: number };
  /** Sent by a visitor through a drop folder's link: the name they gave (if any) and when. */
  droppedBy?: { uploader: string | null; at: string };
  /** Inside an item another account shares with this one: whose it is and what this account may do. */
  sharedWithMe?: { owner: { id: string; name: string; email: string } | null; role: 'viewer' | 'editor'; rootId: string };
  /** A file with a thumbnail made: what its picture says of itself. */
  photo?: PhotoDetails;
}

export interface StorageUsage {
  used: number;
  /** The account's limit; null when unlimited. */
  total: number | null;
  /** What the limit leaves once stored files and the whole length of unfinished resumable uploads are counted. */
  free: number | null;
  /** Bytes held by file versions, included in `used`. */
  versions: number;
}

/** How a file's content was written: the source a version names. */
type VersionSource = 'upload' | 'replace' | 'webdav' | 'docserver' | 'restore';

/** An earlier content of a file (GET /api/files/:id/versions). */
export interface FileVersion {
  id: string;
  size: number;
  /** When this content was written. */
  modified: string;
  /** When it stopped being the file's content. */
  createdAt: string;
  source: VersionSource;
  /** The login that wrote it; null once that login is deleted. */
  author: { id: string; name: string; email: string } | null;
}

export interface Stats {
  totalFiles: number;
  totalFolders: number;
  sharedCount: number;
  starredCount: number;
}

export interface QueuedJob {
  message: string;
  queued: true;
  jobId: string;
}

export interface JobStatus {
  jobId: string;
  status: string;
  result?: { count: number; ids?: string[] };
}

/** One line of an NDJSON progress answer (docs/api.md › Progress streaming). */
export type ProgressLine =
  | { type: 'progress'; done: number; total: number }
  | { type: 'done'; message: string }
  | { type: 'error'; message: string };

/** A message of GET /api/files/events (docs/compatibility.md › Events). */
export interface FileEvent {
  type: string;
  timestamp?: string;
  data?: {
    id?: string;
    name?: string;
    type?: string;
    parentId?: string | null;
    starred?: boolean;
    shared?: boolean;
    action?: string;
    count?: number;
    /** `notification`: the account's unread count and what it says. */
    unread?: number;
    text?: string;
  };
}
