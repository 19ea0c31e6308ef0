import { z } from 'zod';
import { DELETE_LIMIT, GRACE_MINUTES } from '../contract/limits.ts';

/** A kind of job: its dotted name, the shape of its payload and how often it may be tried. */
export interface JobSpec<S extends z.ZodType = z.ZodType> {
  readonly name: string;
  readonly payload: S;
  /** Attempts before the job is failed for good (default 5). */
  readonly maxAttempts?: number;
  /**
   * Runs in this many slots of its own, beside the worker's shared ones: for a job that mostly waits on
   * another host, so a slow one never holds up the others.
   */
  readonly ownSlots?: number;
}

export type PayloadOf<J extends JobSpec> = z.infer<J['payload']>;

export function defineJob<S extends z.ZodType>(
  name: string,
  payload: S,
  opts: { maxAttempts?: number; ownSlots?: number } = {},
): JobSpec<S> {
  return { name, payload, ...opts };
}

const graceMinutes = z.number().int().min(GRACE_MINUTES.min).max(GRACE_MINUTES.max);

// memberAccountId: the starting login's own account, when it acted inside another account's share.
const starter = { accountId: z.string(), loginId: z.string(), memberAccountId: z.string().optional() };
const fileTrees = z.object({ ...starter, ids: z.array(z.string()).min(1) });
const none = z.null();

/**
 * Every job kind Coffer runs, by name, with its payload. Enqueue sites name a job from here, so the
 * payload they pass is checked against the same schema the worker validates it with; `handlers/`
 * has one handler per entry (the compiler refuses a missing one).
 */
export const Jobs = {
  // sourceAccountId: the account the copied items belong to, when a member copies across a share.
  filesCopy: defineJob('files.copy', fileTrees.extend({ parentId: z.string().nullable(), sourceAccountId: z.string().optional() })),
  // A copy made in the request (a WebDAV COPY, a move across a library's edge) under way: due only at the next
  // start-up, where it finishes or undoes what a crash cut short. restores: the destination it replaced, put back.
  copyGuard: defineJob(
    'files.copy-guard',
    z.object({
      ...starter,
      copyOf: z.string(),
      sourceId: z.string(),
      phase: z.enum(['copy', 'delete']),
      restores: z.string().optional(),
      // phase delete: the sources the copy holds (an item put into the source meanwhile stays where it is).
      sources: z.array(z.string()).optional(),
    }),
  ),
  filesTrash: defineJob('files.trash', fileTrees),
  filesRestore: defineJob('files.restore', fileTrees),
  trashDelete: defineJob('trash.delete', fileTrees),
  trashEmpty: defineJob('trash.empty', z.object(starter)),
  trashPurge: defineJob('trash.purge', none),
  accountDelete: defineJob('account.delete', z.object({ accountId: z.string() })),
  storageDelete: defineJob('storage.delete', z.object({ keys: z.array(z.string()).min(1) })),
  uploadsSweep: defineJob('uploads.sweep', none),
  tusSweep: defineJob('tus.sweep', none),
  orphansScan: defineJob('orphans.scan', z.object({ graceMinutes }), { maxAttempts: 3 }),
  orphansDelete: defineJob(
    'orphans.delete',
    z.object({
      storageKeys: z.array(z.string()).max(DELETE_LIMIT),
      fileIds: z.array(z.string()).max(DELETE_LIMIT),
      graceMinutes,
      requestedBy: z.object({ loginId: z.string(), accountId: z.string(), email: z.string().nullish(), ip: z.string().nullish() }),
    }),
    { maxAttempts: 3 },
  ),
  sessionsPurge: defineJob('sessions.purge', none),
  sharesCleanup: defineJob('shares.cleanup', none),
  presenceSweep: defineJob('presence.sweep', none),
  auditRetention: defineJob('audit.retention', none),
  changesThin: defineJob('changes.thin', none),
  jobsCleanup: defineJob('jobs.cleanup', none),
  // One per open document key, fired by its auto-save schedule; failures are retried with backoff.
  docserverForcesave: defineJob('docserver.forcesave', z.object({ key: z.string().min(1) })),
  docserverCleanup: defineJob('docserver.cleanup', none),
  // Makes the thumbnails files do not have yet, a batch per job (see ThumbnailService.sweep).
  thumbnailsSweep: defineJob('thumbnails.sweep', none),
  // Queued for when the earliest failed thumbnail is due to be tried again: it queues a sweep then.
  thumbnailsRetry: defineJob('thumbnails.retry', none),
  versionsThin: defineJob('versions.thin', none),
  // A run a restart cuts short runs again from the start (its partial archive is removed).
  backupRun: defineJob('backup.run', z.object({ trigger: z.enum(['scheduled', 'manual']) }), { maxAttempts: 3 }),
  // One attempt of one webhook delivery; the service asks for its retries (RetryLaterError), for 24 hours.
  // A receiver may take WEBHOOK_TIMEOUT_MS to answer: deliveries wait in slots of their own, not the file jobs'.
  webhookDeliver: defineJob('webhook.deliver', z.object({ deliveryId: z.string().min(1) }), { ownSlots: 4 }),
} as const;

export type JobKey = keyof typeof Jobs;
export type Payload<K extends JobKey> = PayloadOf<(typeof Jobs)[K]>;
