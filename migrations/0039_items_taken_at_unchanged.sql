-- Hand-written: triggers, which drizzle-kit does not track. A new file's storage key is fresh, so its row has no
-- thumbnail and its taken_at is already NULL; the triggers now rewrite the row (and its photos index entry) only
-- when the value they set differs, instead of a second write of every inserted or re-pointed row.
DROP TRIGGER `items_taken_at_inserted`;
--> statement-breakpoint
CREATE TRIGGER `items_taken_at_inserted` AFTER INSERT ON `items`
WHEN NEW.storage_key IS NOT NULL AND NEW.taken_at IS NOT (SELECT t.taken_at FROM `thumbnails` t WHERE t.storage_key = NEW.storage_key) BEGIN
  UPDATE `items` SET `taken_at` = (SELECT t.taken_at FROM `thumbnails` t WHERE t.storage_key = NEW.storage_key) WHERE `seq` = NEW.seq;
END;
--> statement-breakpoint
DROP TRIGGER `items_taken_at_new_content`;
--> statement-breakpoint
CREATE TRIGGER `items_taken_at_new_content` AFTER UPDATE OF `storage_key` ON `items`
WHEN NEW.taken_at IS NOT (SELECT t.taken_at FROM `thumbnails` t WHERE t.storage_key = NEW.storage_key) BEGIN
  UPDATE `items` SET `taken_at` = (SELECT t.taken_at FROM `thumbnails` t WHERE t.storage_key = NEW.storage_key) WHERE `seq` = NEW.seq;
END;
