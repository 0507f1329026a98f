-- Sign-in attempts shared by every process on the database (issue 23): failures per user name and per client address,
-- the lock a compliance profile puts on a user name, and the attempt in progress, so that attempts for one user name
-- are taken one at a time across processes (lib/auth/attempts.ts).
CREATE TABLE IF NOT EXISTS `login_attempts` (
	`key` text PRIMARY KEY NOT NULL,
	`failures` integer DEFAULT 0 NOT NULL,
	`last_failure_at` real,
	`locked_until` real,
	`busy_until` real
);
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS `login_attempts_last_failure` ON `login_attempts` (`last_failure_at`);
