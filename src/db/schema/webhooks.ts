import { index, integer, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { users } from './users.ts';

/**
 * Webhooks: an account's (account_id set, managed by its owner) or the instance's (account_id NULL,
 * managed by the admin). The signing secret is sealed under the instance key, so the database alone cannot sign.
 */
export const webhooks = sqliteTable(
  'webhooks',
  {
    id: text('id').primaryKey(),
    accountId: text('account_id').references(() => users.id, { onDelete: 'cascade' }),
    // The login that made it: told when the hook is disabled (an instance hook's admin).
    createdBy: text('created_by').references(() => users.id, { onDelete: 'set null' }),
    url: text('url').notNull(),
    // JSON array of event types.
    events: text('events').notNull(),
    folderId: text('folder_id'),
    enabled: integer('enabled', { mode: 'boolean' }).notNull().default(true),
    secretSealed: text('secret_sealed').notNull(),
    // Start of the current run of failed attempts; NULL after a success.
    failingSince: integer('failing_since'),
    disabledReason: text('disabled_reason'),
    createdAt: integer('created_at').notNull(),
    updatedAt: integer('updated_at').notNull(),
  },
  (t) => [index('webhooks_account_id_idx').on(t.accountId)],
);

export const WEBHOOK_DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const;
export type WebhookDeliveryStatus = (typeof WEBHOOK_DELIVERY_STATUSES)[number];

/** One message to one hook and its latest attempt; the newest 100 per hook are kept. */
export const webhookDeliveries = sqliteTable(
  'webhook_deliveries',
  {
    seq: integer('seq').primaryKey({ autoIncrement: true }),
    id: text('id').notNull(),
    webhookId: text('webhook_id')
      .notNull()
      .references(() => webhooks.id, { onDelete: 'cascade' }),
    // The Standard Webhooks message id (webhook-id): the same on every retry and redelivery.
    messageId: text('message_id').notNull(),
    type: text('type').notNull(),
    body: text('body').notNull(),
    // The change-log row it was made from; one delivery per hook and change.
    changeSeq: integer('change_seq'),
    status: text('status', { enum: WEBHOOK_DELIVERY_STATUSES }).notNull().default('pending'),
    attempts: integer('attempts').notNull().default(0),
    responseStatus: integer('response_status'),
    durationMs: integer('duration_ms'),
    responseExcerpt: text('response_excerpt'),
    error: text('error'),
    createdAt: integer('created_at').notNull(),
    attemptedAt: integer('attempted_at'),
    nextAttemptAt: integer('next_attempt_at'),
  },
  (t) => [
    uniqueIndex('webhook_deliveries_id_idx').on(t.id),
    index('webhook_deliveries_webhook_id_seq_idx').on(t.webhookId, t.seq),
    uniqueIndex('webhook_deliveries_webhook_id_change_seq_idx').on(t.webhookId, t.changeSeq),
  ],
);

/** How far the dispatcher has read the change log: one row, moved in the transaction that queues the deliveries. */
export const webhookCursor = sqliteTable('webhook_cursor', {
  name: text('name').primaryKey(),
  seq: integer('seq').notNull(),
});
