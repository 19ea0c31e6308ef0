import type { Database } from 'bun:sqlite';
import type { CoreContext } from '../context.ts';
import type { MetricsService } from './metrics.ts';

/**
 * Audit action names. Other areas record with these constants, never with ad-hoc strings, so the
 * `audit_events_queued_total{action}` series and `coffer audit list --action` stay stable.
 */
export const AuditActions = {
  // Accounts and sessions
  signup: 'auth.signup',
  signIn: 'auth.sign_in',
  signOut: 'auth.sign_out',
  signOutAll: 'auth.sign_out_all',
  passwordChange: 'auth.password_change',
  sessionRevoke: 'session.revoke',
  sessionRevokeOthers: 'session.revoke_others',
  mfaEnable: 'mfa.enable',
  mfaDisable: 'mfa.disable',
  mfaBackupCodesRegenerate: 'mfa.backup_codes_regenerate',
  mfaReset: 'mfa.reset',
  userCreate: 'user.create',
  userPasswordReset: 'user.password_reset',
  userStorageLimit: 'user.storage_limit',
  subUserCreate: 'subuser.create',
  subUserPermissions: 'subuser.permissions_update',
  subUserDelete: 'subuser.delete',
  settingsUpdate: 'settings.update',
  accessDenied: 'access.denied',
  // Files (recorded by the files area)
  fileUpload: 'file.upload',
  fileDownload: 'file.download',
  fileMove: 'file.move',
  fileRename: 'file.rename',
  fileTrash: 'file.trash',
  fileRestore: 'file.restore',
  fileDeletePermanent: 'file.delete_permanent',
  fileCopy: 'file.copy',
  // Sharing (recorded by the sharing area)
  shareCreate: 'share.create',
  shareRemove: 'share.remove',
  shareAccess: 'share.access',
  shareDownload: 'share.download',
  // Operations
  orphansScan: 'orphans.scan',
  orphansDelete: 'orphans.delete',
  keysRotate: 'keys.rotate',
  backupCreate: 'backup.create',
  doctorFix: 'doctor.fix',
} as const;

export type AuditAction = (typeof AuditActions)[keyof typeof AuditActions];
export type AuditStatus = 'success' | 'failure' | 'denied';
export type AuditActorKind = 'login' | 'anonymous' | 'cli' | 'system';
const STATUSES: readonly AuditStatus[] = ['success', 'failure', 'denied'];

/** Who acted; a request's Principal fits as it is. */
export interface AuditPrincipal {
  loginId: string;
  accountId: string;
  email?: string | null;
  ip?: string | null;
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
  /** What was acted on: `file`, `folder`, `share`, `user`, `session`, `setting`, `orphans`, `route`, … */
  targetType?: string;
  targetId?: string | null;
  /** Small JSON-serialisable facts (names, counts, reasons); never secrets or passwords. */
  details?: Record<string, unknown>;
}

/** One row of the audit log, as `coffer audit list --json` prints it. */
export interface AuditEntry {
  id: number;
  at: string;
  action: string;
  status: AuditStatus;
  actor: AuditActorKind;
  loginId: string | null;
  email: string | null;
  accountId: string | null;
  ip: string | null;
  targetType: string | null;
  targetId: string | null;
  details: Record<string, unknown> | null;
}

/** An event waiting in memory for the batch that writes it; `at` in epoch milliseconds. */
type QueuedEvent = Omit<AuditEntry, 'id' | 'at'> & { at: number };

interface LogRow {
  id: number;
  at: number;
  action: string;
  status: AuditStatus;
  actor: AuditActorKind;
  login_id: string | null;
  email: string | null;
  account_id: string | null;
  ip: string | null;
  target_type: string | null;
  target_id: string | null;
  details: string | null;
}

const BATCH = 500;
const MAX_ATTEMPTS = 5;
const PUMP_INTERVAL_MS = 1000;
// A short delay gathers the events of a burst into one batch.
const WAKE_DELAY_MS = 50;

