-- The MCP client that asked (issue 26): a call through the MCP gateway names the client of its session as it named
-- itself at initialize ("Claude Desktop 1.2"), and the approval card says which client asked. Null for other calls.
ALTER TABLE "approvals" ADD COLUMN "client" text;
