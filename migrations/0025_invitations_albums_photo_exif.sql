CREATE TABLE `album_items` (
	`album_id` text NOT NULL,
	`item_id` text NOT NULL,
	`added_at` integer NOT NULL,
	PRIMARY KEY(`album_id`, `item_id`),
	FOREIGN KEY (`album_id`) REFERENCES `albums`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`item_id`) REFERENCES `items`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `album_items_item_idx` ON `album_items` (`item_id`);--> statement-breakpoint
CREATE TABLE `albums` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`name` text NOT NULL,
	`cover_item_id` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`cover_item_id`) REFERENCES `items`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE INDEX `albums_account_idx` ON `albums` (`account_id`,`created_at`,`id`);--> statement-breakpoint
CREATE INDEX `albums_cover_idx` ON `albums` (`cover_item_id`);--> statement-breakpoint
CREATE TABLE `invitations` (
	`id` text PRIMARY KEY NOT NULL,
	`token_hash` text NOT NULL,
	`email` text NOT NULL,
	`email_key` text NOT NULL,
	`name` text DEFAULT '' NOT NULL,
	`storage_limit` integer,
	`created_by` text,
	`created_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	`used_at` integer,
	`user_id` text,
	FOREIGN KEY (`created_by`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE set null,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE UNIQUE INDEX `invitations_token_hash_idx` ON `invitations` (`token_hash`);--> statement-breakpoint
CREATE INDEX `invitations_email_key_idx` ON `invitations` (`email_key`);--> statement-breakpoint
ALTER TABLE `thumbnails` ADD `camera` text;--> statement-breakpoint
ALTER TABLE `thumbnails` ADD `lens` text;--> statement-breakpoint
ALTER TABLE `thumbnails` ADD `latitude` real;--> statement-breakpoint
ALTER TABLE `thumbnails` ADD `longitude` real;