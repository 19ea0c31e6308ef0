import { z } from 'zod';
import type { AppContext } from '../../context.ts';
import { FileEventType } from '../../services/file-events.ts';
import type { JobDefinition } from '../registry.ts';

const payload = z.object({ accountId: z.string(), loginId: z.string(), ids: z.array(z.string()).min(1) });

/** `files.trash`: moves trees of more than 1000 items to the trash. */
export function filesTrashJob(ctx: AppContext): JobDefinition<typeof payload> {
  return {
    kind: 'files.trash',
    payload,
    handle(p, run) {
      ctx.services.trash.trashTrees(p.accountId, p.loginId, p.ids, { signal: run.signal, onBatch: run.addProgress });
      const count = run.totalProgress();
      ctx.services.items.events.jobDone(p.accountId, FileEventType.deleted, {
        userId: p.loginId,
        action: 'trash',
        count,
        jobId: run.job.id,
      });
      return { count };
    },
  };
}
