CREATE TABLE `file_versions` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`id` text NOT NULL,
	`item_id` text NOT NULL,
	`account_id` text NOT NULL,
	`size` integer NOT NULL,
	`mime_type` text,
	`storage_key` text NOT NULL,
	`wrapped_key` text NOT NULL,
	`key_id` text NOT NULL,
	`source` text NOT NULL,
	`author_id` text,
	`modified_at` integer NOT NULL,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`item_id`) REFERENCES `items`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`account_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `file_versions_id_idx` ON `file_versions` (`id`);--> statement-breakpoint
CREATE UNIQUE INDEX `file_versions_storage_key_idx` ON `file_versions` (`storage_key`);--> statement-breakpoint
CREATE INDEX `file_versions_item_idx` ON `file_versions` (`item_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `file_versions_account_idx` ON `file_versions` (`account_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `file_versions_key_id_idx` ON `file_versions` (`key_id`);--> statement-breakpoint
ALTER TABLE `items` ADD `content_source` text;--> statement-breakpoint
ALTER TABLE `items` ADD `content_author_id` text;--> statement-breakpoint
ALTER TABLE `tus_uploads` ADD `replace_id` text;