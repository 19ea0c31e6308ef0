-- The extension decides how a file is read (a ZIP is a document only as .docx, .odt…; .html drops its markup): a file renamed to
-- another extension is extracted again, as a document saved under a temporary name and then renamed (WebDAV clients) must be.
CREATE TRIGGER `content_pending_rename` AFTER UPDATE OF `name` ON `items`
WHEN new.`type` = 'file'
  AND lower(CASE WHEN instr(old.`name`, '.') = 0 THEN '' ELSE replace(old.`name`, rtrim(old.`name`, replace(old.`name`, '.', '')), '') END)
    IS NOT lower(CASE WHEN instr(new.`name`, '.') = 0 THEN '' ELSE replace(new.`name`, rtrim(new.`name`, replace(new.`name`, '.', '')), '') END)
  AND (SELECT `value` FROM `settings` WHERE `key` = 'contentSearch') = 'true'
  AND NOT EXISTS (SELECT 1 FROM `users` WHERE `id` = new.`account_id` AND `content_search_opt_out` = 1)
BEGIN
  INSERT OR IGNORE INTO `content_pending` (`seq`) VALUES (new.`seq`);
END;
