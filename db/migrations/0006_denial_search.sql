-- Free text over the denials (the explorer's `q`): an FTS5 index over the reason, the tool, the agent, the HTTP path and
-- the arguments' keys and values. Contentless (the audit table keeps the text; the index keeps only its trigrams) with
-- contentless_delete, so that the one sanctioned removal of audit rows (`swarm audit archive`) removes them here too.
-- The trigram tokenizer keeps the explorer's substring semantics ("0% of" finds "100% of budget", "batch_runner" finds
-- /api/v1/flags/batch_runner), case-insensitively; bench/denial-queries.ts measured it against unicode61.
-- The arguments are indexed as the detail panel shows them, one `"key": value` per line, so that a line copied from the
-- panel ("trials": 500) is found although the stored JSON has no spaces. lib/audit/denial-search.ts writes queries.
CREATE VIRTUAL TABLE `permission_denials_search` USING fts5(
	reason, tool_name, agent_name, http_path, arguments,
	content='', contentless_delete=1, tokenize='trigram'
);
--> statement-breakpoint
-- The index is filled behind the writes, not by a trigger inside them: an insert trigger made every durable denial six
-- times slower (1,930 against 12,445 writes/s, bench/denials.ts conditions). Long-lived processes index new rows every
-- second in batches (lib/audit/denial-search.ts); a search also scans the rows not indexed yet, so it is always exact.
CREATE TABLE `permission_denials_search_progress` (
	`id` integer PRIMARY KEY NOT NULL CHECK (`id` = 0),
	`indexed_up_to` integer NOT NULL
);
--> statement-breakpoint
-- Only `swarm audit archive` can delete audit rows (it lifts permission_denials_no_delete for its transaction): whatever
-- it removes leaves the index in the same statement.
CREATE TRIGGER permission_denials_search_delete AFTER DELETE ON permission_denials
BEGIN
	DELETE FROM permission_denials_search WHERE rowid = old.id;
END;
--> statement-breakpoint
-- Backfill: every denial recorded before this migration, in the same form as the trigger writes.
INSERT INTO permission_denials_search (rowid, reason, tool_name, agent_name, http_path, arguments)
SELECT d.id, d.reason, d.tool_name, d.agent_name, d.http_path,
	CASE WHEN d.arguments_json IS NULL THEN NULL WHEN json_valid(d.arguments_json) THEN (
		SELECT group_concat(
			CASE WHEN typeof(j.key) = 'text' THEN json_quote(j.key) || ': ' ELSE '' END ||
			CASE j.type WHEN 'object' THEN '{' WHEN 'array' THEN '[' WHEN 'text' THEN json_quote(j.value)
				WHEN 'true' THEN 'true' WHEN 'false' THEN 'false' WHEN 'null' THEN 'null' ELSE CAST(j.value AS TEXT) END,
			char(10))
		FROM json_tree(d.arguments_json) AS j WHERE j.key IS NOT NULL
	) ELSE d.arguments_json END
FROM permission_denials AS d;
--> statement-breakpoint
INSERT INTO `permission_denials_search_progress` (id, indexed_up_to) SELECT 0, coalesce(max(id), 0) FROM permission_denials;
