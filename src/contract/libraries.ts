import { z } from 'zod';
import { built, lazySchema } from './lazy-schema.ts';
import { EMAIL } from './accounts.ts';

/** Libraries: host folders the admin adds, shown as they are (not encrypted) in an account's My files. */

/** What the admin is told whenever a library is added: the files are not protected by Coffer's encryption. */
export const LIBRARY_NOT_ENCRYPTED =
  'Files in a library stay in their host folder as they are: Coffer does not encrypt them, and anyone with access to the host can read them.';
export const LIBRARY_READ_ONLY = 'This library is read-only';

export const libraryBody = lazySchema(() =>
  z.object({
    path: z.string({ error: 'path is required' }).min(1, 'path is required').max(4096, 'path must be at most 4096 characters'),
    name: z.string({ error: 'name is required' }).trim().min(1, 'name is required').max(255, 'name must be at most 255 characters'),
    owner: built(EMAIL),
    readOnly: z.boolean({ error: 'readOnly must be true or false' }).optional(),
    group: z.string({ error: 'group must be a group name or id' }).min(1).max(64).optional(),
  }),
);

export interface LibraryView {
  id: string;
  name: string;
  path: string;
  folderId: string;
  ownerId: string;
  ownerEmail: string;
  readOnly: boolean;
  group: { id: string; name: string } | null;
  /** False while the host folder cannot be reached (unmounted, removed): its items are kept, shown unavailable. */
  available: boolean;
  files: number;
  folders: number;
  bytes: number;
  scannedAt: string | null;
  scanError: string | null;
  /** Set while a scan runs: the entries it has seen so far. */
  scanning: { entries: number } | null;
  createdAt: string;
}
