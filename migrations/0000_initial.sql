CREATE TABLE `audit_log` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`at` integer NOT NULL,
	`action` text NOT NULL,
	`status` text NOT NULL,
	`actor` text NOT NULL,
	`login_id` text,
	`email` text,
	`account_id` text,
	`ip` text,
	`target_type` text,
	`target_id` text,
	`details` text
);
--> statement-breakpoint
CREATE INDEX `audit_log_at_idx` ON `audit_log` (`at`);--> statement-breakpoint
CREATE INDEX `audit_log_action_at_idx` ON `audit_log` (`action`,`at`);--> statement-breakpoint
CREATE INDEX `audit_log_login_id_at_idx` ON `audit_log` (`login_id`,`at`);--> statement-breakpoint
CREATE TABLE `audit_queue` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`event` text NOT NULL,
	`status` text DEFAULT 'pending' NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`last_error` text,
	`queued_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `key_rotations` (
	`id` text PRIMARY KEY NOT NULL,
	`to_key_id` text NOT NULL,
	`started_at` integer NOT NULL,
	`finished_at` integer,
	`items_rewrapped` integer DEFAULT 0 NOT NULL,
	`secrets_rewrapped` integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
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
--> statement-breakpoint
CREATE TABLE `mfa_backup_codes` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`user_id` text NOT NULL,
	`code_hash` text NOT NULL,
	`used_at` integer,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `mfa_backup_codes_user_id_code_hash_idx` ON `mfa_backup_codes` (`user_id`,`code_hash`);--> statement-breakpoint
CREATE TABLE `sessions` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`token_version` integer NOT NULL,
	`user_agent` text DEFAULT '' NOT NULL,
	`ip_address` text DEFAULT '' NOT NULL,
	`created_at` integer NOT NULL,
	`last_activity_at` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `sessions_user_id_idx` ON `sessions` (`user_id`);--> statement-breakpoint
CREATE INDEX `sessions_last_activity_at_idx` ON `sessions` (`last_activity_at`);--> statement-breakpoint
CREATE TABLE `settings` (
	`key` text PRIMARY KEY NOT NULL,
	`value` text NOT NULL,
	`updated_at` integer NOT NULL
);
--> statement-breakpoint
CREATE TABLE `users` (
	`id` text PRIMARY KEY NOT NULL,
	`email` text NOT NULL,
	`email_key` text NOT NULL,
	`name` text DEFAULT '' NOT NULL,
	`password_hash` text,
	`is_admin` integer DEFAULT false NOT NULL,
	`parent_user_id` text,
	`permissions` text,
	`token_version` integer DEFAULT 1 NOT NULL,
	`mfa_enabled` integer DEFAULT false NOT NULL,
	`mfa_secret` text,
	`mfa_pending_secret` text,
	`mfa_last_step` integer,
	`backup_codes_regenerated_at` integer,
	`storage_used` integer DEFAULT 0 NOT NULL,
	`storage_limit` integer,
	`created_at` integer NOT NULL,
	`updated_at` integer NOT NULL,
	FOREIGN KEY (`parent_user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `users_email_key_idx` ON `users` (`email_key`);--> statement-breakpoint
