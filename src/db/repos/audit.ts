import type { Database } from 'bun:sqlite';
import { auditLog } from '../schema/audit.ts';
import { deleteInBatches, selectList } from '../select.ts';
import { transactOf } from '../client.ts';

export type AuditLogRow = typeof auditLog.$inferSelect;
export type NewAuditLogRow = Omit<AuditLogRow, 'id'>;
export interface AuditFilter {
  since?: number;
  action?: string;
  user?: string;
  requestId?: string;
  status?: string;
  /** Only events after this one in the newest-first order (a page's keyset). */
  before?: { at: number; id: number };
  limit: number;
}

const LOG = selectList(auditLog, [
  'id',
  'at',
  'action',
  'status',
  'actor',
  'loginId',
  'email',
  'accountId',
  'ip',
  'targetType',
  'targetId',
  'details',
  'requestId',
]);

/** The SQL of the audit trail: events as recorded (`audit_queue`) and the log they are moved into (`audit_log`). */
export class AuditRepo {
  constructor(private readonly sqlite: Database) {}

  /** Hot: one insert per audited action, no index to update. */
  enqueue(event: string, at: number): void {
    this.sqlite.query('INSERT INTO audit_queue (event, queued_at) VALUES (?, ?)').run(event, at);
  }

  /**
   * Moves up to `limit` pending events into the log in one immediate transaction: `write` turns each
   * event into a log row, or throws to have the event parked as failed. Answers how many were taken.
   */
  moveBatch(limit: number, write: (event: string) => NewAuditLogRow): { taken: number[]; written: number; parked: number } {
    const out = { taken: [] as number[], written: 0, parked: 0 };
    // A read first: the pump's tick with nothing queued does not wait for a write lock another thread holds (the index writer's).
    if (this.sqlite.query(`SELECT 1 FROM audit_queue WHERE status = 'pending' LIMIT 1`).get() === null) return out;
    transactOf(this.sqlite).immediate(() => {
      const rows = this.sqlite
        .query<{ seq: number; event: string }, [number]>(`SELECT seq, event FROM audit_queue WHERE status = 'pending' ORDER BY seq LIMIT ?`)
        .all(limit);
      out.taken = rows.map((r) => r.seq);
      const insert = this.sqlite.query(
        `INSERT INTO audit_log (at, action, status, actor, login_id, email, account_id, ip, target_type, target_id, details, request_id)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      );
      const park = this.sqlite.query(`UPDATE audit_queue SET status = 'failed', attempts = attempts + 1, last_error = ? WHERE seq = ?`);
      for (const row of rows) {
        let e: NewAuditLogRow;
        try {
          e = write(row.event);
        } catch (err) {
          park.run(err instanceof Error ? err.message : String(err), row.seq);
          out.parked++;
          continue;
        }
        // Events queued by an older version have no request id.
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
          e.details,
          e.requestId ?? null,
        );
        out.written++;
      }
      // One statement for the batch: every pending row up to the last taken was taken, and the parked ones are no longer pending.
      if (out.written > 0) {
        this.sqlite.query(`DELETE FROM audit_queue WHERE seq <= ? AND status = 'pending'`).run(rows.at(-1)!.seq);
      }
    });
    return out;
  }

  /** The first `limit` pending events, the batch `moveBatch` takes. */
  pendingSeqs(limit: number): number[] {
    return this.sqlite
      .query<{ seq: number }, [number]>(`SELECT seq FROM audit_queue WHERE status = 'pending' ORDER BY seq LIMIT ?`)
      .all(limit)
      .map((r) => r.seq);
  }

  /** A batch that rolled back: one more attempt each, parking those out of attempts. */
  countFailedAttempt(seqs: readonly number[], error: string, maxAttempts: number): void {
    this.sqlite
      .query(
        `UPDATE audit_queue SET attempts = attempts + 1, last_error = ?1,
           status = CASE WHEN attempts + 1 >= ?2 THEN 'failed' ELSE status END
         WHERE seq IN (SELECT value FROM json_each(?3))`,
      )
      .run(error, maxAttempts, JSON.stringify(seqs));
  }

  queueDepths(): { pending: number; failed: number } {
    const counts = { pending: 0, failed: 0 };
    for (const r of this.sqlite
      .query<{ status: 'pending' | 'failed'; n: number }, []>('SELECT status, COUNT(*) AS n FROM audit_queue GROUP BY status')
      .all()) {
      counts[r.status] = r.n;
    }
    return counts;
  }

  purgeBefore(cutoff: number, batch = 1000): number {
    return deleteInBatches(
      batch,
      (limit) =>
        this.sqlite
          .query('DELETE FROM audit_log WHERE id IN (SELECT id FROM audit_log WHERE at < ? ORDER BY at LIMIT ?)')
          .run(cutoff, limit).changes,
    );
  }

  /** Newest first. `action` matches exactly, or as a prefix when it names a group (`auth`, `file`). */
  list(filter: AuditFilter): AuditLogRow[] {
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
    if (filter.requestId) {
      where.push('request_id = ?');
      params.push(filter.requestId);
    }
    if (filter.status) {
      where.push('status = ?');
      params.push(filter.status);
    }
    if (filter.before) {
      where.push('(at < ? OR (at = ? AND id < ?))');
      params.push(filter.before.at, filter.before.at, filter.before.id);
    }
    params.push(filter.limit);
    return this.sqlite
      .query<AuditLogRow, Array<string | number>>(
        `SELECT ${LOG} FROM audit_log ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY at DESC, id DESC LIMIT ?`,
      )
      .all(...params);
  }
}
