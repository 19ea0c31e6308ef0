import { z } from 'zod';

const id = (field: string) => z.string().min(1).max(100, `${field} is too long`).optional();

/** GET /api/activity: keyset pages of the change log, newest first (docs/activity.md). */
export const activityQuery = z.object({
  cursor: z.string().min(1).max(1024, 'cursor is too long').optional(),
  limit: z.coerce
    .number()
    .int('limit must be a whole number')
    .min(1, 'limit must be at least 1')
    .max(200, 'limit must be at most 200')
    .optional(),
  itemId: id('itemId'),
  folderId: id('folderId'),
  actor: id('actor'),
  kind: z.string().min(1).max(40, 'kind is too long').optional(),
});