CREATE INDEX `users_parent_user_id_idx` ON `users` (`parent_user_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `users_owner_created_at_idx` ON `users` (`created_at`,`id`) WHERE parent_user_id IS NULL;--> statement-breakpoint
CREATE TABLE `items` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`id` text NOT NULL,
	`account_id` text NOT NULL,
	`parent_id` text,
	`parent_key` text GENERATED ALWAYS AS (coalesce(parent_id, '')) VIRTUAL,
	`type` text NOT NULL,
	`name` text NOT NULL,
	`name_key` text NOT NULL,
	`size` integer DEFAULT 0 NOT NULL,
	`mime_type` text,
	`storage_key` text,
	`wrapped_key` text,
	`key_id` text,
	`starred` integer DEFAULT false NOT NULL,
	`modified_at` integer NOT NULL,
	`accessed_at` integer NOT NULL,
	`created_at` integer NOT NULL,
	`deleted_at` integer,
	`deleted_root_id` text,
	FOREIGN KEY (`account_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `items_id_idx` ON `items` (`id`);--> statement-breakpoint
CREATE UNIQUE INDEX `items_storage_key_idx` ON `items` (`storage_key`);--> statement-breakpoint
CREATE UNIQUE INDEX `items_live_name_idx` ON `items` (`account_id`,`parent_key`,`name_key`) WHERE deleted_at IS NULL;--> statement-breakpoint
CREATE INDEX `items_live_parent_name_idx` ON `items` (`account_id`,`parent_id`,`type`,`name_key`,`id`) WHERE deleted_at IS NULL;--> statement-breakpoint
CREATE INDEX `items_live_parent_modified_idx` ON `items` (`account_id`,`parent_id`,`type`,`modified_at`,`id`) WHERE deleted_at IS NULL;--> statement-breakpoint
CREATE INDEX `items_live_parent_size_idx` ON `items` (`account_id`,`parent_id`,`type`,`size`,`id`) WHERE deleted_at IS NULL;--> statement-breakpoint
CREATE INDEX `items_live_parent_accessed_idx` ON `items` (`account_id`,`parent_id`,`type`,`accessed_at`,`id`) WHERE deleted_at IS NULL;--> statement-breakpoint
CREATE INDEX `items_parent_id_idx` ON `items` (`parent_id`);--> statement-breakpoint
CREATE INDEX `items_account_type_idx` ON `items` (`account_id`,`type`) WHERE deleted_at IS NULL;--> statement-breakpoint
CREATE INDEX `items_starred_idx` ON `items` (`account_id`,`type`,`modified_at`,`id`) WHERE starred = 1 AND deleted_at IS NULL;--> statement-breakpoint
CREATE INDEX `items_recent_idx` ON `items` (`account_id`,`accessed_at`,`id`) WHERE type = 'file' AND deleted_at IS NULL;--> statement-breakpoint
CREATE INDEX `items_live_name_key_idx` ON `items` (`account_id`,`name_key`) WHERE deleted_at IS NULL;--> statement-breakpoint
CREATE INDEX `items_deleted_root_idx` ON `items` (`deleted_root_id`);--> statement-breakpoint
CREATE INDEX `items_trash_idx` ON `items` (`account_id`,`type`,`deleted_at`,`id`) WHERE deleted_at IS NOT NULL AND deleted_root_id = id;--> statement-breakpoint
CREATE INDEX `items_key_id_idx` ON `items` (`key_id`);--> statement-breakpoint
CREATE TABLE `share_items` (
	`link_id` text NOT NULL,
	`item_id` text NOT NULL,
	`shared_at` integer NOT NULL,
	FOREIGN KEY (`link_id`) REFERENCES `share_links`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`item_id`) REFERENCES `items`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `share_items_link_item_idx` ON `share_items` (`link_id`,`item_id`);--> statement-breakpoint
CREATE INDEX `share_items_item_id_idx` ON `share_items` (`item_id`);--> statement-breakpoint
CREATE TABLE `share_links` (
	`id` text PRIMARY KEY NOT NULL,
	`token` text NOT NULL,
	`account_id` text NOT NULL,
	`item_id` text NOT NULL,
	`created_by` text,
	`created_at` integer NOT NULL,
	`expires_at` integer,
	FOREIGN KEY (`account_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`item_id`) REFERENCES `items`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `share_links_token_idx` ON `share_links` (`token`);--> statement-breakpoint
CREATE UNIQUE INDEX `share_links_item_id_idx` ON `share_links` (`item_id`);--> statement-breakpoint
CREATE INDEX `share_links_account_id_idx` ON `share_links` (`account_id`,`created_at`);