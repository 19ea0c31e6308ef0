CREATE TABLE `access_generation` (
	`id` integer PRIMARY KEY NOT NULL,
	`generation` integer NOT NULL
);

--> statement-breakpoint
-- Hand-written below: the one row and the triggers that move it, which drizzle-kit cannot express.
-- A new random number, not a count: a rolled-back write restores the old one, and a count would then come back to a value a cache was built at inside that transaction.
INSERT INTO `access_generation` (`id`, `generation`) VALUES (1, 0);
--> statement-breakpoint
CREATE TRIGGER `access_item_members_insert` AFTER INSERT ON `item_members` BEGIN
  UPDATE `access_generation` SET `generation` = random();
END;
--> statement-breakpoint
CREATE TRIGGER `access_item_members_update` AFTER UPDATE ON `item_members` BEGIN
  UPDATE `access_generation` SET `generation` = random();
END;
--> statement-breakpoint
CREATE TRIGGER `access_item_members_delete` AFTER DELETE ON `item_members` BEGIN
  UPDATE `access_generation` SET `generation` = random();
END;
--> statement-breakpoint
CREATE TRIGGER `access_item_groups_insert` AFTER INSERT ON `item_groups` BEGIN
  UPDATE `access_generation` SET `generation` = random();
END;
--> statement-breakpoint
CREATE TRIGGER `access_item_groups_update` AFTER UPDATE ON `item_groups` BEGIN
  UPDATE `access_generation` SET `generation` = random();
END;
--> statement-breakpoint
CREATE TRIGGER `access_item_groups_delete` AFTER DELETE ON `item_groups` BEGIN
  UPDATE `access_generation` SET `generation` = random();
END;
--> statement-breakpoint
CREATE TRIGGER `access_group_members_insert` AFTER INSERT ON `group_members` BEGIN
  UPDATE `access_generation` SET `generation` = random();
END;
--> statement-breakpoint
CREATE TRIGGER `access_group_members_update` AFTER UPDATE ON `group_members` BEGIN
  UPDATE `access_generation` SET `generation` = random();
END;
--> statement-breakpoint
CREATE TRIGGER `access_group_members_delete` AFTER DELETE ON `group_members` BEGIN
  UPDATE `access_generation` SET `generation` = random();
END;
--> statement-breakpoint
CREATE TRIGGER `access_groups_insert` AFTER INSERT ON `groups` BEGIN
  UPDATE `access_generation` SET `generation` = random();
END;
--> statement-breakpoint
CREATE TRIGGER `access_team_folders_insert` AFTER INSERT ON `team_folders` BEGIN
  UPDATE `access_generation` SET `generation` = random();
END;
--> statement-breakpoint
CREATE TRIGGER `access_groups_delete` AFTER DELETE ON `groups` BEGIN
  UPDATE `access_generation` SET `generation` = random();
END;
--> statement-breakpoint
CREATE TRIGGER `access_team_folders_delete` AFTER DELETE ON `team_folders` BEGIN
  UPDATE `access_generation` SET `generation` = random();
END;
--> statement-breakpoint
CREATE TRIGGER `access_items_move` AFTER UPDATE OF `parent_id`, `account_id` ON `items`
WHEN old.`parent_id` IS NOT new.`parent_id` OR old.`account_id` IS NOT new.`account_id` BEGIN
  UPDATE `access_generation` SET `generation` = random();
END;
--> statement-breakpoint
CREATE TRIGGER `access_items_delete` AFTER DELETE ON `items` BEGIN
  UPDATE `access_generation` SET `generation` = random();
END;
--> statement-breakpoint
CREATE TRIGGER `access_users_state` AFTER UPDATE OF `disabled_at`, `deletion_requested_at` ON `users`
WHEN old.`disabled_at` IS NOT new.`disabled_at` OR old.`deletion_requested_at` IS NOT new.`deletion_requested_at` BEGIN
  UPDATE `access_generation` SET `generation` = random();
END;
--> statement-breakpoint
CREATE TRIGGER `access_users_delete` AFTER DELETE ON `users` BEGIN
  UPDATE `access_generation` SET `generation` = random();
END;
