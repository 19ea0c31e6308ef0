import type { Clock } from '../../clock.ts';
import { AUDIT_STATUSES, type AuditActorKind, type AuditEvent, type AuditStatus } from '../../contract/admin.ts';
import { validationFailed, Messages } from '../../errors.ts';
import { decodeCursor, encodeCursor } from '../../lib/cursor.ts';
import type { AuditLogRow, AuditRepo, NewAuditLogRow } from '../../db/repos/audit.ts';
import { FailureSpell } from '../../lib/failure-spell.ts';
import { BusyRounds } from '../../db/busy.ts';
import type { Logger } from '../../log.ts';
import type { MetricsService } from './metrics.ts';

/**
 * Audit action names. Other areas record with these constants, never with ad-hoc strings, so the
 * `audit_events_queued_total{action}` series and `coffer audit list --action` stay stable.
 */
export const AuditActions = {
  // Accounts and sessions
  signup: 'auth.signup',
  signIn: 'auth.sign_in',
  passwordsLocked: 'auth.passwords_locked',
  signOut: 'auth.sign_out',
  signOutAll: 'auth.sign_out_all',
  idpLink: 'auth.idp_link',
  passwordChange: 'auth.password_change',
  sessionRevoke: 'session.revoke',
  sessionRevokeOthers: 'session.revoke_others',
  mfaEnable: 'mfa.enable',
  mfaDisable: 'mfa.disable',
  mfaBackupCodesRegenerate: 'mfa.backup_codes_regenerate',
  mfaReset: 'mfa.reset',
  mfaCodesLocked: 'mfa.codes_locked',
  passkeyAdd: 'passkey.add',
  passkeyUse: 'passkey.use',
  passkeyRemove: 'passkey.remove',
  userCreate: 'user.create',
  userInvite: 'user.invite',
  userInviteRevoke: 'user.invite_revoke',
  userInviteAccept: 'user.invite_accept',
  userPasswordReset: 'user.password_reset',
  userStorageLimit: 'user.storage_limit',
  userDisable: 'user.disable',
  userEnable: 'user.enable',
  userEmailConfirm: 'user.email_confirm',
  userDelete: 'user.delete',
  userDeleted: 'user.deleted',
  subUserCreate: 'subuser.create',
  subUserPermissions: 'subuser.permissions_update',
  subUserDelete: 'subuser.delete',
  settingsUpdate: 'settings.update',
  appPasswordCreate: 'app_password.create',
  appPasswordRevoke: 'app_password.revoke',
  accessDenied: 'access.denied',
  // Files (recorded by the files area)
  fileUpload: 'file.upload',
  fileDownload: 'file.download',
  fileMove: 'file.move',
  fileRename: 'file.rename',
  fileTrash: 'file.trash',
  fileRestore: 'file.restore',
  fileDeletePermanent: 'file.delete_permanent',
  fileTrashEmpty: 'file.trash_empty',
  fileCopy: 'file.copy',
  // Sharing (recorded by the sharing area)
  shareCreate: 'share.create',
  shareRemove: 'share.remove',
  shareAccess: 'share.access',
  shareDownload: 'share.download',
  shareUpdate: 'share.update',
  shareUnlock: 'share.unlock',
  shareUnlockFailed: 'share.unlock_failed',
  shareDrop: 'share.drop',
  memberAdd: 'share.member_add',
  memberRole: 'share.member_role',
  memberRemove: 'share.member_remove',
  groupCreate: 'group.create',
  groupUpdate: 'group.update',
  groupDelete: 'group.delete',
  groupMemberAdd: 'group.member_add',
  groupMemberRemove: 'group.member_remove',
  groupAdmin: 'group.admin',
  teamFolderCreate: 'team_folder.create',
  teamFolderUpdate: 'team_folder.update',
  teamFolderDelete: 'team_folder.delete',
  libraryAdd: 'library.add',
  libraryRemove: 'library.remove',
  // Documents edited through the document server
  documentSave: 'document.save',
  // Operations
  orphansScan: 'orphans.scan',
  orphansDelete: 'orphans.delete',
  keysRotate: 'keys.rotate',
  backupCreate: 'backup.create',
  doctorFix: 'doctor.fix',
} as const;

