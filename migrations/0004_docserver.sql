CREATE TABLE `document_keys` (
	`key` text PRIMARY KEY NOT NULL,
	`item_id` text NOT NULL,
	`account_id` text NOT NULL,
	`storage_key` text NOT NULL,
	`editors` text,
	`closed_at` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`item_id`) REFERENCES `items`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `document_keys_open_idx` ON `document_keys` (`item_id`,`storage_key`) WHERE closed_at IS NULL;--> statement-breakpoint
CREATE INDEX `document_keys_item_idx` ON `document_keys` (`item_id`);--> statement-breakpoint
CREATE INDEX `document_keys_updated_idx` ON `document_keys` (`updated_at`);--> statement-breakpoint
CREATE TABLE `document_saves` (
	`key` text NOT NULL,
	`url` text NOT NULL,
	`saved_at` integer NOT NULL,
	PRIMARY KEY(`key`, `url`),
	FOREIGN KEY (`key`) REFERENCES `document_keys`(`key`) ON UPDATE no action ON DELETE cascade
);
