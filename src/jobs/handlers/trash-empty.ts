import { z } from 'zod';
import type { AppContext } from '../../context.ts';
import { FileEventType } from '../../services/file-events.ts';
import type { JobDefinition } from '../registry.ts';

const payload = z.object({ accountId: z.string(), loginId: z.string() });

/** `trash.empty`: removes every trashed item of the account. */
export function trashEmptyJob(ctx: AppContext): JobDefinition<typeof payload> {
  return {
    kind: 'trash.empty',
    payload,
    handle(p, run) {
      ctx.services.trash.emptyTrash(p.accountId, { signal: run.signal, onBatch: run.addProgress });
      const count = run.totalProgress();
      ctx.services.items.events.jobDone(p.accountId, FileEventType.permanentlyDeleted, {
        userId: p.loginId,
        action: 'empty',
        count,
        jobId: run.job.id,
      });
      return { count };
    },
  };
}
