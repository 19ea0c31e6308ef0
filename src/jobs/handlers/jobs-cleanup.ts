import { z } from 'zod';
import type { AppContext } from '../../context.ts';
import type { JobDefinition } from '../registry.ts';

const KEEP_FINISHED_MS = 7 * 24 * 3600_000;

/** `jobs.cleanup`: removes finished jobs after a week (their results have been polled long before). */
export function jobsCleanupJob(ctx: AppContext): JobDefinition {
  return {
    kind: 'jobs.cleanup',
    payload: z.null(),
    handle: () => ({ count: ctx.queue.purgeFinished(ctx.clock.now() - KEEP_FINISHED_MS) }),
  };
}
