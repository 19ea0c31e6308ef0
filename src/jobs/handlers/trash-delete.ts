import { z } from 'zod';
import type { AppContext } from '../../context.ts';
import { FileEventType } from '../../services/file-events.ts';
import type { JobDefinition } from '../registry.ts';

const payload = z.object({ accountId: z.string(), loginId: z.string(), ids: z.array(z.string()).min(1) });

/** `trash.delete`: removes trash entries for good (rows in batches, objects queued after their rows). */
export function trashDeleteJob(ctx: AppContext): JobDefinition<typeof payload> {
  return {
    kind: 'trash.delete',
    payload,
    handle(p, run) {
      ctx.services.trash.deleteRoots(p.accountId, p.loginId, p.ids, { signal: run.signal, onBatch: run.addProgress });
      const count = run.totalProgress();
      ctx.services.items.events.jobDone(p.accountId, FileEventType.permanentlyDeleted, {
        userId: p.loginId,
        action: 'delete',
        count,
        jobId: run.job.id,
      });
      return { count };
    },
  };
}
