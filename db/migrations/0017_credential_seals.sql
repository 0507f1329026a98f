-- Credential seals (issue 39): every users, api_tokens and sessions row carries a MAC with the installation's
-- credentials key (lib/auth/seal.ts); a row without a valid one is not used. Rows from before are sealed once at start.
ALTER TABLE `api_tokens` ADD `mac` text;--> statement-breakpoint
ALTER TABLE `sessions` ADD `mac` text;--> statement-breakpoint
ALTER TABLE `users` ADD `mac` text;