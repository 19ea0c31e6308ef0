ALTER TABLE `audit_log` ADD `request_id` text;--> statement-breakpoint
ALTER TABLE `users` ADD `disabled_at` integer;--> statement-breakpoint
ALTER TABLE `users` ADD `deletion_requested_at` integer;