import type { AppContext } from '../context.ts';
import { FileEventType, type FileEventName } from '../services/files/file-events.ts';
import type { BatchRun } from '../services/files/trash.ts';
import { type JobKey, Jobs, type Payload } from '../jobs/catalog.ts';
import { type JobHandler, type JobRunContext, RetryLaterError } from '../jobs/registry.ts';
import { StorageUnavailableError } from '../storage/driver.ts';
import { runInTurns } from '../lib/steps.ts';

const HOUR = 3600_000;
const DAY = 24 * HOUR;
const KEEP_FINISHED_MS = 7 * DAY;
// How long a deletion waits before looking again whether the full backup holding it back has finished.
const BACKUP_HOLD_RETRY_MS = 30_000;
// How long a deletion waits before asking a bucket that did not answer again.
const STORAGE_AWAY_RETRY_MS = 60_000;

// How long a deletion waits in its slot for the replica to receive the commit that let its objects go (then out of it: ReplicationService.retryAfterMs).
const REPLICA_WAIT_MS = 2_000;

/**
 * Objects are deleted once the commit that let them go is at the replica destination: a replica restored or
 * promoted after a crash would otherwise hold rows (a file in the trash, the content a replace left) naming
 * objects that are gone.
 */
async function waitForReplica(ctx: AppContext, run: JobRunContext): Promise<void> {
  const replication = ctx.services.replication;
  if (replication && !(await replication.reached(run.job.id, REPLICA_WAIT_MS)))
    throw new RetryLaterError(replication.retryAfterMs(run.job.id), 'the replica destination has not received the deletion yet');
}

/** Objects a running full backup may still read are deleted once it has finished. */
function waitForBackup(ctx: AppContext): void {
  if (ctx.services.backup.objectDeletionsHeld()) throw new RetryLaterError(BACKUP_HOLD_RETRY_MS, 'a full backup is reading objects');
}

type Handlers = { [K in JobKey]: JobHandler<(typeof Jobs)[K]> };

/**
 * A file-tree job of more than 1000 items: the service does the work in batches (counted in the job's
 * progress, so a re-run after a crash reports all of it), then the account's streams hear one event.
 */
function fileTreeJob(
  ctx: AppContext,
  event: FileEventName,
  action: string,
  work: (p: Payload<'filesTrash'>, run: BatchRun) => unknown,
): JobHandler<typeof Jobs.filesTrash> {
  return (p, run) => finishTreeJob(ctx, p, run, event, action, () => work(p, { signal: run.signal, onBatch: run.addProgress }));
}

async function finishTreeJob(
  ctx: AppContext,
  p: { accountId: string; loginId: string; memberAccountId?: string },
  run: JobRunContext,
  event: FileEventName,
  action: string,
  work: () => unknown,
) {
  await work();
  const count = run.totalProgress();
  ctx.services.items.jobDone(p, event, { userId: p.loginId, action, count, jobId: run.job.id });
  return { count };
}

