CREATE TABLE `content_docs` (
	`seq` integer PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`storage_key` text,
	`state` text NOT NULL,
	`text_bytes` integer DEFAULT 0 NOT NULL,
	`indexed_at` integer NOT NULL,
	FOREIGN KEY (`seq`) REFERENCES `items`(`seq`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `content_docs_account_idx` ON `content_docs` (`account_id`);--> statement-breakpoint
CREATE TABLE `content_pending` (
	`seq` integer PRIMARY KEY NOT NULL,
	FOREIGN KEY (`seq`) REFERENCES `items`(`seq`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
ALTER TABLE `users` ADD `content_search_opt_out` integer DEFAULT false NOT NULL;
--> statement-breakpoint
-- Hand-written below: the FTS5 table and triggers, which drizzle-kit cannot express.
-- unicode61 with remove_diacritics 2 folds accents (cafe finds café); CJK text is stored with U+200B between ideographs and kana, so each is a token and a CJK query is a phrase of them.
-- `account` holds one token naming the owner, so a query meets only its account's rows; prefix indexes of 2 and 3 characters keep short prefix queries (inv*) fast.
CREATE VIRTUAL TABLE `content_fts` USING fts5(`body`, `account`, tokenize='unicode61 remove_diacritics 2', prefix='2 3');
--> statement-breakpoint
-- No merging inside an insert (it can hold the write lock for seconds on a large index): the indexer merges a little after each document.
INSERT INTO `content_fts` (`content_fts`, `rank`) VALUES ('automerge', 0);
--> statement-breakpoint
INSERT INTO `content_fts` (`content_fts`, `rank`) VALUES ('crisismerge', 64);
--> statement-breakpoint
CREATE TRIGGER `content_pending_insert` AFTER INSERT ON `items`
WHEN new.`type` = 'file'
  AND (SELECT `value` FROM `settings` WHERE `key` = 'contentSearch') = 'true'
  AND NOT EXISTS (SELECT 1 FROM `users` WHERE `id` = new.`account_id` AND `content_search_opt_out` = 1)
BEGIN
  INSERT OR IGNORE INTO `content_pending` (`seq`) VALUES (new.`seq`);
END;
--> statement-breakpoint
CREATE TRIGGER `content_pending_update` AFTER UPDATE OF `storage_key` ON `items`
WHEN new.`type` = 'file' AND old.`storage_key` IS NOT new.`storage_key`
  AND (SELECT `value` FROM `settings` WHERE `key` = 'contentSearch') = 'true'
  AND NOT EXISTS (SELECT 1 FROM `users` WHERE `id` = new.`account_id` AND `content_search_opt_out` = 1)
BEGIN
  INSERT OR IGNORE INTO `content_pending` (`seq`) VALUES (new.`seq`);
END;
--> statement-breakpoint
CREATE TRIGGER `content_purge` AFTER DELETE ON `items` WHEN old.`type` = 'file' BEGIN
  DELETE FROM `content_fts` WHERE rowid = old.`seq`;
END;
