import { z } from 'zod';
import { EMAIL } from './accounts.ts';
import { idsBody, type Item } from './files.ts';

/** Share links (SPEC "Files": share, share/links, link-parent-share). */
export const shareBody = idsBody.extend({
  shared: z.boolean({ error: 'shared must be true or false' }),
  expiry: z.enum(['7d', '30d', 'never'], { error: 'expiry must be 7d, 30d or never' }).default('7d'),
});

export type Expiry = '7d' | '30d' | 'never';

/** Each shared item's link, by item id. */
export interface ShareLinks {
  links: Record<string, string>;
}

/** Sharing with people: members of an item, what is shared with an account, notifications. */
export type MemberRole = 'viewer' | 'editor';
const role = z.enum(['viewer', 'editor'], { error: 'role must be viewer or editor' });
export const memberBody = z.object({ email: EMAIL, role });
export const roleBody = z.object({ role });
export const peoplePageQuery = z.object({
  limit: z.coerce
    .number()
    .int('limit must be a whole number')
    .min(1, 'limit must be at least 1')
    .max(200, 'limit must be at most 200')
    .optional(),
  cursor: z.string().min(1).optional(),
});
export const notificationsReadBody = z
  .object({
    ids: z
      .array(z.string().min(1), { error: 'ids must be an array of notification ids' })
      .max(500, 'At most 500 ids per request')
      .optional(),
    all: z.literal(true, { error: 'all must be true' }).optional(),
  })
  .refine((b) => b.all || (b.ids?.length ?? 0) > 0, 'Send ids (a list of notification ids) or all: true');

/** A person an item is shared with. */
export interface Member {
  accountId: string;
  email: string;
  name: string;
  role: MemberRole;
  addedAt: string;
}

/** An item another account shares with this one. */
export type SharedWithMeItem = Item & { owner: { id: string; name: string; email: string }; role: MemberRole; sharedAt: string };

export interface NotificationEntry {
  id: string;
  type: string;
  text: string;
  itemId: string | null;
  createdAt: string;
  readAt: string | null;
}