export type AuditAction = (typeof AuditActions)[keyof typeof AuditActions];

/** Who acted; a request's Principal fits as it is. */
export interface AuditPrincipal {
  loginId: string;
  accountId: string;
  email?: string | null;
  ip?: string | null;
  /** The request that acted, when there is one (its X-Request-Id). */
  requestId?: string | null;
}

/** A record's caller fields for a login known before it has a principal (a sign-in): its account is the parent's for a sub-user. */
export function loginFields(
  login: { id: string; parentUserId: string | null; email: string } | null | undefined,
  email: string | null = null,
): { loginId: string | null; accountId: string | null; email: string | null } {
  return { loginId: login?.id ?? null, accountId: login ? (login.parentUserId ?? login.id) : null, email: login?.email ?? email };
}

export interface AuditRecord {
  action: AuditAction;
  /** Default `success`. `denied`: refused by a permission or role check; `failure`: anything else that failed. */
  status?: AuditStatus;
  /** The signed-in login that acted (fills loginId, accountId, email and ip). */
  principal?: AuditPrincipal | null;
  /** Default: `login` with a principal, else `anonymous`. The CLI passes `cli`, job handlers `system`. */
  actor?: AuditActorKind;
  /** Without a principal (a failed sign-in): what is known of the caller. */
  loginId?: string | null;
  email?: string | null;
  accountId?: string | null;
  ip?: string | null;
  requestId?: string | null;
  /** What was acted on: `file`, `folder`, `share`, `user`, `session`, `setting`, `orphans`, `route`, … */
  targetType?: string;
  targetId?: string | null;
  /** Small JSON-serialisable facts (names, counts, reasons); never secrets or passwords. */
  details?: Record<string, unknown>;
}

/** An event waiting in memory for the batch that writes it; `at` in epoch milliseconds. */
type QueuedEvent = Omit<AuditEvent, 'id' | 'at'> & { at: number };

const BATCH = 500;
const MAX_ATTEMPTS = 5;
const PUMP_INTERVAL_MS = 1000;
// Events kept in memory while the queue's insert finds the database busy; past this many, more are dropped and counted.
const MAX_HELD = 10_000;
// A short delay gathers the events of a burst into one batch.
const WAKE_DELAY_MS = 50;

/** A queued event as a log row; throws for an event that cannot be one (it is parked). */
function toLogRow(text: string): NewAuditLogRow {
  const e = JSON.parse(text) as QueuedEvent;
  if (typeof e !== 'object' || e === null || typeof e.action !== 'string' || !AUDIT_STATUSES.includes(e.status) || !Number.isFinite(e.at)) {
    throw new Error('event is missing its action, status or time');
  }
  return { ...e, details: e.details ? JSON.stringify(e.details) : null };
}

export interface AuditDeps {
  repo: AuditRepo;
  metrics: MetricsService;
  clock: Clock;
  retentionClock: Pick<Clock, 'now'>;
  log: Logger;
  retentionDays: number;
  gaugeIntervalSeconds: number;
}

/**
 * The audit trail. `record` is the one entry point for every area: it queues the event with one insert
 * and never throws into the caller. The server moves queued events into the audit log in batches
 * (`start`), and the CLI flushes before reading. Events older than AUDIT_RETENTION_DAYS are purged
 * daily by the `audit.retention` job. Events are not job rows: a job per event measured eight times
 * the cost of this table (docs/development.md).
 */
export class AuditService {
  private timers: Array<ReturnType<typeof setInterval>> = [];
  private wakeScheduled = false;
  private readonly busy: BusyRounds;
  /** Events whose insert into the queue found the database busy, oldest first: queued before any newer one. */
  private held: Array<[event: string, at: number]> = [];
  private readonly failures: FailureSpell;

