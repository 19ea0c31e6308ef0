import { index, integer, sqliteTable, text } from 'drizzle-orm/sqlite-core';

/** One row per backup run (scheduled or "Back up now"): what Admin → Backups, the banner and the metrics show. */
export const backupRuns = sqliteTable(
  'backup_runs',
  {
    id: text('id').primaryKey(),
    trigger: text('trigger', { enum: ['scheduled', 'manual'] }).notNull(),
    status: text('status', { enum: ['running', 'succeeded', 'failed'] }).notNull(),
    startedAt: integer('started_at').notNull(),
    finishedAt: integer('finished_at'),
    /** The archive's size once written. */
    bytes: integer('bytes'),
    /** Where it went: a file path or s3://bucket/prefix/name. */
    archive: text('archive'),
    error: text('error'),
  },
  (t) => [index('backup_runs_started').on(t.startedAt)],
);