/** The handler of every job in the catalog (the type refuses a missing one); each calls services as the system. */
function jobHandlers(ctx: AppContext): Handlers {
  const { trash, copy, orphans, sessions, shares, audit, uploadIntents, tusUploads, chunkedUploads, docserver, scheduledBackups } =
    ctx.services;
  return {
    filesCopy: async (p, run) => {
      const result = await copy.run(run.job.id, p, run.signal);
      ctx.services.items.jobDone(p, FileEventType.copied, {
        userId: p.loginId,
        action: 'copy',
        count: result.count,
        jobId: run.job.id,
      });
      return result;
    },
    copyGuard: (p) => copy.settleCopy(p),
    filesTrash: fileTreeJob(ctx, FileEventType.deleted, 'trash', (p, b) => trash.trashJob(p, b)),
    filesRestore: fileTreeJob(ctx, FileEventType.restored, 'restore', (p, b) => trash.restoreJob(p, b)),
    trashDelete: fileTreeJob(ctx, FileEventType.permanentlyDeleted, 'delete', (p, b) => trash.deleteJob(p, b)),
    // Only what was in the trash when emptying was asked for: the job may run later (queue, restart).
    trashEmpty: (p, run) =>
      finishTreeJob(ctx, p, run, FileEventType.permanentlyDeleted, 'empty', () =>
        trash.emptyJob(p, run.job.createdAt, { signal: run.signal, onBatch: run.addProgress }),
      ),
    accountDelete: async (p, run) => ({
      ...(await ctx.services.users.purgeAccount(p.accountId, { signal: run.signal, onBatch: run.addProgress })),
      count: run.totalProgress(),
    }),
    trashPurge: async (_p, run) => {
      await runInTurns(trash.purgeExpiredSteps(ctx.config.trashRetentionDays, { signal: run.signal, onBatch: run.addProgress }));
      return { count: run.totalProgress() };
    },
    storageDelete: async (p, run) => {
      waitForBackup(ctx);
      await waitForReplica(ctx, run);
      let count = 0;
      try {
        for (const key of p.keys) {
          if (await ctx.storage.delete(key)) count++;
          await ctx.services.thumbnails.remove(key);
        }
      } catch (err) {
        // A bucket down longer than the job's attempts left every object of an emptied trash billed for good.
        if (err instanceof StorageUnavailableError && (err.status === null || err.status >= 500 || err.status === 429))
          throw new RetryLaterError(STORAGE_AWAY_RETRY_MS, err.message);
        throw err;
      }
      return { count };
    },
    uploadsSweep: async () => ({ count: (await uploadIntents.sweep()).removedObjects }),
    tusSweep: async () => {
      const swept = await tusUploads.sweep();
      const chunked = await chunkedUploads.sweep();
      return { count: swept.finished + swept.expired + swept.strays + chunked };
    },
    orphansScan: ({ graceMinutes }, { signal }) => orphans.scan({ graceMinutes, signal }),
    orphansDelete: ({ requestedBy, ...input }) => {
      waitForBackup(ctx);
      return orphans.deleteOrphans(input, requestedBy);
    },
    sessionsPurge: () => ({ count: sessions.purgeOld() }),
    sharesCleanup: () => ({ count: shares.purgeExpiredLinks() }),
    presenceSweep: () => ({ count: ctx.presence.sweep() }),
    auditRetention: () => ({ count: audit.applyRetention() }),
    changesThin: () => ({ count: ctx.services.changes.thin() }),
    jobsCleanup: () => ({ count: ctx.queue.purgeFinished(ctx.clock.now() - KEEP_FINISHED_MS) }),
    docserverForcesave: ({ key }) => docserver.forcesave(key),
    docserverCleanup: () => ({ count: docserver.purgeIdleKeys() }),
    thumbnailsSweep: async (_p, { signal }) => ({ count: await ctx.services.thumbnails.sweep(signal) }),
    thumbnailsRetry: () => {
      ctx.services.thumbnails.retryDue();
      return { count: 0 };
    },
    versionsThin: (_p, run) => ({ count: ctx.services.versions.thinAll(run.signal) }),
    backupRun: async ({ trigger }, { signal }) => ({ status: (await scheduledBackups.run(trigger, signal)).status }),
    webhookDeliver: ({ deliveryId }, { signal }) => ctx.services.webhooks.deliver(deliveryId, signal),
  };
}

/** Registers the handler of every job in the catalog. */
export function registerJobHandlers(ctx: AppContext): void {
  const handlers = jobHandlers(ctx);
  for (const key of Object.keys(Jobs) as JobKey[]) ctx.registry.register(Jobs[key], handlers[key] as JobHandler);
}

/** System schedules, created (or updated) by the server at start; reserved names start with `__`. */
export function ensureSystemSchedules(ctx: AppContext): void {
  ctx.schedules.ensure('__jobs.cleanup__', { job: Jobs.jobsCleanup, intervalMs: DAY });
  ctx.schedules.ensure('__presence.sweep__', { job: Jobs.presenceSweep, intervalMs: 10 * 60_000 });
  ctx.schedules.ensure('__sessions.purge__', { job: Jobs.sessionsPurge, intervalMs: DAY });
  ctx.schedules.ensure('__audit.retention__', { job: Jobs.auditRetention, intervalMs: DAY });
  ctx.schedules.ensure('__changes.thin__', { job: Jobs.changesThin, intervalMs: DAY });
  ctx.schedules.ensure('__shares.cleanup__', { job: Jobs.sharesCleanup, intervalMs: DAY });
  ctx.schedules.ensure('__trash.purge__', { job: Jobs.trashPurge, intervalMs: DAY });
  ctx.schedules.ensure('__uploads.sweep__', { job: Jobs.uploadsSweep, intervalMs: HOUR });
  // Resumable uploads expire TUS_EXPIRY_HOURS after their last bytes: looked for four times per expiry, at least hourly.
  const tusEvery = Math.max(1000, Math.min(HOUR, Math.floor((ctx.config.tusExpiryHours * HOUR) / 4)));
  ctx.schedules.ensure('__tus.sweep__', { job: Jobs.tusSweep, intervalMs: tusEvery });
  ctx.schedules.ensure('__docserver.cleanup__', { job: Jobs.docserverCleanup, intervalMs: DAY });
  ctx.schedules.ensure('__versions.thin__', { job: Jobs.versionsThin, intervalMs: DAY });
}
