CREATE TABLE `approval_votes` (
	`approval_id` text NOT NULL,
	`approver` text NOT NULL,
	`approver_role` text NOT NULL,
	`reason` text,
	`at` real NOT NULL,
	PRIMARY KEY(`approval_id`, `approver`),
	FOREIGN KEY (`approval_id`) REFERENCES `approvals`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE TABLE `security_events` (
	`id` integer PRIMARY KEY NOT NULL,
	`type` text NOT NULL,
	`actor` text NOT NULL,
	`outcome` text NOT NULL,
	`target` text,
	`detail_json` text,
	`timestamp` real NOT NULL
);
--> statement-breakpoint
CREATE INDEX `security_events_type_time` ON `security_events` (`type`,`timestamp`);--> statement-breakpoint
ALTER TABLE `approvals` ADD `approvals_required` integer DEFAULT 1 NOT NULL;--> statement-breakpoint
ALTER TABLE `approvals` ADD `approver_roles` text DEFAULT 'operator,admin' NOT NULL;--> statement-breakpoint
ALTER TABLE `approvals` ADD `risk` text DEFAULT 'medium' NOT NULL;--> statement-breakpoint
ALTER TABLE `approvals` ADD `gate_description` text;--> statement-breakpoint
ALTER TABLE `approvals` ADD `reported_at` real;--> statement-breakpoint
-- Security events and the approvals people gave are append-only, like the denial trail.
CREATE TRIGGER security_events_no_update BEFORE UPDATE ON security_events
BEGIN SELECT RAISE(ABORT, 'security_events is append-only: UPDATE is refused'); END;
--> statement-breakpoint
CREATE TRIGGER security_events_no_delete BEFORE DELETE ON security_events
BEGIN SELECT RAISE(ABORT, 'security_events is append-only: DELETE is refused'); END;
--> statement-breakpoint
CREATE TRIGGER approval_votes_no_update BEFORE UPDATE ON approval_votes
BEGIN SELECT RAISE(ABORT, 'approval_votes is append-only: UPDATE is refused'); END;
--> statement-breakpoint
CREATE TRIGGER approval_votes_no_delete BEFORE DELETE ON approval_votes
BEGIN SELECT RAISE(ABORT, 'approval_votes is append-only: DELETE is refused'); END;
