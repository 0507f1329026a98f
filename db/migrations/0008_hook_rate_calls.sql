CREATE TABLE `hook_rate_calls` (
	`id` integer PRIMARY KEY NOT NULL,
	`hook` text NOT NULL,
	`agent` text NOT NULL,
	`tool` text NOT NULL,
	`at` real NOT NULL
);
--> statement-breakpoint
CREATE INDEX `hook_rate_calls_window` ON `hook_rate_calls` (`hook`,`agent`,`tool`,`at`);