import type { TeamFoldersRepo } from '../../db/repos/team-folders.ts';
import type { UsersRepo } from '../../db/repos/users.ts';
import { Jobs } from '../../jobs/catalog.ts';
import type { JobQueue } from '../../jobs/queue.ts';
import { PermanentJobError } from '../../jobs/registry.ts';
import { pollJob } from './job-status.ts';
import { type Operation, permissionFor } from '../identity/permissions.ts';
import { parsePermissions, type Principal } from '../identity/principal.ts';

/** The job kinds a client may poll through GET /api/files/jobs/:jobId. */
const FILE_JOB_KINDS = new Set<string>(
  [Jobs.filesCopy, Jobs.filesTrash, Jobs.filesRestore, Jobs.trashDelete, Jobs.trashEmpty].map((j) => j.name),
);

/** Whom a file job is for: the account whose items it changes, and the login that started it (with its own account when a member). */
export function startedBy(principal: Principal): { accountId: string; loginId: string; memberAccountId?: string } {
  const member = principal.share ? { memberAccountId: principal.share.memberAccountId } : {};
  return { accountId: principal.accountId, loginId: principal.loginId, ...member };
}

/**
 * Whether the login that queued a file job may still do what the job does when it runs: a job waits in the queue,
 * and may run after its sub-user was deleted or lost the permission, or its account stopped administering the
 * team folder it acts in. (What a member reaches inside a share is checked by the job's own service.)
 */
export class JobStarters {
  constructor(
    private readonly users: Pick<UsersRepo, 'authUser'>,
    private readonly teamFolders: Pick<TeamFoldersRepo, 'administers'>,
  ) {}

  assertStillMay(p: { accountId: string; loginId: string; memberAccountId?: string }, operation: Operation): void {
    const login = this.users.authUser(p.loginId);
    const account = login?.parentUserId ?? login?.id;
    const may =
      login !== null &&
      account !== undefined &&
      login.disabledAt === null &&
      (login.parentUserId === null || parsePermissions(login.permissions).has(permissionFor(operation))) &&
      (account === (p.memberAccountId ?? p.accountId) ||
        (p.memberAccountId === undefined && this.teamFolders.administers(account, p.accountId)));
    if (!may) throw new PermanentJobError('the login that started the job may no longer do it');
  }
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
