CREATE TABLE `auth_generation` (
	`id` integer PRIMARY KEY NOT NULL,
	`n` integer NOT NULL
);
--> statement-breakpoint
CREATE INDEX `approvals_call_newest` ON `approvals` (`agent_name`,`tool_name`,`arguments_hash`,`requested_at`,`id`);
--> statement-breakpoint
INSERT INTO `auth_generation` (`id`, `n`) VALUES (1, 0);
--> statement-breakpoint
CREATE TRIGGER `auth_generation_token_insert` AFTER INSERT ON `api_tokens` BEGIN UPDATE `auth_generation` SET `n` = `n` + 1 WHERE `id` = 1; END;
--> statement-breakpoint
CREATE TRIGGER `auth_generation_token_update` AFTER UPDATE ON `api_tokens` BEGIN UPDATE `auth_generation` SET `n` = `n` + 1 WHERE `id` = 1; END;
--> statement-breakpoint
CREATE TRIGGER `auth_generation_token_delete` AFTER DELETE ON `api_tokens` BEGIN UPDATE `auth_generation` SET `n` = `n` + 1 WHERE `id` = 1; END;
--> statement-breakpoint
CREATE TRIGGER `auth_generation_user_insert` AFTER INSERT ON `users` BEGIN UPDATE `auth_generation` SET `n` = `n` + 1 WHERE `id` = 1; END;
--> statement-breakpoint
CREATE TRIGGER `auth_generation_user_update` AFTER UPDATE ON `users` BEGIN UPDATE `auth_generation` SET `n` = `n` + 1 WHERE `id` = 1; END;
--> statement-breakpoint
CREATE TRIGGER `auth_generation_user_delete` AFTER DELETE ON `users` BEGIN UPDATE `auth_generation` SET `n` = `n` + 1 WHERE `id` = 1; END;
