CREATE TABLE `album_links` (
	`album_id` text PRIMARY KEY NOT NULL,
	`token` text NOT NULL,
	`created_by` text NOT NULL,
	`created_at` integer NOT NULL,
	`expires_at` integer,
	`password_hash` text,
	`max_downloads` integer,
	`downloads` integer DEFAULT 0 NOT NULL,
	`last_used_at` integer,
	FOREIGN KEY (`album_id`) REFERENCES `albums`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `album_links_token_idx` ON `album_links` (`token`);