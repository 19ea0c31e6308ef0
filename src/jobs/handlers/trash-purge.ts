import { z } from 'zod';
import type { AppContext } from '../../context.ts';
import type { JobDefinition } from '../registry.ts';

/** `trash.purge`: daily, removes trash older than TRASH_RETENTION_DAYS (0 = never); a missed day heals itself. */
export function trashPurgeJob(ctx: AppContext): JobDefinition {
  return {
    kind: 'trash.purge',
    payload: z.null(),
    handle(_p, run) {
      ctx.services.trash.purgeExpired(ctx.config.trashRetentionDays, { signal: run.signal, onBatch: run.addProgress });
      return { count: run.totalProgress() };
    },
  };
}
