-- Hand-written: whether any library exists is answered from memory while the access generation stands,
-- so adding or removing a library (by the server or the CLI beside it) moves it too.
CREATE TRIGGER `access_libraries_insert` AFTER INSERT ON `libraries` BEGIN
  UPDATE `access_generation` SET `generation` = random();
END;
--> statement-breakpoint
CREATE TRIGGER `access_libraries_delete` AFTER DELETE ON `libraries` BEGIN
  UPDATE `access_generation` SET `generation` = random();
END;
