CREATE TABLE `idp_identities` (
	`issuer` text NOT NULL,
	`subject` text NOT NULL,
	`user_id` text NOT NULL,
	`created_at` integer NOT NULL,
	`last_sign_in_at` integer NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE UNIQUE INDEX `idp_identities_issuer_subject_idx` ON `idp_identities` (`issuer`,`subject`);--> statement-breakpoint
CREATE UNIQUE INDEX `idp_identities_user_id_issuer_idx` ON `idp_identities` (`user_id`,`issuer`);