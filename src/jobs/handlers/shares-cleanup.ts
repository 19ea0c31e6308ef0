import { z } from 'zod';
import type { AppContext } from '../../context.ts';
import type { JobDefinition } from '../registry.ts';

/** `shares.cleanup`: daily removal of share links long past their expiry. */
export function sharesCleanupJob(ctx: AppContext): JobDefinition {
  return {
    kind: 'shares.cleanup',
    payload: z.null(),
    handle: () => ({ count: ctx.services.maintenance.purgeExpiredShareLinks() }),
  };
}
