import { z } from 'zod';
import type { AppContext } from '../../context.ts';
import type { JobDefinition } from '../registry.ts';

/** `audit.retention`: daily removal of audit events older than AUDIT_RETENTION_DAYS. */
export function auditRetentionJob(ctx: AppContext): JobDefinition {
  return {
    kind: 'audit.retention',
    payload: z.null(),
    handle: () => ({ count: ctx.services.audit.applyRetention() }),
  };
}