  constructor(private readonly d: AuditDeps) {
    this.busy = new BusyRounds(d.log, 'audit log');
    this.failures = new FailureSpell(d.log, 'the audit batch', () => d.clock.elapsed());
  }

  record(input: AuditRecord): void {
    const status = input.status ?? 'success';
    try {
      const p = input.principal ?? null;
      const event: QueuedEvent = {
        at: this.d.clock.now(),
        action: input.action,
        status,
        actor: input.actor ?? (p ? 'login' : 'anonymous'),
        loginId: p?.loginId ?? input.loginId ?? null,
        email: p?.email ?? input.email ?? null,
        accountId: p?.accountId ?? input.accountId ?? null,
        ip: p?.ip ?? input.ip ?? null,
        targetType: input.targetType ?? null,
        targetId: input.targetId ?? null,
        details: input.details ?? null,
        requestId: p?.requestId ?? input.requestId ?? null,
      };
      const text = JSON.stringify(event);
      if (!this.enqueueHeld() || !this.busy.run(() => (this.d.repo.enqueue(text, event.at), true), false)) {
        if (this.held.length >= MAX_HELD) throw new Error('the database has been busy too long: too many events wait in memory');
        this.held.push([text, event.at]);
      }
      this.d.metrics.auditQueued.inc({ action: input.action, status });
      this.wake();
    } catch (err) {
      this.d.metrics.auditFailed.inc({ reason: 'enqueue' });
      this.d.log.error('audit event could not be queued', { action: input.action, err: err instanceof Error ? err.message : String(err) });
    }
  }

  /** Moves one batch of queued events into the audit log; returns how many were taken from the queue. */
  processBatch(limit = BATCH): number {
    const started = performance.now();
    let batch: { taken: number[]; written: number; parked: number } | null;
    try {
      // A busy database is no failure of the events: they stay queued, their attempts unspent, for the next round.
      batch = this.enqueueHeld() ? this.busy.run(() => this.d.repo.moveBatch(limit, toLogRow), null) : null;
      if (batch === null) return 0;
    } catch (err) {
      // The whole batch rolled back: count one more attempt per event, parking those that keep failing.
      const message = err instanceof Error ? err.message : String(err);
      this.failures.failed('audit batch failed', { err: message });
      let taken = 1;
      try {
        const pending = this.d.repo.pendingSeqs(limit);
        taken = Math.max(1, pending.length);
        this.d.repo.countFailedAttempt(pending, message, MAX_ATTEMPTS);
      } catch {
        // The database itself is failing; the events stay queued for the next tick.
      }
      this.d.metrics.auditFailed.inc({ reason: 'processing' }, taken);
      return 0;
    }
    this.failures.succeeded();
    if (batch.parked) this.d.metrics.auditFailed.inc({ reason: 'invalid_event' }, batch.parked);
    if (batch.written) {
      this.d.metrics.auditProcessed.inc({}, batch.written);
      this.d.metrics.auditLastProcessed.set(this.d.clock.now() / 1000);
    }
    if (batch.taken.length) this.d.metrics.auditProcessingDuration.observe((performance.now() - started) / 1000);
    return batch.taken.length;
  }

  /** Processes until the queue is empty (tests, the CLI before reading, shutdown). */
  flush(): number {
    let total = 0;
    for (;;) {
      const n = this.processBatch();
      total += n;
      if (n < BATCH) return total;
    }
  }

  /** Events waiting to be written, and events parked after failing. */
  queueDepths(): { pending: number; failed: number } {
    return this.d.repo.queueDepths();
  }

  /** Reads the queue depths into the two gauges. */
  refreshQueueGauges(): void {
    const counts = this.queueDepths();
    this.d.metrics.auditQueueDepth.set(counts.pending);
    this.d.metrics.auditQueueFailedDepth.set(counts.failed);
  }

