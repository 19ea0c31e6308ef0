import { z } from 'zod';
import type { AppContext } from '../../context.ts';
import type { JobDefinition } from '../registry.ts';

/** `uploads.sweep`: hourly, removes objects of uploads and copies that never got their row (start-up does it too). */
export function uploadsSweepJob(ctx: AppContext): JobDefinition {
  return {
    kind: 'uploads.sweep',
    payload: z.null(),
    handle: async () => ({ count: (await ctx.services.uploadIntents.sweep()).removedObjects }),
  };
}
