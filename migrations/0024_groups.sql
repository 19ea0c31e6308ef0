CREATE TABLE `group_members` (
	`group_id` text NOT NULL,
	`account_id` text NOT NULL,
	`is_admin` integer DEFAULT false NOT NULL,
	`added_at` integer NOT NULL,
	PRIMARY KEY(`group_id`, `account_id`),
	FOREIGN KEY (`group_id`) REFERENCES `groups`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`account_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `group_members_account_idx` ON `group_members` (`account_id`,`group_id`);--> statement-breakpoint
CREATE TABLE `groups` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`name_key` text NOT NULL,
	`description` text DEFAULT '' NOT NULL,
	`source` text DEFAULT 'admin' NOT NULL,
	`team_folder_bytes` integer,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `groups_name_key_idx` ON `groups` (`name_key`);--> statement-breakpoint
CREATE TABLE `item_groups` (
	`item_id` text NOT NULL,
	`owner_id` text NOT NULL,
	`group_id` text NOT NULL,
	`role` text NOT NULL,
	`added_by` text,
	`added_at` integer NOT NULL,
	FOREIGN KEY (`item_id`) REFERENCES `items`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`owner_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`group_id`) REFERENCES `groups`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `item_groups_item_group_idx` ON `item_groups` (`item_id`,`group_id`);--> statement-breakpoint
CREATE INDEX `item_groups_group_idx` ON `item_groups` (`group_id`,`added_at`,`item_id`,`owner_id`);--> statement-breakpoint
CREATE INDEX `item_groups_owner_idx` ON `item_groups` (`owner_id`);--> statement-breakpoint
CREATE TABLE `team_folders` (
	`account_id` text PRIMARY KEY NOT NULL,
	`folder_id` text NOT NULL,
	`group_id` text,
	`created_by` text,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`group_id`) REFERENCES `groups`(`id`) ON UPDATE no action ON DELETE set null
);
