import { z } from 'zod';
import type { AppContext } from '../../context.ts';
import type { JobDefinition } from '../registry.ts';

/** `presence.sweep`: drops expired heartbeats so the presence map stays small. */
export function presenceSweepJob(ctx: AppContext): JobDefinition {
  return {
    kind: 'presence.sweep',
    payload: z.null(),
    handle: () => ({ count: ctx.presence.sweep() }),
  };
}