  /** Server only: processes events as they arrive (and every second, for events the CLI queued) and refreshes the gauges. */
  start(): void {
    if (this.timers.length) return;
    this.refreshQueueGauges();
    this.timers.push(setInterval(() => this.pump(), PUMP_INTERVAL_MS));
    this.timers.push(setInterval(() => this.guard(() => this.refreshQueueGauges()), this.d.gaugeIntervalSeconds * 1000));
    this.pump();
  }

  /** Stops the timers and writes what is still queued. */
  stop(): void {
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
    this.guard(() => this.flush());
  }

  /** Retention: everything older than AUDIT_RETENTION_DAYS goes. */
  applyRetention(): number {
    return this.d.repo.purgeBefore(this.d.retentionClock.now() - this.d.retentionDays * 24 * 3600_000);
  }

  /** Newest first. `action` matches exactly, or as a prefix when it names a group (`auth`, `file`). */
  list(filter: { since?: number; action?: string; user?: string; requestId?: string; limit?: number } = {}): AuditEvent[] {
    return this.d.repo.list({ ...filter, limit: filter.limit ?? 100 }).map(eventOf);
  }

  /**
   * A page of the log for Admin → Audit log, narrowed as `list` narrows it, from `cursor` (the first page without).
   * Events still queued are written first, so the page is current.
   */
  page(q: { limit: number; cursor?: string; action?: string; user?: string; status?: AuditStatus; since?: string }): {
    events: AuditEvent[];
    nextCursor: string | null;
  } {
    let before: { at: number; id: number } | undefined;
    if (q.cursor) {
      const values = decodeCursor(q.cursor, ['number', 'number']);
      if (!values) throw validationFailed([{ field: 'cursor', message: Messages.invalidCursor }]);
      before = { at: values[0] as number, id: values[1] as number };
    }
    this.guard(() => this.flush());
    const rows = this.d.repo.list({
      action: q.action,
      user: q.user,
      status: q.status,
      since: q.since === undefined ? undefined : Date.parse(q.since),
      before,
      limit: q.limit + 1,
    });
    const last = rows.length > q.limit ? rows[q.limit - 1] : undefined;
    return { events: rows.slice(0, q.limit).map(eventOf), nextCursor: last ? encodeCursor([last.at, last.id]) : null };
  }

  private pump(): void {
    this.guard(() => this.flush());
  }

  /** Queues the events held while the database was busy, oldest first; false when it still is. */
  private enqueueHeld(): boolean {
    while (this.held.length > 0) {
      const [event, at] = this.held[0]!;
      if (!this.busy.run(() => (this.d.repo.enqueue(event, at), true), false)) return false;
      this.held.shift();
    }
    return true;
  }

  private wake(): void {
    if (!this.timers.length || this.wakeScheduled) return;
    this.wakeScheduled = true;
    // Deferred: record() may run inside the caller's transaction, and processing must never delay it.
    setTimeout(() => {
      this.wakeScheduled = false;
      this.pump();
    }, WAKE_DELAY_MS);
  }

  private guard(fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.d.log.error('audit processing error', { err: err instanceof Error ? err.message : String(err) });
    }
  }
}

function eventOf(r: AuditLogRow): AuditEvent {
  return {
    ...r,
    status: r.status as AuditStatus,
    actor: r.actor as AuditActorKind,
    at: new Date(r.at).toISOString(),
    details: r.details ? (JSON.parse(r.details) as Record<string, unknown>) : null,
  };
}

/** Who acted, as services take it: a signed-in login (a request's Principal) or the command line. */
export type Actor = AuditPrincipal | 'cli';

/** The actor fields of an AuditRecord. */
export function actorFields(by: Actor): Pick<AuditRecord, 'principal' | 'actor'> {
  return by === 'cli' ? { actor: 'cli' } : { principal: by };
}
