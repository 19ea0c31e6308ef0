import { z } from 'zod';
import { built, lazySchema } from './lazy-schema.ts';
import { byteCount } from './byte-count.ts';
import { EMAIL } from './accounts.ts';

/** Groups of accounts: the admin's API, a group administrator's, and completion in the share dialog. */

export const GROUP_NAME_MAX = 64;
const GROUP_DESCRIPTION_MAX = 500;

const name = lazySchema(() =>
  z
    .string({ error: 'name is required' })
    .trim()
    .min(1, 'name must be 1 to 64 characters')
    .max(GROUP_NAME_MAX, 'name must be 1 to 64 characters'),
);
const description = lazySchema(() =>
  z.string({ error: 'description must be a string' }).trim().max(GROUP_DESCRIPTION_MAX, 'description must be at most 500 characters'),
);

export const groupBody = lazySchema(() =>
  z.object({
    name: built(name),
    description: description.optional(),
    // `idp`: single sign-on sets its members from the groups claim (OIDC_GROUPS_CLAIM).
    source: z.enum(['admin', 'idp'], { error: 'source must be admin or idp' }).optional(),
  }),
);
// Bytes of quota the group's administrators may give team folders they make for it; null: they make none.
const teamFolderBytes = lazySchema(() =>
  byteCount('teamFolderBytes', 'teamFolderBytes must be a whole number of bytes, or null').nullable(),
);
export const groupPatchBody = lazySchema(() =>
  z
    .object({ name: name.optional(), description: description.optional(), teamFolderBytes: teamFolderBytes.optional() })
    .refine(
      (b) => b.name !== undefined || b.description !== undefined || b.teamFolderBytes !== undefined,
      'Send name, description or teamFolderBytes',
    ),
);
export const groupMemberBody = lazySchema(() =>
  z.object({ email: built(EMAIL), admin: z.boolean({ error: 'admin must be true or false' }).optional() }),
);
export const groupAdminBody = lazySchema(() => z.object({ admin: z.boolean({ error: 'admin must be true or false' }) }));
export const groupSearchQuery = lazySchema(() =>
  z.object({ q: z.string().max(GROUP_NAME_MAX, 'q must be at most 64 characters').optional() }),
);

/** A group as lists show it. */
export interface GroupView {
  id: string;
  name: string;
  description: string;
  /** `admin`: made here; `idp`: made by single sign-on, its memberships follow the identity provider. */
  source: 'admin' | 'idp';
  /** Bytes of quota its administrators may give team folders they make for it; null: they make none. */
  teamFolderBytes: number | null;
  /** Accounts in it. */
  size: number;
  /** Items shared with it. */
  items: number;
  createdAt: string;
}

/** An account in a group; `admin`: a group administrator, who adds and removes the group's members. */
export interface GroupMember {
  accountId: string;
  email: string;
  name: string;
  admin: boolean;
  addedAt: string;
}

export type GroupDetail = GroupView & { members: GroupMember[] };

/** A group as the share dialog completes it, and whether the caller's account is in it or administers it. */
export interface GroupChoice {
  id: string;
  name: string;
  size: number;
  member: boolean;
  admin: boolean;
  /** To its administrators: the quota they may give team folders they make for it (null: none). */
  teamFolderBytes: number | null;
}

const grants = lazySchema(() =>
  z
    .array(
      z.object({
        groupId: z.string({ error: 'groupId is required' }).min(1).max(64),
        role: z.enum(['viewer', 'editor'], { error: 'role must be viewer or editor' }),
      }),
      { error: 'groups must be a list of {groupId, role}' },
    )
    .max(100, 'At most 100 groups'),
);
const quota = lazySchema(() => byteCount('quota', 'quota must be a whole number of bytes, or null for the instance default').nullable());
export const teamFolderBody = lazySchema(() =>
  z.object({
    name: z.string({ error: 'name is required' }).min(1, 'name is required').max(200),
    groups: built(grants).default([]),
    quota: quota.default(null),
  }),
);
export const teamFolderPatchBody = lazySchema(() =>
  z
    .object({ name: z.string().min(1, 'name must not be empty').max(200).optional(), quota: quota.optional() })
    .refine((b) => b.name !== undefined || b.quota !== undefined, 'Send name or quota'),
);
export const teamFolderGroupsBody = lazySchema(() => z.object({ groups: grants }));
/** A group administrator's team folder: for its group (as editor), its quota out of the group's allowance. */
export const groupTeamFolderBody = lazySchema(() =>
  z.object({
    name: z.string({ error: 'name is required' }).min(1, 'name is required').max(200),
    quota: quota.unwrap(),
  }),
);

/** A team folder as Admin → Team folders shows it. */
export interface TeamFolderView {
  id: string;
  name: string;
  /** The folder itself: open it as /files/<folderId>. */
  folderId: string;
  /** Bytes it holds, trash and versions included. */
  size: number;
  /** Its limit in effect (its own, else the instance default); null when unlimited. */
  quota: number | null;
  /** Whether the limit is its own rather than the instance default. */
  ownQuota: boolean;
  groups: Array<{ groupId: string; name: string; size: number; role: 'viewer' | 'editor' }>;
  createdAt: string;
}

/** A team folder the account reaches, and whether it administers it (keeps its trash). */
export interface TeamFolderChoice {
  id: string;
  name: string;
  folderId: string;
  administrator: boolean;
}
