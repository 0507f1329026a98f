-- Approvals that hold against other principals and against edits of their table (issue 23). An approval is used only
-- by the principal that requested it (or by an administrator acting for the agent), so a call's pending request and its
-- newest approval are found per requester, and the row says who ran the approved call.
ALTER TABLE "approvals" ADD COLUMN "consumed_by" text;
--> statement-breakpoint
DROP INDEX IF EXISTS "approvals_one_pending_per_call";
--> statement-breakpoint
CREATE UNIQUE INDEX "approvals_one_pending_per_call" ON "approvals" USING btree ("agent_name","tool_name","arguments_hash","requested_by") WHERE status = 'pending';
--> statement-breakpoint
CREATE INDEX "approvals_call_newest" ON "approvals" USING btree ("agent_name","tool_name","arguments_hash","requested_by","requested_at","id");
--> statement-breakpoint
-- The events of one approval: an approved, unused approval is used only when the chained trail holds it.
CREATE INDEX "security_events_target" ON "security_events" USING btree ("target");
