import type { Database } from 'bun:sqlite';
import { type WebhookDeliveryStatus, webhookDeliveries, webhooks } from '../schema/webhooks.ts';
import { selectList, toBoolean } from '../select.ts';

export type WebhookRow = typeof webhooks.$inferSelect;
export type WebhookDeliveryRow = Omit<typeof webhookDeliveries.$inferSelect, 'seq'>;
export type NewWebhookDelivery = Pick<WebhookDeliveryRow, 'id' | 'webhookId' | 'messageId' | 'type' | 'body' | 'changeSeq' | 'createdAt'>;

const HOOK = selectList(webhooks, [
  'id',
  'accountId',
  'createdBy',
  'url',
  'events',
  'folderId',
  'enabled',
  'secretSealed',
  'failingSince',
  'disabledReason',
  'createdAt',
  'updatedAt',
]);
const DELIVERY = selectList(webhookDeliveries, [
  'id',
  'webhookId',
  'messageId',
  'type',
  'body',
  'changeSeq',
  'status',
  'attempts',
  'responseStatus',
  'durationMs',
  'responseExcerpt',
  'error',
  'createdAt',
  'attemptedAt',
  'nextAttemptAt',
]);

const hook = (r: WebhookRow | null): WebhookRow | null => (r ? { ...r, enabled: toBoolean(r.enabled) } : null);

/** The SQL of webhooks (`webhooks`), their delivery log (`webhook_deliveries`) and the dispatcher's cursor. */
export class WebhooksRepo {
  constructor(private readonly sqlite: Database) {}

