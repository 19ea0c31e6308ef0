import { z } from 'zod';
import type { AppContext } from '../../context.ts';
import type { JobDefinition } from '../registry.ts';

const payload = z.object({ keys: z.array(z.string()).min(1) });

/** `storage.delete`: deletes objects no row points at any more (queued in the transaction that dropped them). */
export function storageDeleteJob(ctx: AppContext): JobDefinition<typeof payload> {
  return {
    kind: 'storage.delete',
    payload,
    async handle(p) {
      let count = 0;
      for (const key of p.keys) if (await ctx.storage.delete(key)) count++;
      return { count };
    },
  };
}
