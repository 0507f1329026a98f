-- Journaled at first with an earlier time than 0006 and 0007, so drizzle's migrator (it applies only migrations newer
-- than the newest applied) skipped it on a database that already had 0007. Journaled after 0007 now, and made safe to
-- run again on a database that has it.
CREATE TABLE IF NOT EXISTS `hook_rate_calls` (
	`id` integer PRIMARY KEY NOT NULL,
	`hook` text NOT NULL,
	`agent` text NOT NULL,
	`tool` text NOT NULL,
	`at` real NOT NULL
);
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS `hook_rate_calls_window` ON `hook_rate_calls` (`hook`,`agent`,`tool`,`at`);