import { index, integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';
import { items } from './items.ts';

/**
 * Content search: one row per file whose text was extracted (the text itself is in the FTS5 table
 * `content_fts`, keyed by the same `seq`, written by hand in the migration). `state` says what came
 * out: `indexed` (text), `empty` (no text Coffer can read), `skipped` (too large), `failed` (malformed or hostile).
 */
export const contentDocs = sqliteTable(
  'content_docs',
  {
    seq: integer('seq')
      .primaryKey()
      .references(() => items.seq, { onDelete: 'cascade' }),
    accountId: text('account_id').notNull(),
    // The stored object the text came from: a replace or a save changes it, so the text is stale.
    storageKey: text('storage_key'),
    state: text('state', { enum: ['indexed', 'empty', 'skipped', 'failed'] }).notNull(),
    textBytes: integer('text_bytes').notNull().default(0),
    indexedAt: integer('indexed_at').notNull(),
  },
  (t) => [index('content_docs_account_idx').on(t.accountId)],
);

/** Files waiting for extraction, filled by triggers on `items` while content search is on, and by backfill. */
export const contentPending = sqliteTable('content_pending', {
  seq: integer('seq')
    .primaryKey()
    .references(() => items.seq, { onDelete: 'cascade' }),
});
