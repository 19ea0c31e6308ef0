CREATE TABLE `thumbnails` (
	`storage_key` text PRIMARY KEY NOT NULL,
	`status` text NOT NULL,
	`small_size` integer,
	`large_size` integer,
	`width` integer,
	`height` integer,
	`taken_at` integer,
	`created_at` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `thumbnails_status_idx` ON `thumbnails` (`status`);