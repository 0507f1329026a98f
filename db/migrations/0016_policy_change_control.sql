-- Policy change control (issue 28): proposals (a proposed configuration stored as a revision, with its impact and its
-- policy tests' result), the votes on them, and the activations in order (the configuration in force on every server
-- is the newest activation's revision). Votes and activations are append-only, like the trail.
CREATE TABLE `policy_activations` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`revision` text NOT NULL,
	`proposal_id` text,
	`kind` text NOT NULL,
	`activated_by` text NOT NULL,
	`activated_at` real NOT NULL
);
--> statement-breakpoint
CREATE TABLE `policy_proposals` (
	`id` text PRIMARY KEY NOT NULL,
	`kind` text NOT NULL,
	`revision` text NOT NULL,
	`base_revision` text,
	`message` text NOT NULL,
	`proposed_by` text NOT NULL,
	`proposed_at` real NOT NULL,
	`status` text NOT NULL,
	`tests_json` text NOT NULL,
	`impact_json` text NOT NULL,
	`approvals_required` integer NOT NULL,
	`approver_roles` text NOT NULL,
	`decided_by` text,
	`decided_at` real,
	`decision_reason` text,
	`emergency` integer DEFAULT false NOT NULL
);
--> statement-breakpoint
CREATE INDEX `policy_proposals_status` ON `policy_proposals` (`status`,`proposed_at`);--> statement-breakpoint
CREATE TABLE `policy_votes` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`proposal_id` text NOT NULL,
	`voter` text NOT NULL,
	`voter_role` text NOT NULL,
	`vote` text NOT NULL,
	`reason` text NOT NULL,
	`voted_at` real NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `policy_votes_one_each` ON `policy_votes` (`proposal_id`,`voter`);--> statement-breakpoint
CREATE TRIGGER policy_votes_no_update BEFORE UPDATE ON policy_votes
BEGIN SELECT RAISE(ABORT, 'policy_votes is append-only: UPDATE is refused'); END;
--> statement-breakpoint
CREATE TRIGGER policy_votes_no_delete BEFORE DELETE ON policy_votes
BEGIN SELECT RAISE(ABORT, 'policy_votes is append-only: DELETE is refused'); END;
--> statement-breakpoint
CREATE TRIGGER policy_activations_no_update BEFORE UPDATE ON policy_activations
BEGIN SELECT RAISE(ABORT, 'policy_activations is append-only: UPDATE is refused'); END;
--> statement-breakpoint
CREATE TRIGGER policy_activations_no_delete BEFORE DELETE ON policy_activations
BEGIN SELECT RAISE(ABORT, 'policy_activations is append-only: DELETE is refused'); END;
--> statement-breakpoint
CREATE TRIGGER policy_proposals_no_delete BEFORE DELETE ON policy_proposals
BEGIN SELECT RAISE(ABORT, 'policy proposals are kept: DELETE is refused'); END;
