import { z } from 'zod';
import type { AppContext } from '../../context.ts';
import { DELETE_LIMIT, GRACE_MINUTES, ORPHANS_DELETE_JOB } from '../../services/orphans.ts';
import type { JobDefinition } from '../registry.ts';

/**
 * `orphans.delete`: removes what the admin selected after review, re-verifying each entry. Safe to run
 * again after a crash: an entry already removed is reported as skipped with its reason.
 */
const payload = z.object({
  storageKeys: z.array(z.string()).max(DELETE_LIMIT),
  fileIds: z.array(z.string()).max(DELETE_LIMIT),
  graceMinutes: z.number().int().min(GRACE_MINUTES.min).max(GRACE_MINUTES.max),
  requestedBy: z.object({ loginId: z.string(), accountId: z.string(), email: z.string().nullish(), ip: z.string().nullish() }),
});

export function orphansDeleteJob(ctx: AppContext): JobDefinition<typeof payload> {
  return {
    kind: ORPHANS_DELETE_JOB,
    payload,
    maxAttempts: 3,
    handle: ({ requestedBy, ...input }) => ctx.services.orphans.deleteOrphans(input, requestedBy),
  };
}
