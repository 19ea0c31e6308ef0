ALTER TABLE `tus_uploads` ADD `share_ip` text;--> statement-breakpoint
CREATE INDEX `tus_uploads_share_link_idx` ON `tus_uploads` (`share_link_id`,`state`);--> statement-breakpoint
CREATE INDEX `tus_uploads_share_ip_idx` ON `tus_uploads` (`share_ip`,`state`);