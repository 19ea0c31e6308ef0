DROP INDEX `items_key_id_idx`;--> statement-breakpoint
DROP INDEX `items_parent_id_idx`;--> statement-breakpoint
DROP INDEX `items_deleted_root_idx`;--> statement-breakpoint
CREATE INDEX `items_parent_id_idx` ON `items` (`parent_id`) WHERE parent_id IS NOT NULL;--> statement-breakpoint
CREATE INDEX `items_deleted_root_idx` ON `items` (`deleted_root_id`) WHERE deleted_root_id IS NOT NULL;