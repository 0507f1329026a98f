-- Count the denials recorded before this migration into the daily table, once, so that the first summary after an
-- upgrade does not have to. Every later denial is counted by lib/audit/denial-rollup.ts from high_water on.
-- The day expression is the one lib/audit/denial-rollup.ts uses: CAST(timestamp / 86400 AS INTEGER).
INSERT INTO permission_denial_daily_counts (day, rule_source, agent_name, tool_name, user_role, n)
SELECT CAST(timestamp / 86400 AS INTEGER), rule_source, coalesce(agent_name, ''), tool_name, coalesce(user_role, ''), count(*)
FROM permission_denials
GROUP BY 1, 2, 3, 4, 5;
--> statement-breakpoint
INSERT INTO permission_denial_rollup_state (id, high_water) SELECT 1, coalesce(max(id), 0) FROM permission_denials;
