-- MCP tool pins (issue 42): each upstream tool's definition as it was reviewed (its SHA-256 and canonical JSON),
-- accepted or held for an operator. Append-only, like policy votes; each row is sealed with the installation's key
-- (lib/auth/seal.ts), so a row written with the database file alone counts for nothing.
CREATE TABLE `mcp_tool_pins` (
	`id` integer PRIMARY KEY NOT NULL,
	`server_id` text NOT NULL,
	`tool_name` text NOT NULL,
	`sha256` text NOT NULL,
	`definition_json` text NOT NULL,
	`state` text NOT NULL,
	`accepted_by` text,
	`accepted_via` text,
	`at` real NOT NULL,
	`mac` text
);
--> statement-breakpoint
CREATE INDEX `mcp_tool_pins_tool` ON `mcp_tool_pins` (`server_id`,`tool_name`,`id`);--> statement-breakpoint
CREATE TRIGGER mcp_tool_pins_no_update BEFORE UPDATE ON mcp_tool_pins
BEGIN SELECT RAISE(ABORT, 'mcp_tool_pins is append-only: UPDATE is refused'); END;
--> statement-breakpoint
CREATE TRIGGER mcp_tool_pins_no_delete BEFORE DELETE ON mcp_tool_pins
BEGIN SELECT RAISE(ABORT, 'mcp_tool_pins is append-only: DELETE is refused'); END;
