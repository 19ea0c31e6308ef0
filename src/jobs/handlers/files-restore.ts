import { z } from 'zod';
import type { AppContext } from '../../context.ts';
import { FileEventType } from '../../services/file-events.ts';
import type { JobDefinition } from '../registry.ts';

const payload = z.object({ accountId: z.string(), loginId: z.string(), ids: z.array(z.string()).min(1) });

/** `files.restore`: restores trash entries of more than 1000 items. */
export function filesRestoreJob(ctx: AppContext): JobDefinition<typeof payload> {
  return {
    kind: 'files.restore',
    payload,
    handle(p, run) {
      ctx.services.trash.restoreTrees(p.accountId, p.loginId, p.ids, { signal: run.signal, onBatch: run.addProgress });
      const count = run.totalProgress();
      ctx.services.items.events.jobDone(p.accountId, FileEventType.restored, {
        userId: p.loginId,
        action: 'restore',
        count,
        jobId: run.job.id,
      });
      return { count };
    },
  };
}
