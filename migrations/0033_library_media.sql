ALTER TABLE `libraries` ADD `wrapped_key` text;--> statement-breakpoint
ALTER TABLE `libraries` ADD `key_id` text;--> statement-breakpoint
ALTER TABLE `library_entries` ADD `content_key` text;--> statement-breakpoint
CREATE INDEX `library_entries_content_idx` ON `library_entries` (`content_key`);--> statement-breakpoint
-- Hand-written below: library files indexed before this version get their content key; triggers as for stored files (0017, 0018).
UPDATE `library_entries` SET `content_key` = lower(hex(randomblob(16)));
--> statement-breakpoint
CREATE TRIGGER `items_taken_at_library_thumbnail` AFTER INSERT ON `thumbnails` BEGIN
  UPDATE `items` SET `taken_at` = NEW.taken_at
   WHERE `id` IN (SELECT `item_id` FROM `library_entries` WHERE `content_key` = NEW.storage_key) AND `taken_at` IS NOT NEW.taken_at;
END;
--> statement-breakpoint
CREATE TRIGGER `items_taken_at_library_content` AFTER UPDATE OF `content_key` ON `library_entries` WHEN OLD.content_key IS NOT NEW.content_key BEGIN
  UPDATE `items` SET `taken_at` = (SELECT t.taken_at FROM `thumbnails` t WHERE t.storage_key = NEW.content_key) WHERE `id` = NEW.item_id;
END;
--> statement-breakpoint
CREATE TRIGGER `content_pending_library_update` AFTER UPDATE OF `content_key` ON `library_entries`
WHEN OLD.content_key IS NOT NEW.content_key
  AND (SELECT `value` FROM `settings` WHERE `key` = 'contentSearch') = 'true'
BEGIN
  INSERT OR IGNORE INTO `content_pending` (`seq`)
  SELECT i.`seq` FROM `items` i WHERE i.`id` = NEW.item_id AND i.`type` = 'file'
    AND NOT EXISTS (SELECT 1 FROM `users` u WHERE u.`id` = i.`account_id` AND u.`content_search_opt_out` = 1);
END;
