CREATE TABLE `upload_intents` (
	`storage_key` text PRIMARY KEY NOT NULL,
	`created_at` integer NOT NULL
);
