CREATE TABLE `webhook_cursor` (
	`name` text PRIMARY KEY NOT NULL,
	`seq` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `webhook_deliveries` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`id` text NOT NULL,
	`webhook_id` text NOT NULL,
	`message_id` text NOT NULL,
	`type` text NOT NULL,
	`body` text NOT NULL,
	`change_seq` integer,
	`status` text DEFAULT 'pending' NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`response_status` integer,
	`duration_ms` integer,
	`response_excerpt` text,
	`error` text,
	`created_at` integer NOT NULL,
	`attempted_at` integer,
	`next_attempt_at` integer,
	FOREIGN KEY (`webhook_id`) REFERENCES `webhooks`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `webhook_deliveries_id_idx` ON `webhook_deliveries` (`id`);--> statement-breakpoint
CREATE INDEX `webhook_deliveries_webhook_id_seq_idx` ON `webhook_deliveries` (`webhook_id`,`seq`);--> statement-breakpoint
CREATE UNIQUE INDEX `webhook_deliveries_webhook_id_change_seq_idx` ON `webhook_deliveries` (`webhook_id`,`change_seq`);--> statement-breakpoint
CREATE TABLE `webhooks` (
	`id` text PRIMARY KEY NOT NULL,
	`account_id` text,
	`created_by` text,
	`url` text NOT NULL,
	`events` text NOT NULL,
	`folder_id` text,
	`enabled` integer DEFAULT true NOT NULL,
	`secret_sealed` text NOT NULL,
	`failing_since` integer,
	`disabled_reason` text,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`account_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`created_by`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE set null
);
--> statement-breakpoint
CREATE INDEX `webhooks_account_id_idx` ON `webhooks` (`account_id`);