CREATE TABLE `tus_uploads` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`login_id` text NOT NULL,
	`storage_key` text NOT NULL,
	`length` integer NOT NULL,
	`offset` integer DEFAULT 0 NOT NULL,
	`wrapped_key` text NOT NULL,
	`key_id` text NOT NULL,
	`header` blob NOT NULL,
	`tail` blob,
	`name` text NOT NULL,
	`parent_id` text,
	`relative_path` text,
	`modified_at` integer,
	`client_id` text,
	`client_type` text,
	`state` text NOT NULL,
	`item_id` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `tus_uploads_storage_key_idx` ON `tus_uploads` (`storage_key`);--> statement-breakpoint
CREATE INDEX `tus_uploads_account_state_idx` ON `tus_uploads` (`account_id`,`state`);--> statement-breakpoint
CREATE INDEX `tus_uploads_expires_idx` ON `tus_uploads` (`expires_at`);