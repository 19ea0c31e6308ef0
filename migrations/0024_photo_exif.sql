ALTER TABLE `thumbnails` ADD `camera` text;--> statement-breakpoint
ALTER TABLE `thumbnails` ADD `lens` text;--> statement-breakpoint
ALTER TABLE `thumbnails` ADD `latitude` real;--> statement-breakpoint
ALTER TABLE `thumbnails` ADD `longitude` real;