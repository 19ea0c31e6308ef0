import type { AppContext } from '../../context.ts';
import { filesCopyJob } from './files-copy.ts';
import { filesRestoreJob } from './files-restore.ts';
import { filesTrashJob } from './files-trash.ts';
import { jobsCleanupJob } from './jobs-cleanup.ts';
import { presenceSweepJob } from './presence-sweep.ts';
import { sessionsPurgeJob } from './sessions-purge.ts';
import { orphansScanJob } from './orphans-scan.ts';
import { orphansDeleteJob } from './orphans-delete.ts';
import { auditRetentionJob } from './audit-retention.ts';
import { sharesCleanupJob } from './shares-cleanup.ts';
import { storageDeleteJob } from './storage-delete.ts';
import { trashDeleteJob } from './trash-delete.ts';
import { trashEmptyJob } from './trash-empty.ts';
import { trashPurgeJob } from './trash-purge.ts';
import { uploadsSweepJob } from './uploads-sweep.ts';

const HOUR = 3600_000;
const DAY = 24 * HOUR;

/** Registers every job kind's handler; each area adds its own here. */
export function registerJobHandlers(ctx: AppContext): void {
  for (const def of [
    jobsCleanupJob(ctx),
    presenceSweepJob(ctx),
    sessionsPurgeJob(ctx),
    orphansScanJob(ctx),
    orphansDeleteJob(ctx),
    auditRetentionJob(ctx),
    sharesCleanupJob(ctx),
    filesCopyJob(ctx),
    filesTrashJob(ctx),
    filesRestoreJob(ctx),
    trashDeleteJob(ctx),
    trashEmptyJob(ctx),
    trashPurgeJob(ctx),
    storageDeleteJob(ctx),
    uploadsSweepJob(ctx),
  ]) {
    ctx.registry.register(def);
  }
}

/** System schedules, created (or updated) by the server at start; reserved names start with `__`. */
export function ensureSystemSchedules(ctx: AppContext): void {
  ctx.schedules.ensure('__jobs.cleanup__', { kind: 'jobs.cleanup', intervalMs: DAY });
  ctx.schedules.ensure('__presence.sweep__', { kind: 'presence.sweep', intervalMs: 10 * 60_000 });
  ctx.schedules.ensure('__sessions.purge__', { kind: 'sessions.purge', intervalMs: DAY });
  ctx.schedules.ensure('__audit.retention__', { kind: 'audit.retention', intervalMs: DAY });
  ctx.schedules.ensure('__shares.cleanup__', { kind: 'shares.cleanup', intervalMs: DAY });
  ctx.schedules.ensure('__trash.purge__', { kind: 'trash.purge', intervalMs: DAY });
  ctx.schedules.ensure('__uploads.sweep__', { kind: 'uploads.sweep', intervalMs: HOUR });
}
