CREATE TABLE `storage_location` (
	`id` integer PRIMARY KEY NOT NULL,
	`driver` text NOT NULL,
	`bucket` text,
	`prefix` text DEFAULT '' NOT NULL,
	`recorded_at` integer NOT NULL,
	`writes_paused_at` integer
);
--> statement-breakpoint
CREATE TABLE `storage_migration_copies` (
	`target` text NOT NULL,
	`storage_key` text NOT NULL,
	`copied_at` integer NOT NULL,
	PRIMARY KEY(`target`, `storage_key`)
);
