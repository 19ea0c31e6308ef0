import { z } from 'zod';
import type { AppContext } from '../../context.ts';
import { FileEventType } from '../../services/file-events.ts';
import type { JobDefinition } from '../registry.ts';

const payload = z.object({ accountId: z.string(), loginId: z.string(), ids: z.array(z.string()).min(1), parentId: z.string().nullable() });

/** `files.copy`: deep copies; a re-run returns the ids of the first run and copies nothing twice. */
export function filesCopyJob(ctx: AppContext): JobDefinition<typeof payload> {
  return {
    kind: 'files.copy',
    payload,
    async handle(p, run) {
      const result = await ctx.services.copy.run(run.job.id, p, run.signal);
      ctx.services.items.events.jobDone(p.accountId, FileEventType.copied, {
        userId: p.loginId,
        action: 'copy',
        count: result.count,
        jobId: run.job.id,
      });
      return result;
    },
  };
}
