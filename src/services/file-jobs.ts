import type { CoreContext } from '../context.ts';
import { AppError, badRequest, Messages, notFound } from '../errors.ts';
import { isUuid } from '../lib/ids.ts';
import type { Principal } from './principal.ts';

/** The job kinds a client may poll through GET /api/files/jobs/:jobId. */
export const FILE_JOB_KINDS = new Set(['files.copy', 'files.trash', 'files.restore', 'trash.delete', 'trash.empty']);

export type FileJobStatus =
  | { pending: true; body: { jobId: string; status: 'created' | 'active' } }
  | { pending: false; body: { jobId: string; status: 'completed'; result: { count: number; ids?: string[] } } };

/** Polling of the account's background file jobs (SPEC, COMPAT "Jobs"). */
export class FileJobService {
  constructor(private readonly ctx: CoreContext) {}

  status(principal: Principal, jobId: string): FileJobStatus {
    if (!isUuid(jobId)) throw badRequest(Messages.invalidJobId);
    if (!this.ctx.queue.available) throw new AppError(503, Messages.queueUnavailable);
    const job = this.ctx.queue.get(jobId);
    if (!job || job.accountId !== principal.accountId || !FILE_JOB_KINDS.has(job.kind)) throw notFound(Messages.jobNotFound);
    if (job.status === 'created' || job.status === 'active') return { pending: true, body: { jobId: job.id, status: job.status } };
    if (job.status === 'completed') {
      const raw = (job.result ?? {}) as { count?: number; ids?: string[] };
      const result: { count: number; ids?: string[] } = { count: raw.count ?? 0 };
      if (job.kind === 'files.copy') result.ids = raw.ids ?? [];
      return { pending: false, body: { jobId: job.id, status: 'completed', result } };
    }
    throw new AppError(500, Messages.jobFailed);
  }
}
