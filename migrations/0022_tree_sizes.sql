ALTER TABLE `tree_versions` ADD `size` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE `items` ADD `tree_size` integer DEFAULT 0 NOT NULL;--> statement-breakpoint
WITH RECURSIVE `up`(`folder`, `size`, `root`) AS (
  SELECT p.`id`, f.`size`, f.`deleted_root_id` FROM `items` f JOIN `items` p ON p.`id` = f.`parent_id`
   WHERE f.`type` = 'file' AND p.`deleted_root_id` IS f.`deleted_root_id`
  UNION ALL
  SELECT p.`id`, `up`.`size`, `up`.`root` FROM `up` JOIN `items` c ON c.`id` = `up`.`folder` JOIN `items` p ON p.`id` = c.`parent_id`
   WHERE p.`deleted_root_id` IS `up`.`root`
)
UPDATE `items` SET `tree_size` = s.`total`
  FROM (SELECT `folder`, SUM(`size`) AS `total` FROM `up` GROUP BY `folder`) AS s
 WHERE `items`.`id` = s.`folder`;--> statement-breakpoint
INSERT INTO `tree_versions` (`account_id`, `version`, `size`)
  SELECT `account_id`, 0, SUM(`size`) FROM `items` WHERE `type` = 'file' AND `deleted_at` IS NULL GROUP BY `account_id`
  ON CONFLICT (`account_id`) DO UPDATE SET `size` = excluded.`size`;
