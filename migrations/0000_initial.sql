CREATE TABLE `jobs` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`id` text NOT NULL,
	`kind` text NOT NULL,
	`account_id` text,
	`payload` text NOT NULL,
	`status` text DEFAULT 'created' NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`max_attempts` integer DEFAULT 5 NOT NULL,
	`run_at` integer NOT NULL,
	`result` text,
	`last_error` text,
	`idempotency_key` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	`finished_at` integer
);
--> statement-breakpoint
CREATE UNIQUE INDEX `jobs_id_idx` ON `jobs` (`id`);--> statement-breakpoint
CREATE UNIQUE INDEX `jobs_kind_idempotency_key_idx` ON `jobs` (`kind`,`idempotency_key`);--> statement-breakpoint
CREATE INDEX `jobs_status_run_at_idx` ON `jobs` (`status`,`run_at`);--> statement-breakpoint
CREATE INDEX `jobs_account_id_status_seq_idx` ON `jobs` (`account_id`,`status`,`seq`);--> statement-breakpoint
CREATE INDEX `jobs_finished_at_idx` ON `jobs` (`finished_at`);--> statement-breakpoint
CREATE TABLE `schedules` (
	`name` text PRIMARY KEY NOT NULL,
	`kind` text NOT NULL,
	`payload` text NOT NULL,
	`account_id` text,
	`interval_ms` integer NOT NULL,
	`next_run_at` integer NOT NULL,
	`created_at` integer NOT NULL
);
