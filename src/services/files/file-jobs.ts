import { Jobs } from '../../jobs/catalog.ts';
import type { JobQueue } from '../../jobs/queue.ts';
import { pollJob } from './job-status.ts';
import type { Principal } from '../identity/principal.ts';

/** The job kinds a client may poll through GET /api/files/jobs/:jobId. */
const FILE_JOB_KINDS = new Set<string>(
  [Jobs.filesCopy, Jobs.filesTrash, Jobs.filesRestore, Jobs.trashDelete, Jobs.trashEmpty].map((j) => j.name),
);

/** Whom a file job is for: the account whose items it changes, and the login that started it (with its own account when a member). */
export function startedBy(principal: Principal): { accountId: string; loginId: string; memberAccountId?: string } {
  const member = principal.share ? { memberAccountId: principal.share.memberAccountId } : {};
  return { accountId: principal.accountId, loginId: principal.loginId, ...member };
}

type FileJobStatus =
  | { pending: true; body: { jobId: string; status: 'created' | 'active' } }
  | { pending: false; body: { jobId: string; status: 'completed'; result: { count: number; ids?: string[] } } };

/** Polling of background file jobs (docs/compatibility.md › Jobs): the account's, and those its login started inside a share. */
export class FileJobService {
  constructor(private readonly queue: JobQueue) {}

  status(principal: Principal, jobId: string): FileJobStatus {
    const outcome = pollJob<{ count?: number; ids?: string[] } | null>(
      this.queue,
      jobId,
      (job) =>
        FILE_JOB_KINDS.has(job.kind) &&
        (job.accountId === principal.accountId || (job.payload as { loginId?: string } | null)?.loginId === principal.loginId),
      { needsWorker: true },
    );
    if (!outcome.done) return { pending: true, body: outcome.body };
    const raw = outcome.result ?? {};
    const result: { count: number; ids?: string[] } = { count: raw.count ?? 0 };
    if (outcome.job.kind === Jobs.filesCopy.name) result.ids = raw.ids ?? [];
    return { pending: false, body: { jobId: outcome.job.id, status: 'completed', result } };
  }
}
