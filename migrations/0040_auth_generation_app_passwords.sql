-- Hand-written: signing in with an app password is answered from memory while the auth generation stands,
-- so removing or changing an app password moves it too (a new one needs nothing: it was never cached).
CREATE TRIGGER `auth_app_passwords_update` AFTER UPDATE OF `id`, `user_id`, `secret_hash` ON `app_passwords` BEGIN
  UPDATE `auth_generation` SET `generation` = random();
END;
--> statement-breakpoint
CREATE TRIGGER `auth_app_passwords_delete` AFTER DELETE ON `app_passwords` BEGIN
  UPDATE `auth_generation` SET `generation` = random();
END;
