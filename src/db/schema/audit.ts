import { index, integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';

export const AUDIT_QUEUE_STATUSES = ['pending', 'failed'] as const;

/**
 * Audit events as recorded: one insert per event, so recording never waits for processing. The worker
 * moves pending rows into `audit_log` in batches; a row that cannot be processed is parked as `failed`.
 * No index on status: the queue stays short and is read in seq order, and an index would cost every
 * insert another page write.
 */
export const auditQueue = sqliteTable('audit_queue', {
  seq: integer('seq').primaryKey({ autoIncrement: true }),
  // The event as JSON (QueuedEvent in services/admin/audit.ts).
  event: text('event').notNull(),
  status: text('status', { enum: AUDIT_QUEUE_STATUSES }).notNull().default('pending'),
  attempts: integer('attempts').notNull().default(0),
  lastError: text('last_error'),
  queuedAt: integer('queued_at').notNull(),
});

/** The audit log: who did what to which target, when, from where. Rows outlive the logins they name. */
export const auditLog = sqliteTable(
  'audit_log',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    // When the action happened (the time it was recorded, not processed); epoch milliseconds.
    at: integer('at').notNull(),
    action: text('action').notNull(),
    status: text('status', { enum: ['success', 'failure', 'denied'] }).notNull(),
    // `login` (a signed-in user), `anonymous` (e.g. a failed sign-in), `cli` or `system` (jobs).
    actor: text('actor').notNull(),
    loginId: text('login_id'),
    email: text('email'),
    accountId: text('account_id'),
    ip: text('ip'),
    targetType: text('target_type'),
    targetId: text('target_id'),
    details: text('details'),
    // The X-Request-Id of the request that acted (also in its access log line); null for the CLI and jobs.
    requestId: text('request_id'),
  },
  (t) => [
    index('audit_log_at_idx').on(t.at),
    index('audit_log_action_at_idx').on(t.action, t.at),
    index('audit_log_login_id_at_idx').on(t.loginId, t.at),
  ],
);

/**
 * Master key rotations. A rotation is written here after the new key is in secrets.json and marked
 * finished once every wrapped data key and sealed secret is under it; an unfinished row is resumed.
 */
export const keyRotations = sqliteTable('key_rotations', {
  id: text('id').primaryKey(),
  toKeyId: text('to_key_id').notNull(),
  startedAt: integer('started_at').notNull(),
  finishedAt: integer('finished_at'),
  itemsRewrapped: integer('items_rewrapped').notNull().default(0),
  secretsRewrapped: integer('secrets_rewrapped').notNull().default(0),
});
