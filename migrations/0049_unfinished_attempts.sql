CREATE TABLE `unfinished_attempts` (
	`purpose` text NOT NULL,
	`subject` text NOT NULL,
	`attempts` integer NOT NULL,
	`started_at` integer NOT NULL,
	PRIMARY KEY(`purpose`, `subject`)
);
