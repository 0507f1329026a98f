import type { App } from '@/lib/app';
import type { McpNaming } from './mcp-tool-name';

/** The gateway's naming as config/mcp.yaml says it now: the separator and the ids of the configured servers. */
export function mcpNamingOf(app: App): McpNaming {
  const mcp = app.mcpFile.current;
  return { separator: mcp.separator, servers: mcp.servers.map((s) => s.id) };
}
