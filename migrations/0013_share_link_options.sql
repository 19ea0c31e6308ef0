CREATE TABLE `share_drops` (
	`item_id` text PRIMARY KEY NOT NULL,
	`link_id` text NOT NULL,
	`visit_id` text NOT NULL,
	`uploader` text,
	`ip` text,
	`created_at` integer NOT NULL,
	FOREIGN KEY (`item_id`) REFERENCES `items`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `share_drops_link_visit_idx` ON `share_drops` (`link_id`,`visit_id`,`created_at`);--> statement-breakpoint
ALTER TABLE `share_links` ADD `password_hash` text;--> statement-breakpoint
ALTER TABLE `share_links` ADD `mode` text DEFAULT 'view' NOT NULL;--> statement-breakpoint
ALTER TABLE `share_links` ADD `max_downloads` integer;--> statement-breakpoint
ALTER TABLE `share_links` ADD `downloads` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `share_links` ADD `last_used_at` integer;--> statement-breakpoint
ALTER TABLE `tus_uploads` ADD `share_link_id` text;--> statement-breakpoint
ALTER TABLE `tus_uploads` ADD `share_visit_id` text;--> statement-breakpoint
ALTER TABLE `tus_uploads` ADD `share_uploader` text;