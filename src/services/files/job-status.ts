import { AppError, badRequest, Messages, notFound } from '../../errors.ts';
import { isUuid } from '../../lib/ids.ts';
import type { Job, JobQueue } from '../../jobs/queue.ts';

/** A polled job: still waiting or running (202 with its status), or done with its stored result. */
export type JobOutcome<T> = { done: false; body: { jobId: string; status: 'created' | 'active' } } | { done: true; job: Job; result: T };

/**
 * Polling a background job a caller started: 400 for an id that is not one, 404 for a job the caller
 * may not see (`visible`), 503 while no worker serves the queue (when asked), 500 for a failed job.
 */
export function pollJob<T>(
  queue: JobQueue,
  jobId: string,
  visible: (job: Job) => boolean,
  opts: { needsWorker?: boolean } = {},
): JobOutcome<T> {
  if (!isUuid(jobId)) throw badRequest(Messages.invalidJobId);
  if (opts.needsWorker && !queue.available) throw new AppError(503, Messages.queueUnavailable);
  const job = queue.get(jobId);
  if (!job || !visible(job)) throw notFound(Messages.jobNotFound);
  if (job.status === 'created' || job.status === 'active') return { done: false, body: { jobId: job.id, status: job.status } };
  if (job.status === 'completed') return { done: true, job, result: job.result as T };
  throw new AppError(500, Messages.jobFailed);
}
