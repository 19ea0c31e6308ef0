import { z } from 'zod';
import { built, lazySchema } from './lazy-schema.ts';
import { EMAIL } from './accounts.ts';
import { linkOptionsBody } from './sharing.ts';
import type { Photo } from './files.ts';
import { pageLimit } from './paging.ts';

/** Albums: named sets of an account's photos and videos, holding references to the files. */

export const ALBUM_NAME_MAX = 200;
const albumName = lazySchema(() =>
  z
    .string({ error: 'name is required' })
    .trim()
    .min(1, 'Give the album a name')
    .max(ALBUM_NAME_MAX, `An album name is at most ${ALBUM_NAME_MAX} characters`),
);
const albumItemIds = lazySchema(() =>
  z
    .array(z.string().min(1), { error: 'ids must be an array of file ids' })
    .min(1, 'Select at least one photo or video')
    .max(500, 'At most 500 ids per request'),
);

export const albumListQuery = lazySchema(() =>
  z.object({
    limit: pageLimit(200).default(100),
    cursor: z.string().min(1).optional(),
    // mine: the account's own albums; shared: albums other accounts share with it.
    whose: z.enum(['mine', 'shared'], { error: 'whose must be mine or shared' }).default('mine'),
  }),
);
export const albumItemsQuery = lazySchema(() =>
  z.object({
    limit: pageLimit(1000).default(200),
    cursor: z.string().min(1).optional(),
  }),
);
export const newAlbumBody = lazySchema(() => z.object({ name: built(albumName), ids: albumItemIds.optional() }));
export const albumPatchBody = lazySchema(() =>
  z.object({
    name: albumName.optional(),
    // A file in the album, or null for the newest one.
    coverItemId: z.string().min(1).nullable().optional(),
  }),
);
export const albumItemsBody = lazySchema(() => z.object({ ids: built(albumItemIds) }));
/** A person to share an album with: by email or by account id (a suggestion picked), and a role. */
export const albumMemberBody = lazySchema(() =>
  z
    .object({
      email: EMAIL.optional(),
      accountId: z.string().min(1, 'accountId is required').max(64).optional(),
      role: z.enum(['viewer', 'editor'], { error: 'role must be viewer or editor' }),
    })
    .refine((b) => (b.email === undefined) !== (b.accountId === undefined), 'Send email or accountId, one of the two'),
);

/** The caller's part in an album: its owner, or a member with a role. */
export type AlbumRole = 'owner' | 'viewer' | 'editor';

/** An account an album is shared with. */
export interface AlbumMember {
  accountId: string;
  email: string;
  name: string;
  role: 'viewer' | 'editor';
  addedAt: string;
}

export interface Album {
  id: string;
  name: string;
  /** Live photos and videos in it (files in the trash are not counted). */
  itemCount: number;
  /** The file chosen as its cover; null when none was (the newest stands for it). */
  coverItemId: string | null;
  /** The file that stands for it: the cover, else the newest; null when it is empty. */
  coverId: string | null;
  createdAt: string;
  updatedAt: string;
  /** What the caller may do: an owner everything, an editor add and remove files, a viewer look. */
  role: AlbumRole;
  /** Whose album it is, when it is another account's. */
  owner?: { id: string; name: string };
}

export interface AlbumPage {
  album: Album;
  items: Photo[];
  nextCursor: string | null;
}

/** POST/PATCH /api/albums/:id/link: an album link's options; absent fields keep their value, null removes one. */
export const albumLinkBody = lazySchema(() =>
  z.object({
    expiry: z.enum(['7d', '30d', 'never'], { error: 'expiry must be 7d, 30d or never' }).optional(),
    // A date the owner picked; when given it wins over `expiry`.
    expiresAt: z.iso
      .datetime({ offset: true, error: 'expiresAt must be an ISO 8601 date and time, such as 2026-12-12T23:59:59Z' })
      .optional(),
    password: linkOptionsBody.shape.password,
    maxDownloads: linkOptionsBody.shape.maxDownloads,
  }),
);

/** An album's public link as its owner sees it: never the password or its hash, only whether there is one. */
export interface AlbumLinkView {
  token: string;
  url: string;
  createdAt: string;
  expiresAt: string | null;
  hasPassword: boolean;
  maxDownloads: number | null;
  downloads: number;
  lastUsedAt: string | null;
}

/** A photo or video of an album as its public link shows it: nothing of where it is kept or who starred it. */
export type PublicPhoto = Pick<Photo, 'id' | 'name' | 'takenAt' | 'width' | 'height' | 'mimeType' | 'size' | 'duration'>;
