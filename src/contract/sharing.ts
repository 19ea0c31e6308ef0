import { z } from 'zod';
import { idsBody } from './files.ts';

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
