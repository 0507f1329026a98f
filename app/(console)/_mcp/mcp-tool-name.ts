/**
 * A tool called through the MCP gateway is named `<server><separator><tool>` (config/mcp.yaml; `files__write_file`).
 * The console shows the server and the upstream's own tool apart, but only where the prefix is a server the
 * configuration names: a tool that merely contains the separator (`deploy__v2`) stays what it is.
 */

/** What the console knows of the gateway's naming: the separator and the configured server ids. */
export interface McpNaming {
  separator: string;
  servers: readonly string[];
}

export const NO_MCP_NAMING: McpNaming = { separator: '__', servers: [] };

/** The server and the upstream's tool of a namespaced name, or null when it is not an MCP tool of a configured server. */
export function splitMcpTool(name: string, naming: McpNaming): { server: string; tool: string } | null {
  if (!naming.separator) return null;
  const at = name.indexOf(naming.separator);
  if (at <= 0) return null;
  const server = name.slice(0, at);
  const tool = name.slice(at + naming.separator.length);
  // A server id never contains the separator (config.ts refuses it), so the first one ends the id.
  return tool !== '' && naming.servers.includes(server) ? { server, tool } : null;
}

/** The tool in words, for labels read aloud: "write_file on the MCP server files", or the name itself. */
export function toolWords(name: string, naming: McpNaming): string {
  const split = splitMcpTool(name, naming);
  return split ? `${split.tool} on the MCP server ${split.server}` : name;
}
