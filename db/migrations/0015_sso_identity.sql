-- Single sign-on (issue 27): a user first seen through an OpenID Connect provider is marked with its issuer and subject
-- (never a password; one user per person at a provider), and a session opened through one keeps what ending and
-- refreshing it needs: the provider, issuer, subject and provider session (sid), the refresh and ID tokens sealed
-- (lib/sso/seal.ts), and when to ask the provider again. All null for users and sessions of passwords.
ALTER TABLE `sessions` ADD `sso_provider` text;--> statement-breakpoint
ALTER TABLE `sessions` ADD `sso_issuer` text;--> statement-breakpoint
ALTER TABLE `sessions` ADD `sso_subject` text;--> statement-breakpoint
ALTER TABLE `sessions` ADD `sso_sid` text;--> statement-breakpoint
ALTER TABLE `sessions` ADD `sso_refresh_token` text;--> statement-breakpoint
ALTER TABLE `sessions` ADD `sso_id_token` text;--> statement-breakpoint
ALTER TABLE `sessions` ADD `sso_refresh_at` real;--> statement-breakpoint
CREATE INDEX `sessions_sso` ON `sessions` (`sso_issuer`,`sso_subject`);--> statement-breakpoint
ALTER TABLE `users` ADD `issuer` text;--> statement-breakpoint
ALTER TABLE `users` ADD `subject` text;--> statement-breakpoint
CREATE UNIQUE INDEX `users_identity` ON `users` (`issuer`,`subject`);