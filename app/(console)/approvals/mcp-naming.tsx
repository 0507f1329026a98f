'use client';

/**
 * The gateway's naming (separator and configured servers) for the queue's cards and dialogs: the page reads it from
 * the server's config/mcp.yaml once, and every part of the queue that names a tool reads it here.
 */
import { createContext, useContext, type ReactNode } from 'react';
import { NO_MCP_NAMING, type McpNaming } from './mcp-tool-name';
import { ToolName } from './tool-name';

const McpNamingContext = createContext<McpNaming>(NO_MCP_NAMING);

export function McpNamingProvider({ naming, children }: { naming: McpNaming; children: ReactNode }) {
  return <McpNamingContext.Provider value={naming}>{children}</McpNamingContext.Provider>;
}

export function useMcpNaming(): McpNaming {
  return useContext(McpNamingContext);
}

/** ToolName with the queue's naming. */
export function QueueToolName({ name }: { name: string }) {
  return <ToolName name={name} naming={useMcpNaming()} />;
}
