-- Hand-written: WITHOUT ROWID, which drizzle-kit cannot express. The table is keyed by the storage key alone, so
-- without a rowid it is one b-tree instead of the table and its key's index: every upload inserts an intent in one
-- commit and deletes it in the commit of its row, and each of those commits writes one page of it to the log, not two.
CREATE TABLE `__new_upload_intents` (
	`storage_key` text PRIMARY KEY NOT NULL,
	`created_at` integer NOT NULL
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO `__new_upload_intents` (`storage_key`, `created_at`) SELECT `storage_key`, `created_at` FROM `upload_intents`;
--> statement-breakpoint
DROP TABLE `upload_intents`;
--> statement-breakpoint
ALTER TABLE `__new_upload_intents` RENAME TO `upload_intents`;
