import { integer, primaryKey, sqliteTable, text } from 'drizzle-orm/sqlite-core';

/**
 * Work on one subject (a document's extraction, a photo's thumbnail) begun and not yet finished: written before the
 * work starts, so a try that kills the process (a native decoder crash, an out-of-memory abort) still counts.
 */
export const unfinishedAttempts = sqliteTable(
  'unfinished_attempts',
  {
    purpose: text('purpose').notNull(),
    subject: text('subject').notNull(),
    attempts: integer('attempts').notNull(),
    startedAt: integer('started_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.purpose, t.subject] })],
);
