CREATE TABLE `backup_runs` (
	`id` text PRIMARY KEY NOT NULL,
	`trigger` text NOT NULL,
	`status` text NOT NULL,
	`started_at` integer NOT NULL,
	`finished_at` integer,
	`bytes` integer,
	`archive` text,
	`error` text
);
--> statement-breakpoint
CREATE INDEX `backup_runs_started` ON `backup_runs` (`started_at`);