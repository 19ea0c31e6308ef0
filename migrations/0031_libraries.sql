CREATE TABLE `libraries` (
	`id` text PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`path` text NOT NULL,
	`account_id` text NOT NULL,
	`folder_id` text NOT NULL,
	`read_only` integer DEFAULT false NOT NULL,
	`group_id` text,
	`created_by` text,
	`created_at` integer NOT NULL,
	`scanned_at` integer,
	`scan_entries` integer DEFAULT 0 NOT NULL,
	`scan_error` text,
	`available` integer DEFAULT true NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`group_id`) REFERENCES `groups`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE UNIQUE INDEX `libraries_path_idx` ON `libraries` (`path`);--> statement-breakpoint
CREATE UNIQUE INDEX `libraries_folder_idx` ON `libraries` (`folder_id`);--> statement-breakpoint
CREATE TABLE `library_entries` (
	`item_id` text PRIMARY KEY NOT NULL,
	`library_id` text NOT NULL,
	`file_id` text NOT NULL,
	`host_modified_at` integer NOT NULL,
	`unavailable` integer DEFAULT false NOT NULL,
	FOREIGN KEY (`library_id`) REFERENCES `libraries`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `library_entries_library_idx` ON `library_entries` (`library_id`,`file_id`);--> statement-breakpoint
-- Added by hand: an item removed by any path (a trash purge, an account's deletion) takes its library entry with it.
CREATE TRIGGER `items_library_entry_delete` AFTER DELETE ON `items` BEGIN DELETE FROM `library_entries` WHERE `item_id` = OLD.`id`; END;
