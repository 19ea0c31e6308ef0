-- Generated, then the backfill added by hand: an item's history keyed by its row number, which new items take in
-- increasing order, instead of its random id. A row whose item is already gone keeps no number.
ALTER TABLE `changes` ADD `item_row` integer;--> statement-breakpoint
UPDATE `changes` SET `item_row` = (SELECT `seq` FROM `items` WHERE `items`.`id` = `changes`.`item_id`);--> statement-breakpoint
DROP INDEX `changes_item_seq`;--> statement-breakpoint
CREATE INDEX `changes_item_row_seq` ON `changes` (`item_row`,`seq`) WHERE item_row IS NOT NULL;
