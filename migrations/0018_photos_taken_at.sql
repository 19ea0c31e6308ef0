ALTER TABLE `items` ADD `taken_at` integer;--> statement-breakpoint
CREATE INDEX `items_photos_idx` ON `items` (`account_id`,coalesce(taken_at, modified_at),`id`) WHERE type = 'file' AND deleted_at IS NULL;--> statement-breakpoint
UPDATE `items` SET `taken_at` = (SELECT t.taken_at FROM `thumbnails` t WHERE t.storage_key = items.storage_key)
WHERE `storage_key` IN (SELECT storage_key FROM `thumbnails` WHERE taken_at IS NOT NULL);--> statement-breakpoint
CREATE TRIGGER `items_taken_at_thumbnail` AFTER INSERT ON `thumbnails` BEGIN
  UPDATE `items` SET `taken_at` = NEW.taken_at WHERE `storage_key` = NEW.storage_key AND `taken_at` IS NOT NEW.taken_at;
END;--> statement-breakpoint
CREATE TRIGGER `items_taken_at_new_content` AFTER UPDATE OF `storage_key` ON `items` BEGIN
  UPDATE `items` SET `taken_at` = (SELECT t.taken_at FROM `thumbnails` t WHERE t.storage_key = NEW.storage_key) WHERE `seq` = NEW.seq;
END;--> statement-breakpoint
CREATE TRIGGER `items_taken_at_inserted` AFTER INSERT ON `items` WHEN NEW.storage_key IS NOT NULL BEGIN
  UPDATE `items` SET `taken_at` = (SELECT t.taken_at FROM `thumbnails` t WHERE t.storage_key = NEW.storage_key) WHERE `seq` = NEW.seq;
END;
