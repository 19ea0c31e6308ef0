CREATE TABLE `app_passwords` (
	`id` text PRIMARY KEY NOT NULL,
	`user_id` text NOT NULL,
	`name` text NOT NULL,
	`secret_hash` text NOT NULL,
	`created_at` integer NOT NULL,
	`last_used_at` integer,
	`last_ip` text,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `app_passwords_secret_hash_idx` ON `app_passwords` (`secret_hash`);--> statement-breakpoint
CREATE INDEX `app_passwords_user_id_idx` ON `app_passwords` (`user_id`,`created_at`);--> statement-breakpoint
CREATE TABLE `dav_properties` (
	`item_id` text NOT NULL,
	`ns` text NOT NULL,
	`name` text NOT NULL,
	`value` text NOT NULL,
	PRIMARY KEY(`item_id`, `ns`, `name`),
	FOREIGN KEY (`item_id`) REFERENCES `items`(`id`) ON UPDATE no action ON DELETE cascade
);