function parseEvent(text: string): QueuedEvent {
  const e = JSON.parse(text) as QueuedEvent;
  if (typeof e !== 'object' || e === null || typeof e.action !== 'string' || !STATUSES.includes(e.status) || !Number.isFinite(e.at)) {
    throw new Error('event is missing its action, status or time');
  }
  return e;
}

/**
 * The audit trail. `record` is the one entry point for every area: it queues the event with one insert
 * and never throws into the caller. The server's worker moves queued events into the audit log in
 * batches (`start`), and the CLI flushes before reading. Events older than AUDIT_RETENTION_DAYS are purged
 * daily by the `audit.retention` job.
 */
export class AuditService {
  private readonly sqlite: Database;
  private timers: Array<ReturnType<typeof setInterval>> = [];
  private wakeScheduled = false;

  constructor(
    private readonly ctx: CoreContext,
    private readonly metrics: MetricsService,
  ) {
    this.sqlite = ctx.db.$client;
  }

  record(input: AuditRecord): void {
    const status = input.status ?? 'success';
    try {
      const p = input.principal ?? null;
      const event: QueuedEvent = {
        at: this.ctx.clock.now(),
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
      };
      this.sqlite.query('INSERT INTO audit_queue (event, queued_at) VALUES (?, ?)').run(JSON.stringify(event), event.at);
      this.metrics.auditQueued.inc({ action: input.action, status });
      this.wake();
    } catch (err) {
      this.metrics.auditFailed.inc({ reason: 'enqueue' });
      this.ctx.log.error('audit event could not be queued', {
        action: input.action,
        err: err instanceof Error ? err.message : String(err),
      });
    }
  }

