CREATE TABLE `changes` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`at` integer NOT NULL,
	`account_id` text NOT NULL,
	`actor_kind` text NOT NULL,
	`actor_id` text,
	`kind` text NOT NULL,
	`item_id` text NOT NULL,
	`item_type` text NOT NULL,
	`name_before` text,
	`parent_before` text,
	`name_after` text,
	`parent_after` text,
	`details` text
);
--> statement-breakpoint
CREATE INDEX `changes_account_seq` ON `changes` (`account_id`,`seq`);--> statement-breakpoint
CREATE INDEX `changes_item_seq` ON `changes` (`item_id`,`seq`);