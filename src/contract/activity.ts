import { z } from 'zod';
import { lazySchema } from './lazy-schema.ts';
import { pageLimit } from './paging.ts';

const id = (field: string) => z.string().min(1).max(100, `${field} is too long`).optional();

/** GET /api/activity: keyset pages of the change log, newest first (docs/activity.md). */
export const activityQuery = lazySchema(() =>
  z.object({
    cursor: z.string().min(1).max(1024, 'cursor is too long').optional(),
    limit: pageLimit(200).optional(),
    itemId: id('itemId'),
    folderId: id('folderId'),
    actor: id('actor'),
    kind: z.string().min(1).max(40, 'kind is too long').optional(),
  }),
);
/** One line of the Activity view: who did what to which item, when; paths as the reader sees them. */
export interface ActivityLine {
  seq: number;
  at: string;
  kind: string;
  actor: { kind: 'login' | 'link' | 'docserver' | 'system'; id: string | null; name: string };
  item: { id: string; type: 'file' | 'folder'; name: string | null; path: string | null };
  /** The folder the change happened in (where the item went; where it was, once gone): null id for the top. */
  folder: { id: string | null; path: string | null };
  before: { name: string; folderId: string | null } | null;
  after: { name: string; folderId: string | null } | null;
  details: Record<string, unknown>;
}

/** GET /api/activity/people: the Activity view's person filter, newest first (docs/activity.md). */
export const activityPeopleQuery = lazySchema(() =>
  z.object({
    limit: pageLimit(200).optional(),
  }),
);

/** A person whose changes the reader may see: a login, or a share link's visitors. */
export interface ActivityPerson {
  id: string;
  kind: 'login' | 'link';
  name: string;
  /** When their latest change the reader may see was made. */
  lastAt: string;
}

export interface ActivityPage {
  items: ActivityLine[];
  nextCursor: string | null;
}

export type ActivityQuery = z.infer<typeof activityQuery>;
