CREATE TABLE `audit_archives` (
	`id` integer PRIMARY KEY NOT NULL,
	`chain` text NOT NULL,
	`up_to_id` integer NOT NULL,
	`head_hash` text NOT NULL,
	`rows` integer NOT NULL,
	`file` text NOT NULL,
	`file_sha256` text NOT NULL,
	`archived_at` real NOT NULL
);
--> statement-breakpoint
CREATE TABLE `audit_checkpoints` (
	`id` integer PRIMARY KEY NOT NULL,
	`chain` text NOT NULL,
	`size` integer NOT NULL,
	`head_hash` text NOT NULL,
	`created_at` real NOT NULL,
	`note` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `audit_checkpoints_chain` ON `audit_checkpoints` (`chain`,`size`);--> statement-breakpoint
CREATE TABLE `policy_revisions` (
	`revision` text PRIMARY KEY NOT NULL,
	`content_json` text NOT NULL,
	`first_seen_at` real NOT NULL
);
--> statement-breakpoint
ALTER TABLE `approvals` ADD `decision_id` text;--> statement-breakpoint
ALTER TABLE `permission_denials` ADD `decision_id` text;--> statement-breakpoint
ALTER TABLE `permission_denials` ADD `policy_revision` text;--> statement-breakpoint
ALTER TABLE `permission_denials` ADD `masked_paths` text;--> statement-breakpoint
ALTER TABLE `permission_denials` ADD `prev_hash` text;--> statement-breakpoint
ALTER TABLE `permission_denials` ADD `row_hash` text;--> statement-breakpoint
ALTER TABLE `security_events` ADD `decision_id` text;--> statement-breakpoint
ALTER TABLE `security_events` ADD `actor_role` text;--> statement-breakpoint
ALTER TABLE `security_events` ADD `policy_revision` text;--> statement-breakpoint
ALTER TABLE `security_events` ADD `ip` text;--> statement-breakpoint
ALTER TABLE `security_events` ADD `prev_hash` text;--> statement-breakpoint
ALTER TABLE `security_events` ADD `row_hash` text;--> statement-breakpoint
CREATE INDEX `security_events_time` ON `security_events` (`timestamp`);--> statement-breakpoint
CREATE INDEX `security_events_actor` ON `security_events` (`actor`);--> statement-breakpoint
CREATE INDEX `security_events_decision` ON `security_events` (`decision_id`);
--> statement-breakpoint
-- The evidence itself is append-only: checkpoints, archive records and policy revisions are never changed or removed.
CREATE TRIGGER audit_checkpoints_no_update BEFORE UPDATE ON audit_checkpoints
BEGIN SELECT RAISE(ABORT, 'audit_checkpoints is append-only: UPDATE is refused'); END;
--> statement-breakpoint
CREATE TRIGGER audit_checkpoints_no_delete BEFORE DELETE ON audit_checkpoints
BEGIN SELECT RAISE(ABORT, 'audit_checkpoints is append-only: DELETE is refused'); END;
--> statement-breakpoint
CREATE TRIGGER audit_archives_no_update BEFORE UPDATE ON audit_archives
BEGIN SELECT RAISE(ABORT, 'audit_archives is append-only: UPDATE is refused'); END;
--> statement-breakpoint
CREATE TRIGGER audit_archives_no_delete BEFORE DELETE ON audit_archives
BEGIN SELECT RAISE(ABORT, 'audit_archives is append-only: DELETE is refused'); END;
--> statement-breakpoint
CREATE TRIGGER policy_revisions_no_update BEFORE UPDATE ON policy_revisions
BEGIN SELECT RAISE(ABORT, 'policy_revisions is append-only: UPDATE is refused'); END;
--> statement-breakpoint
CREATE TRIGGER policy_revisions_no_delete BEFORE DELETE ON policy_revisions
BEGIN SELECT RAISE(ABORT, 'policy_revisions is append-only: DELETE is refused'); END;
