import { z } from 'zod';
import type { AppContext } from '../../context.ts';
import type { JobDefinition } from '../registry.ts';

/** `sessions.purge`: daily removal of session rows unused for 30 days. */
export function sessionsPurgeJob(ctx: AppContext): JobDefinition {
  return {
    kind: 'sessions.purge',
    payload: z.null(),
    handle: () => ({ count: ctx.services.sessions.purgeOld() }),
  };
}
