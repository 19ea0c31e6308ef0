import { z } from 'zod';
import { built, lazySchema } from './lazy-schema.ts';
import { EMAIL } from './accounts.ts';
import { idsBody, type Item } from './files.ts';
import { pageLimit } from './paging.ts';

/** A link's options (issue 32): an absent field keeps its value, null removes it. */
export const linkOptionsBody = lazySchema(() =>
  z.object({
    password: z
      .string({ error: 'password must be a string of 6 to 128 characters, or null to remove it' })
      .min(6, 'password must be at least 6 characters')
      .max(128, 'password must be at most 128 characters')
      .nullable()
      .optional(),
    mode: z
      .enum(['view', 'upload', 'view_upload'], { error: 'mode must be view, upload or view_upload, or null for view' })
      .nullable()
      .optional(),
    maxDownloads: z
      .number({ error: 'maxDownloads must be a whole number from 1 to 100000, or null for no limit' })
      .int('maxDownloads must be a whole number')
      .min(1, 'maxDownloads must be at least 1')
      .max(100_000, 'maxDownloads must be at most 100000')
      .nullable()
      .optional(),
  }),
);

/** Share links (docs/api.md › API reference, Sharing), with a link's options. */
export const shareBody = lazySchema(() =>
  idsBody.extend({
    shared: z.boolean({ error: 'shared must be true or false' }),
    expiry: z.enum(['7d', '30d', 'never'], { error: 'expiry must be 7d, 30d or never' }).default('7d'),
    // A date the owner picked; when given it wins over `expiry`.
    expiresAt: z.iso
      .datetime({ offset: true, error: 'expiresAt must be an ISO 8601 date and time, such as 2026-12-12T23:59:59Z' })
      .optional(),
    ...linkOptionsBody.shape,
  }),
);

/** GET /api/files/share/links: a page of the account's links, newest first; `itemId` narrows it to one item's. */
export const linkListQuery = lazySchema(() =>
  z.object({
    limit: pageLimit(200).default(50),
    cursor: z.string().min(1).optional(),
    itemId: z.string().min(1).max(64).optional(),
  }),
);

/** POST /s/<token>/unlock: the password, and where the page form was going. */
export const unlockBody = lazySchema(() =>
  z.object({
    password: z.string({ error: 'password is required' }).min(1, 'password is required').max(128, 'password is at most 128 characters'),
    next: z.string().max(2048).optional(),
  }),
);

export type Expiry = '7d' | '30d' | 'never';
/** What a request may change on a link (absent: kept, null: removed). */
export type LinkOptions = z.input<typeof linkOptionsBody>;
export type ShareMode = 'view' | 'upload' | 'view_upload';

/** Each shared item's link, by item id. */
export interface ShareLinks {
  links: Record<string, string>;
}

/** A link as its owner sees it: never the password or its hash, only whether there is one. */
export interface ShareLinkView {
  token: string;
  url: string;
  itemId: string;
  itemName: string;
  createdAt: string;
  expiresAt: string | null;
  mode: ShareMode;
  hasPassword: boolean;
  maxDownloads: number | null;
  downloads: number;
  lastUsedAt: string | null;
}

export interface ShareLinkPage {
  links: ShareLinkView[];
  nextCursor: string | null;
}

/** Sharing with people: members of an item, what is shared with an account, notifications. */
export type MemberRole = 'viewer' | 'editor';
const role = lazySchema(() => z.enum(['viewer', 'editor'], { error: 'role must be viewer or editor' }));
// A person by email or by account id (a suggestion picked), or a group by id.
export const memberBody = lazySchema(() =>
  z
    .object({
      email: EMAIL.optional(),
      accountId: z.string().min(1, 'accountId is required').max(64).optional(),
      groupId: z.string().min(1, 'groupId is required').max(64).optional(),
      role: built(role),
    })
    .refine(
      (b) => [b.email, b.accountId, b.groupId].filter((v) => v !== undefined).length === 1,
      'Send email or accountId (a person) or groupId (a group), one of them',
    ),
);
/** GET /api/people/suggestions: accounts of this instance whose name or email starts with `q`. */
export const suggestionQuery = lazySchema(() =>
  z.object({
    q: z
      .string({ error: 'q is required' })
      .trim()
      .min(2, 'Type at least 2 characters of a name or email')
      .max(100, 'q must be at most 100 characters'),
  }),
);
/** An account offered while typing a person's name; `email` only for an account owner (a sub-user sees names). */
export interface PersonSuggestion {
  accountId: string;
  name: string;
  email?: string;
}
/** The link's QR code as a PNG data URL. */
export interface ShareLinkQr {
  qrCode: string;
}
export const roleBody = lazySchema(() => z.object({ role: built(role) }));
export const peoplePageQuery = lazySchema(() =>
  z.object({
    limit: pageLimit(200).optional(),
    cursor: z.string().min(1).optional(),
  }),
);
export const notificationsReadBody = lazySchema(() =>
  z
    .object({
      ids: z
        .array(z.string().min(1), { error: 'ids must be an array of notification ids' })
        .max(500, 'At most 500 ids per request')
        .optional(),
      all: z.literal(true, { error: 'all must be true' }).optional(),
    })
    .refine((b) => b.all || (b.ids?.length ?? 0) > 0, 'Send ids (a list of notification ids) or all: true'),
);

/** A person an item is shared with. */
export interface Member {
  accountId: string;
  email: string;
  name: string;
  role: MemberRole;
  addedAt: string;
}

/** An item another account shares with this one; `teamFolder`: a team folder (its owner is the team: no email). */
export type SharedWithMeItem = Item & {
  owner: { id: string; name: string; email: string };
  role: MemberRole;
  sharedAt: string;
  teamFolder: boolean;
};

export interface NotificationEntry {
  id: string;
  type: string;
  text: string;
  itemId: string | null;
  createdAt: string;
  readAt: string | null;
}

/** A group an item is shared with: every account in it reaches the item with this role. */
export interface SharedGroup {
  groupId: string;
  name: string;
  /** Accounts in the group. */
  size: number;
  role: MemberRole;
  addedAt: string;
}
