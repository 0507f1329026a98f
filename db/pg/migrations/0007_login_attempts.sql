-- Sign-in attempts shared by the servers (issue 23): failures per user name and per client address, the lock a
-- compliance profile puts on a user name, and the attempt in progress (lib/auth/pg-attempts.ts).
CREATE TABLE IF NOT EXISTS "login_attempts" (
	"key" text PRIMARY KEY NOT NULL,
	"failures" integer DEFAULT 0 NOT NULL,
	"last_failure_at" double precision,
	"locked_until" double precision,
	"busy_until" double precision
);
--> statement-breakpoint
CREATE INDEX IF NOT EXISTS "login_attempts_last_failure" ON "login_attempts" USING btree ("last_failure_at");
