CREATE TABLE `api_tokens` (
	`id` integer PRIMARY KEY NOT NULL,
	`token_hash` text NOT NULL,
	`name` text NOT NULL,
	`user_id` integer,
	`agent_name` text,
	`created_at` real NOT NULL,
	`revoked_at` real,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `api_tokens_token_hash_unique` ON `api_tokens` (`token_hash`);--> statement-breakpoint
CREATE TABLE `approvals` (
	`id` text PRIMARY KEY NOT NULL,
	`gate` text NOT NULL,
	`agent_name` text NOT NULL,
	`tool_name` text NOT NULL,
	`arguments_canonical` text NOT NULL,
	`arguments_redacted` text NOT NULL,
	`arguments_hash` text NOT NULL,
	`tool_call_id` text,
	`requested_by` text NOT NULL,
	`requested_at` real NOT NULL,
	`expires_at` real NOT NULL,
	`rule_source` text NOT NULL,
	`reason` text,
	`status` text NOT NULL,
	`decided_by` text,
	`decided_at` real,
	`decision_reason` text,
	`consumed_at` real
);
--> statement-breakpoint
CREATE UNIQUE INDEX `approvals_one_pending_per_call` ON `approvals` (`agent_name`,`tool_name`,`arguments_hash`) WHERE status = 'pending';--> statement-breakpoint
CREATE INDEX `approvals_call` ON `approvals` (`agent_name`,`tool_name`,`arguments_hash`,`status`);--> statement-breakpoint
CREATE INDEX `approvals_status_requested` ON `approvals` (`status`,`requested_at`);--> statement-breakpoint
CREATE TABLE `flag_changes` (
	`id` integer PRIMARY KEY NOT NULL,
	`name` text NOT NULL,
	`old_value` integer,
	`new_value` integer,
	`action` text NOT NULL,
	`changed_by` text NOT NULL,
	`changed_at` real NOT NULL,
	`reason` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `flag_changes_name` ON `flag_changes` (`name`,`changed_at`);--> statement-breakpoint
CREATE TABLE `flag_overrides` (
	`name` text PRIMARY KEY NOT NULL,
	`value` integer NOT NULL,
	`set_by` text NOT NULL,
	`set_at` real NOT NULL,
	`reason` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `permission_denials` (
	`id` integer PRIMARY KEY NOT NULL,
	`tool_call_id` text,
	`tool_name` text NOT NULL,
	`agent_name` text,
	`arguments_json` text,
	`rule_source` text NOT NULL,
	`reason` text,
	`user_role` text,
	`http_method` text,
	`http_path` text,
	`timestamp` real NOT NULL,
	`principal` text,
	`trace_json` text
);
--> statement-breakpoint
CREATE INDEX `permission_denials_timestamp` ON `permission_denials` (`timestamp`);--> statement-breakpoint
CREATE INDEX `permission_denials_agent` ON `permission_denials` (`agent_name`);--> statement-breakpoint
CREATE INDEX `permission_denials_rule_source` ON `permission_denials` (`rule_source`);--> statement-breakpoint
CREATE INDEX `permission_denials_tool` ON `permission_denials` (`tool_name`);--> statement-breakpoint
CREATE TABLE `sessions` (
	`id_hash` text PRIMARY KEY NOT NULL,
	`user_id` integer NOT NULL,
	`created_at` real NOT NULL,
	`expires_at` real NOT NULL,
	FOREIGN KEY (`user_id`) REFERENCES `users`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE INDEX `sessions_user` ON `sessions` (`user_id`);--> statement-breakpoint
CREATE TABLE `users` (
	`id` integer PRIMARY KEY NOT NULL,
	`username` text NOT NULL,
	`role` text NOT NULL,
	`password_hash` text,
	`created_at` real NOT NULL,
	`disabled` integer DEFAULT false NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `users_username_unique` ON `users` (`username`);