  /** Moves one batch of queued events into the audit log; returns how many were taken from the queue. */
  processBatch(limit = BATCH): number {
    const started = performance.now();
    let written = 0;
    let parked = 0;
    let taken: Array<{ seq: number; event: string; attempts: number }> = [];
    try {
      this.sqlite
        .transaction(() => {
          taken = this.sqlite
            .query<{ seq: number; event: string; attempts: number }, [number]>(
              `SELECT seq, event, attempts FROM audit_queue WHERE status = 'pending' ORDER BY seq LIMIT ?`,
            )
            .all(limit);
          const insert = this.sqlite.query(
            `INSERT INTO audit_log (at, action, status, actor, login_id, email, account_id, ip, target_type, target_id, details)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
          );
          const remove = this.sqlite.query('DELETE FROM audit_queue WHERE seq = ?');
          const park = this.sqlite.query(`UPDATE audit_queue SET status = 'failed', attempts = attempts + 1, last_error = ? WHERE seq = ?`);
          for (const row of taken) {
            let e: QueuedEvent;
            try {
              e = parseEvent(row.event);
            } catch (err) {
              park.run(err instanceof Error ? err.message : String(err), row.seq);
              parked++;
              continue;
            }
            insert.run(
              e.at,
              e.action,
              e.status,
              e.actor,
              e.loginId,
              e.email,
              e.accountId,
              e.ip,
              e.targetType,
              e.targetId,
              e.details ? JSON.stringify(e.details) : null,
            );
            remove.run(row.seq);
            written++;
          }
        })
        .immediate();
    } catch (err) {
      // The whole batch rolled back: count one more attempt per event, parking those that keep failing.
      this.metrics.auditFailed.inc({ reason: 'processing' }, Math.max(1, taken.length));
      this.ctx.log.error('audit batch failed', { err: err instanceof Error ? err.message : String(err) });
      try {
        this.sqlite
          .query(
            `UPDATE audit_queue SET attempts = attempts + 1, last_error = ?1,
               status = CASE WHEN attempts + 1 >= ?2 THEN 'failed' ELSE status END
             WHERE seq IN (SELECT value FROM json_each(?3))`,
          )
          .run(err instanceof Error ? err.message : String(err), MAX_ATTEMPTS, JSON.stringify(taken.map((t) => t.seq)));
      } catch {
        // The database itself is failing; the events stay queued for the next tick.
      }
      return 0;
    }
    if (parked) this.metrics.auditFailed.inc({ reason: 'invalid_event' }, parked);
    if (written) {
      this.metrics.auditProcessed.inc({}, written);
      this.metrics.auditLastProcessed.set(this.ctx.clock.now() / 1000);
    }
    if (taken.length) this.metrics.auditProcessingDuration.observe((performance.now() - started) / 1000);
    return taken.length;
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
    const counts = { pending: 0, failed: 0 };
    for (const r of this.sqlite
      .query<{ status: 'pending' | 'failed'; n: number }, []>('SELECT status, COUNT(*) AS n FROM audit_queue GROUP BY status')
      .all()) {
      counts[r.status] = r.n;
    }
    return counts;
  }

  /** Reads the queue depths into the two gauges. */
  refreshQueueGauges(): void {
    const counts = this.queueDepths();
    this.metrics.auditQueueDepth.set(counts.pending);
    this.metrics.auditQueueFailedDepth.set(counts.failed);
  }

  /** Server only: processes events as they arrive (and every second, for events the CLI queued) and refreshes the gauges. */
  start(): void {
    if (this.timers.length) return;
    this.refreshQueueGauges();
    this.timers.push(setInterval(() => this.pump(), PUMP_INTERVAL_MS));
    this.timers.push(setInterval(() => this.guard(() => this.refreshQueueGauges()), this.ctx.config.queueMetricsIntervalSeconds * 1000));
    this.pump();
  }

  /** Stops the timers and writes what is still queued. */
  stop(): void {
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
    this.guard(() => this.flush());
  }

  /** Removes log entries older than the cutoff, in batches. */
  purgeBefore(cutoff: number, batch = 1000): number {
    let total = 0;
    for (;;) {
      const n = this.sqlite
        .query('DELETE FROM audit_log WHERE id IN (SELECT id FROM audit_log WHERE at < ? ORDER BY at LIMIT ?)')
        .run(cutoff, batch).changes;
      total += n;
      if (n < batch) return total;
    }
  }

  /** Retention: everything older than AUDIT_RETENTION_DAYS goes. */
  applyRetention(): number {
    return this.purgeBefore(this.ctx.clock.now() - this.ctx.config.auditRetentionDays * 24 * 3600_000);
  }

  /** Newest first. `action` matches exactly, or as a prefix when it names a group (`auth`, `file`). */
  list(filter: { since?: number; action?: string; user?: string; limit?: number } = {}): AuditEntry[] {
    const where: string[] = [];
    const params: Array<string | number> = [];
    if (filter.since !== undefined) {
      where.push('at >= ?');
      params.push(filter.since);
    }
    if (filter.action) {
      where.push(`(action = ? OR action LIKE ? ESCAPE '\\')`);
      params.push(filter.action, `${filter.action.replace(/[\\%_]/g, (c) => `\\${c}`)}.%`);
    }
    if (filter.user) {
      where.push('(login_id = ? OR lower(email) = lower(?))');
      params.push(filter.user, filter.user);
    }
    params.push(filter.limit ?? 100);
    const rows = this.sqlite
      .query<LogRow, Array<string | number>>(
        `SELECT * FROM audit_log ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY at DESC, id DESC LIMIT ?`,
      )
      .all(...params);
    return rows.map((r) => ({
      id: r.id,
      at: new Date(r.at).toISOString(),
      action: r.action,
      status: r.status,
      actor: r.actor,
      loginId: r.login_id,
      email: r.email,
      accountId: r.account_id,
      ip: r.ip,
      targetType: r.target_type,
      targetId: r.target_id,
      details: r.details ? (JSON.parse(r.details) as Record<string, unknown>) : null,
    }));
  }

  private pump(): void {
    this.guard(() => this.flush());
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
      this.ctx.log.error('audit processing error', { err: err instanceof Error ? err.message : String(err) });
    }
  }
}

/** Who acted, as services take it: a signed-in login (a request's Principal) or the command line. */
export type Actor = AuditPrincipal | 'cli';

/** The actor fields of an AuditRecord. */
export function actorFields(by: Actor): Pick<AuditRecord, 'principal' | 'actor'> {
  return by === 'cli' ? { actor: 'cli' } : { principal: by };
}
