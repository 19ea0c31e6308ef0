CREATE TABLE `item_members` (
	`item_id` text NOT NULL,
	`owner_id` text NOT NULL,
	`account_id` text NOT NULL,
	`role` text NOT NULL,
	`added_by` text,
	`added_at` integer NOT NULL,
	FOREIGN KEY (`item_id`) REFERENCES `items`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`owner_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`account_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `item_members_item_account_idx` ON `item_members` (`item_id`,`account_id`);--> statement-breakpoint
CREATE INDEX `item_members_account_idx` ON `item_members` (`account_id`,`added_at`,`item_id`);--> statement-breakpoint
CREATE INDEX `item_members_owner_idx` ON `item_members` (`owner_id`);--> statement-breakpoint
CREATE TABLE `notifications` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`type` text NOT NULL,
	`text` text NOT NULL,
	`item_id` text,
	`created_at` integer NOT NULL,
	`read_at` integer,
	FOREIGN KEY (`account_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `notifications_account_idx` ON `notifications` (`account_id`,`created_at`,`id`);