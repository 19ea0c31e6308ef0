import { z } from 'zod';
import { EMAIL } from './accounts.ts';

/** Groups of accounts: the admin's API, a group administrator's, and completion in the share dialog. */

export const GROUP_NAME_MAX = 64;
const GROUP_DESCRIPTION_MAX = 500;

const name = z
  .string({ error: 'name is required' })
  .trim()
  .min(1, 'name must be 1 to 64 characters')
  .max(GROUP_NAME_MAX, 'name must be 1 to 64 characters');
const description = z
  .string({ error: 'description must be a string' })
  .trim()
  .max(GROUP_DESCRIPTION_MAX, 'description must be at most 500 characters');

export const groupBody = z.object({
  name,
  description: description.optional(),
  // `idp`: single sign-on sets its members from the groups claim (OIDC_GROUPS_CLAIM).
  source: z.enum(['admin', 'idp'], { error: 'source must be admin or idp' }).optional(),
});
export const groupPatchBody = z
  .object({ name: name.optional(), description: description.optional() })
  .refine((b) => b.name !== undefined || b.description !== undefined, 'Send name or description');
export const groupMemberBody = z.object({ email: EMAIL, admin: z.boolean({ error: 'admin must be true or false' }).optional() });
export const groupAdminBody = z.object({ admin: z.boolean({ error: 'admin must be true or false' }) });
export const groupSearchQuery = z.object({ q: z.string().max(GROUP_NAME_MAX, 'q must be at most 64 characters').optional() });

/** A group as lists show it. */
export interface GroupView {
  id: string;
  name: string;
  description: string;
  /** `admin`: made here; `idp`: made by single sign-on, its memberships follow the identity provider. */
  source: 'admin' | 'idp';
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
}
