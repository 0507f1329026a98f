-- The lifecycle of tokens (issue 27): an expiry, the last use, scopes, the token a rotation replaced, and the sweeper's
-- disabling (expired, or unused too long). Existing tokens keep what they could do: an agent's token `decide`, a
-- person's token the scope of the person's role (admin: admin, operator: operate, auditor and viewer: read).
ALTER TABLE `api_tokens` ADD `expires_at` real;--> statement-breakpoint
ALTER TABLE `api_tokens` ADD `last_used_at` real;--> statement-breakpoint
ALTER TABLE `api_tokens` ADD `scopes` text DEFAULT '' NOT NULL;--> statement-breakpoint
ALTER TABLE `api_tokens` ADD `rotated_from` integer;--> statement-breakpoint
ALTER TABLE `api_tokens` ADD `disabled_at` real;--> statement-breakpoint
ALTER TABLE `api_tokens` ADD `disabled_reason` text;--> statement-breakpoint
UPDATE `api_tokens` SET `scopes` = 'decide' WHERE `agent_name` IS NOT NULL;--> statement-breakpoint
UPDATE `api_tokens` SET `scopes` = (SELECT CASE `u`.`role` WHEN 'admin' THEN 'admin' WHEN 'operator' THEN 'operate' ELSE 'read' END FROM `users` `u` WHERE `u`.`id` = `api_tokens`.`user_id`) WHERE `agent_name` IS NULL AND `user_id` IS NOT NULL;--> statement-breakpoint
-- A token's last use is written in the background (at most once a minute per token): it says nothing about who a token
-- names, so it must not move auth_generation (every process's token cache would forget every token each time).
DROP TRIGGER `auth_generation_token_update`;--> statement-breakpoint
CREATE TRIGGER `auth_generation_token_update` AFTER UPDATE OF `token_hash`, `name`, `user_id`, `agent_name`, `created_at`, `revoked_at`, `expires_at`, `scopes`, `rotated_from`, `disabled_at`, `disabled_reason` ON `api_tokens` BEGIN UPDATE `auth_generation` SET `n` = `n` + 1 WHERE `id` = 1; END;
