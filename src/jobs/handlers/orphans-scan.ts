import { z } from 'zod';
import type { AppContext } from '../../context.ts';
import { GRACE_MINUTES, ORPHANS_SCAN_JOB } from '../../services/orphans.ts';
import type { JobDefinition } from '../registry.ts';

/** `orphans.scan`: the read-only scan an admin started; its result is the report. */
const payload = z.object({ graceMinutes: z.number().int().min(GRACE_MINUTES.min).max(GRACE_MINUTES.max) });

export function orphansScanJob(ctx: AppContext): JobDefinition<typeof payload> {
  return {
    kind: ORPHANS_SCAN_JOB,
    payload,
    maxAttempts: 3,
    handle: ({ graceMinutes }, { signal }) => ctx.services.orphans.scan({ graceMinutes, signal }),
  };
}
