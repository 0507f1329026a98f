-- Notifications to people (config/notifications.yaml, lib/notifications/): one row per message to one channel. The
-- process that saw the event writes the row (in the transaction of the approval it announces); any process may send it,
-- after claiming it with one UPDATE (claim_token, lease_until), so two processes never send the same row at once.
-- dedupe_key (event, subject, channel) keeps an event from being queued twice when both processes notice it.
CREATE TABLE `notification_deliveries` (
	`id` integer PRIMARY KEY NOT NULL,
	`dedupe_key` text NOT NULL,
	`channel` text NOT NULL,
	`channel_kind` text NOT NULL,
	`event` text NOT NULL,
	`subject` text NOT NULL,
	`body` text NOT NULL,
	`status` text NOT NULL,
	`attempts` integer DEFAULT 0 NOT NULL,
	`max_attempts` integer NOT NULL,
	`next_attempt_at` real NOT NULL,
	`claim_token` text,
	`lease_until` real,
	`last_status` integer,
	`last_error` text,
	`origin` text NOT NULL,
	`created_at` real NOT NULL,
	`updated_at` real NOT NULL,
	`delivered_at` real
);
--> statement-breakpoint
CREATE UNIQUE INDEX `notification_deliveries_dedupe_key_unique` ON `notification_deliveries` (`dedupe_key`);--> statement-breakpoint
CREATE INDEX `notification_deliveries_due` ON `notification_deliveries` (`status`,`next_attempt_at`);--> statement-breakpoint
CREATE INDEX `notification_deliveries_created` ON `notification_deliveries` (`created_at`);--> statement-breakpoint
CREATE INDEX `notification_deliveries_subject` ON `notification_deliveries` (`event`,`subject`,`created_at`);