'use client';

/**
 * The gateway's naming (separator and configured servers) for the console's client parts (the approval queue, the
 * denial explorer's detail): the page reads it from the server's config/mcp.yaml once, and every part that names a
 * tool reads it here.
 */
import { createContext, useContext, type ReactNode } from 'react';
import { NO_MCP_NAMING, type McpNaming } from './mcp-tool-name';

const McpNamingContext = createContext<McpNaming>(NO_MCP_NAMING);

export function McpNamingProvider({ naming, children }: { naming: McpNaming; children: ReactNode }) {
  return <McpNamingContext.Provider value={naming}>{children}</McpNamingContext.Provider>;
}

export function useMcpNaming(): McpNaming {
  return useContext(McpNamingContext);
}
