-- Name search: a trigram index over items.name_key, keyed by items.seq (the rowid), kept in sync by triggers.
CREATE VIRTUAL TABLE `items_search` USING fts5(`name_key`, content='', contentless_delete=1, tokenize='trigram');
--> statement-breakpoint
INSERT INTO `items_search` (rowid, `name_key`) SELECT rowid, `name_key` FROM `items`;
--> statement-breakpoint
CREATE TRIGGER `items_search_insert` AFTER INSERT ON `items` BEGIN
  INSERT INTO `items_search` (rowid, `name_key`) VALUES (new.rowid, new.`name_key`);
END;
--> statement-breakpoint
CREATE TRIGGER `items_search_delete` AFTER DELETE ON `items` BEGIN
  DELETE FROM `items_search` WHERE rowid = old.rowid;
END;
--> statement-breakpoint
CREATE TRIGGER `items_search_rename` AFTER UPDATE OF `name_key` ON `items` WHEN old.`name_key` IS NOT new.`name_key` BEGIN
  DELETE FROM `items_search` WHERE rowid = old.rowid;
  INSERT INTO `items_search` (rowid, `name_key`) VALUES (new.rowid, new.`name_key`);
END;
