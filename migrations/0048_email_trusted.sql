ALTER TABLE `users` ADD `email_trusted` integer DEFAULT false NOT NULL;--> statement-breakpoint
-- Existing owners keep being linked by email, except those known to have chosen their own address (a public
-- sign-up in the audit log or its queue, not through the provider); the admin always is; sub-users (their owner chose it) never.
UPDATE `users` SET `email_trusted` = 1
WHERE `parent_user_id` IS NULL
  AND `email` NOT LIKE 'team:%'
  AND (`is_admin` = 1 OR `id` NOT IN (
    SELECT `target_id` FROM `audit_log`
    WHERE `action` = 'auth.signup' AND `target_id` IS NOT NULL AND coalesce(`details`, '') NOT LIKE '%"method":"idp"%'
    UNION ALL
    SELECT json_extract(`event`, '$.targetId') FROM `audit_queue`
    WHERE json_valid(`event`) AND json_extract(`event`, '$.action') = 'auth.signup'
      AND json_extract(`event`, '$.targetId') IS NOT NULL AND coalesce(json_extract(`event`, '$.details.method'), '') <> 'idp'
  ));
