CREATE TABLE `chunked_uploads` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text NOT NULL,
	`login_id` text NOT NULL,
	`transfer` text NOT NULL,
	`total_length` integer,
	`room_account_id` text,
	`storage_key` text,
	`wrapped_key` text,
	`key_id` text,
	`header` blob,
	`tail` blob,
	`stream_offset` integer DEFAULT 0 NOT NULL,
	`durable_offset` integer DEFAULT 0 NOT NULL,
	`last_streamed` text,
	`broken` integer DEFAULT false NOT NULL,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	`expires_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `chunked_uploads_login_transfer_idx` ON `chunked_uploads` (`login_id`,`transfer`);--> statement-breakpoint
CREATE INDEX `chunked_uploads_expires_idx` ON `chunked_uploads` (`expires_at`);--> statement-breakpoint
CREATE INDEX `chunked_uploads_room_idx` ON `chunked_uploads` (`room_account_id`);--> statement-breakpoint
CREATE TABLE `upload_chunks` (
	`upload_id` text NOT NULL,
	`name` text NOT NULL,
	`sort_key` text NOT NULL,
	`size` integer NOT NULL,
	`storage_key` text,
	`wrapped_key` text,
	`created_at` integer NOT NULL,
	PRIMARY KEY(`upload_id`, `name`),
	FOREIGN KEY (`upload_id`) REFERENCES `chunked_uploads`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `upload_chunks_storage_key_idx` ON `upload_chunks` (`storage_key`);--> statement-breakpoint
CREATE TABLE `file_checksums` (
	`item_id` text PRIMARY KEY NOT NULL,
	`storage_key` text NOT NULL,
	`sha1` text NOT NULL,
	FOREIGN KEY (`item_id`) REFERENCES `items`(`id`) ON UPDATE no action ON DELETE cascade
);
