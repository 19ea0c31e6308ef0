-- Hand-written: a data repair. Before client-sent types were checked, a type with a line break (tus metadata) or
-- other bytes no header can carry was stored as the file's type; such a type is none at all, as uploads now treat it.
UPDATE `items` SET `mime_type` = 'application/octet-stream'
WHERE `mime_type` GLOB '*[^ -~]*' OR length(`mime_type`) > 255 OR `mime_type` NOT LIKE '%_/_%';
--> statement-breakpoint
UPDATE `file_versions` SET `mime_type` = 'application/octet-stream'
WHERE `mime_type` GLOB '*[^ -~]*' OR length(`mime_type`) > 255 OR `mime_type` NOT LIKE '%_/_%';
