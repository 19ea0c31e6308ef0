import { index, integer, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';

export const JOB_STATUSES = ['created', 'active', 'completed', 'failed', 'cancelled'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

/** Durable background work; one row per job. Times are epoch milliseconds. */
export const jobs = sqliteTable(
  'jobs',
  {
    // Insertion order: jobs of one account run in this order.
    seq: integer('seq').primaryKey({ autoIncrement: true }),
    id: text('id').notNull(),
    kind: text('kind').notNull(),
    accountId: text('account_id'),
    payload: text('payload').notNull(),
    status: text('status', { enum: JOB_STATUSES }).notNull().default('created'),
    attempts: integer('attempts').notNull().default(0),
    maxAttempts: integer('max_attempts').notNull().default(5),
    runAt: integer('run_at').notNull(),
    result: text('result'),
    // Units of work done so far, across every run: committed with the work, so a re-run after a crash adds to it.
    progress: integer('progress').notNull().default(0),
    lastError: text('last_error'),
    idempotencyKey: text('idempotency_key'),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
    finishedAt: integer('finished_at'),
  },
  (t) => [
    uniqueIndex('jobs_id_idx').on(t.id),
    uniqueIndex('jobs_kind_idempotency_key_idx').on(t.kind, t.idempotencyKey),
    index('jobs_status_run_at_idx').on(t.status, t.runAt),
    index('jobs_account_id_status_seq_idx').on(t.accountId, t.status, t.seq),
    index('jobs_finished_at_idx').on(t.finishedAt),
  ],
);

/** Recurring work that survives restarts: when `nextRunAt` passes, one job of `kind` is enqueued. */
export const schedules = sqliteTable('schedules', {
  name: text('name').primaryKey(),
  kind: text('kind').notNull(),
  payload: text('payload').notNull(),
  accountId: text('account_id'),
  intervalMs: integer('interval_ms').notNull(),
  nextRunAt: integer('next_run_at').notNull(),
  createdAt: integer('created_at').notNull(),
});
