import { integer, primaryKey, sqliteTable, text } from 'drizzle-orm/sqlite-core';

/**
 * Where this installation's objects live, recorded on first start: one row. A start with another
 * driver, bucket or prefix is refused, so a typo never shows an empty drive or orphans every file.
 * `writesPausedAt` is set by `coffer storage migrate --switch` while it copies the last objects.
 */
export const storageLocation = sqliteTable('storage_location', {
  id: integer('id').primaryKey(),
  driver: text('driver', { enum: ['local', 's3'] }).notNull(),
  bucket: text('bucket'),
  prefix: text('prefix').notNull().default(''),
  recordedAt: integer('recorded_at').notNull(),
  writesPausedAt: integer('writes_paused_at'),
});

/** Objects `coffer storage migrate` has copied to `target` and verified there, so a rerun resumes after them. */
export const storageMigrationCopies = sqliteTable(
  'storage_migration_copies',
  {
    target: text('target').notNull(),
    storageKey: text('storage_key').notNull(),
    copiedAt: integer('copied_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.target, t.storageKey] })],
);
