ALTER TABLE `tus_uploads` ADD `durable_offset` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
-- Every offset recorded before this column existed was synced before it was acknowledged.
UPDATE `tus_uploads` SET `durable_offset` = `offset`;
