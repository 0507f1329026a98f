CREATE TABLE `permission_denial_daily_counts` (
	`day` integer NOT NULL,
	`rule_source` text NOT NULL,
	`agent_name` text NOT NULL,
	`tool_name` text NOT NULL,
	`user_role` text NOT NULL,
	`n` integer NOT NULL,
	PRIMARY KEY(`day`, `rule_source`, `agent_name`, `tool_name`, `user_role`)
);
--> statement-breakpoint
CREATE TABLE `permission_denial_rollup_state` (
	`id` integer PRIMARY KEY NOT NULL,
	`high_water` integer NOT NULL
);