  insert(row: WebhookRow): void {
    this.sqlite
      .query(
        `INSERT INTO webhooks (id, account_id, created_by, url, events, folder_id, enabled, secret_sealed, failing_since, disabled_reason, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        row.id,
        row.accountId,
        row.createdBy,
        row.url,
        row.events,
        row.folderId,
        row.enabled ? 1 : 0,
        row.secretSealed,
        row.failingSince,
        row.disabledReason,
        row.createdAt,
        row.updatedAt,
      );
  }

  /** A hook of the account (null: an instance hook), or null. */
  get(accountId: string | null, id: string): WebhookRow | null {
    return hook(
      this.sqlite
        .query<WebhookRow, [string, string | null]>(`SELECT ${HOOK} FROM webhooks WHERE id = ? AND account_id IS ?`)
        .get(id, accountId),
    );
  }

  byId(id: string): WebhookRow | null {
    return hook(this.sqlite.query<WebhookRow, [string]>(`SELECT ${HOOK} FROM webhooks WHERE id = ?`).get(id));
  }

  list(accountId: string | null): WebhookRow[] {
    return this.sqlite
      .query<WebhookRow, [string | null]>(`SELECT ${HOOK} FROM webhooks WHERE account_id IS ? ORDER BY created_at, id`)
      .all(accountId)
      .map((r) => hook(r)!);
  }

  /** Every hook, the instance's first (the CLI's list). */
  all(): WebhookRow[] {
    return this.sqlite
      .query<WebhookRow, []>(`SELECT ${HOOK} FROM webhooks ORDER BY account_id IS NOT NULL, account_id, created_at, id`)
      .all()
      .map((r) => hook(r)!);
  }

  /** Every enabled hook, instance and accounts alike (few: the dispatcher reads them per batch). */
  enabled(): WebhookRow[] {
    return this.sqlite
      .query<WebhookRow, []>(`SELECT ${HOOK} FROM webhooks WHERE enabled = 1`)
      .all()
      .map((r) => hook(r)!);
  }

  count(accountId: string | null): number {
    return this.sqlite.query<{ n: number }, [string | null]>('SELECT count(*) AS n FROM webhooks WHERE account_id IS ?').get(accountId)!.n;
  }

  update(
    id: string,
    fields: Partial<Pick<WebhookRow, 'url' | 'events' | 'folderId' | 'enabled' | 'secretSealed' | 'failingSince' | 'disabledReason'>>,
    at: number,
  ): void {
    const sets: string[] = ['updated_at = ?'];
    const values: Array<string | number | null> = [at];
    const column: Record<string, string> = {
      url: 'url',
      events: 'events',
      folderId: 'folder_id',
      enabled: 'enabled',
      secretSealed: 'secret_sealed',
      failingSince: 'failing_since',
      disabledReason: 'disabled_reason',
    };
    for (const [key, value] of Object.entries(fields)) {
      if (value === undefined) continue;
      sets.push(`${column[key]} = ?`);
      values.push(typeof value === 'boolean' ? (value ? 1 : 0) : value);
    }
    this.sqlite.query(`UPDATE webhooks SET ${sets.join(', ')} WHERE id = ?`).run(...values, id);
  }

  /** Marks the start of a run of failures, keeping an earlier start; null when the hook is gone. */
  markFailing(id: string, at: number): number | null {
    return (
      this.sqlite
        .query<{ since: number }, [number, string]>(
          'UPDATE webhooks SET failing_since = coalesce(failing_since, ?1) WHERE id = ?2 RETURNING failing_since AS since',
        )
        .get(at, id)?.since ?? null
    );
  }

  delete(accountId: string | null, id: string): boolean {
    return this.sqlite.query('DELETE FROM webhooks WHERE id = ? AND account_id IS ?').run(id, accountId).changes > 0;
  }

  // ---- deliveries ----

  /** Adds a delivery; false when the hook already has one for that change (the dispatcher read it before a crash). */
  insertDelivery(row: NewWebhookDelivery): boolean {
    return (
      this.sqlite
        .query(
          `INSERT INTO webhook_deliveries (id, webhook_id, message_id, type, body, change_seq, created_at)
           VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (webhook_id, change_seq) DO NOTHING`,
        )
        .run(row.id, row.webhookId, row.messageId, row.type, row.body, row.changeSeq, row.createdAt).changes > 0
    );
  }

  /** Deletes a hook's finished deliveries beyond its newest `keep`; a pending one stays until it is sent (its job reads it). */
  trimDeliveries(webhookId: string, keep: number): number {
    return this.sqlite
      .query(
        `DELETE FROM webhook_deliveries WHERE webhook_id = ?1 AND status <> 'pending' AND seq < (
           SELECT min(seq) FROM (SELECT seq FROM webhook_deliveries WHERE webhook_id = ?1 ORDER BY seq DESC LIMIT ?2))`,
      )
      .run(webhookId, keep).changes;
  }

  /** A hook's deliveries waiting to be sent, counted up to `limit`. */
  pendingDeliveries(webhookId: string, limit: number): number {
    return this.sqlite
      .query<{ n: number }, [string, number]>(
        `SELECT count(*) AS n FROM (SELECT 1 FROM webhook_deliveries WHERE webhook_id = ? AND status = 'pending' LIMIT ?)`,
      )
      .get(webhookId, limit)!.n;
  }

  /** One pending delivery failed at once, never attempted (refused before it was queued). */
  failDelivery(id: string, error: string, at: number): void {
    this.sqlite
      .query(`UPDATE webhook_deliveries SET status = 'failed', error = ?, attempted_at = ? WHERE id = ? AND status = 'pending'`)
      .run(error, at, id);
  }

  delivery(id: string): WebhookDeliveryRow | null {
    return this.sqlite.query<WebhookDeliveryRow, [string]>(`SELECT ${DELIVERY} FROM webhook_deliveries WHERE id = ?`).get(id);
  }

  /** A hook's deliveries, newest first. */
  deliveries(webhookId: string, limit: number): WebhookDeliveryRow[] {
    return this.sqlite
      .query<WebhookDeliveryRow, [string, number]>(
        `SELECT ${DELIVERY} FROM webhook_deliveries WHERE webhook_id = ? ORDER BY seq DESC LIMIT ?`,
      )
      .all(webhookId, limit);
  }

  recordAttempt(
    id: string,
    a: {
      status: WebhookDeliveryStatus;
      responseStatus: number | null;
      durationMs: number;
      responseExcerpt: string | null;
      error: string | null;
      at: number;
      nextAttemptAt: number | null;
    },
  ): void {
    this.sqlite
      .query(
        `UPDATE webhook_deliveries SET status = ?, attempts = attempts + 1, response_status = ?, duration_ms = ?, response_excerpt = ?,
           error = ?, attempted_at = ?, next_attempt_at = ? WHERE id = ?`,
      )
      .run(a.status, a.responseStatus, a.durationMs, a.responseExcerpt, a.error, a.at, a.nextAttemptAt, id);
  }

  /** Pending deliveries of a hook are failed at once (it was disabled or deleted). */
  failPending(webhookId: string, error: string, at: number): number {
    return this.sqlite
      .query(
        `UPDATE webhook_deliveries SET status = 'failed', error = ?, next_attempt_at = NULL, attempted_at = coalesce(attempted_at, ?) WHERE webhook_id = ? AND status = 'pending'`,
      )
      .run(error, at, webhookId).changes;
  }

  // ---- the dispatcher's cursor ----

  cursor(name: string): number | null {
    return this.sqlite.query<{ seq: number }, [string]>('SELECT seq FROM webhook_cursor WHERE name = ?').get(name)?.seq ?? null;
  }

  setCursor(name: string, seq: number): void {
    this.sqlite
      .query('INSERT INTO webhook_cursor (name, seq) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET seq = excluded.seq')
      .run(name, seq);
  }
}
