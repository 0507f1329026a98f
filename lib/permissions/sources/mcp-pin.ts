import { PRIORITY, type PermissionRule, type RuleSource } from '@/lib/permissions/types';

/** The pinned definitions of the MCP gateway's upstream tools (lib/mcp/pins): the SHA-256 pinned for a server's tool. */
export interface PinDirectory {
  pinned(server: string, tool: string): string | undefined;
}

export const NO_PIN_DIRECTORY: PinDirectory = Object.freeze({ pinned: () => undefined });

const NONE: readonly PermissionRule[] = Object.freeze([]);
const ATTRIBUTION = Object.freeze({ source: 'mcp_pin' as const });

/**
 * MCP tool pins (issue 42): a call through the MCP gateway names the definition of its upstream tool as the gateway
 * saw it (ToolContext.mcp); one that is not the pinned definition, or of a tool never pinned (a profile holds new
 * tools), is denied above every rule (`mcp_pin`), saying which tool, why and where to accept it. A call that does not
 * come through the gateway names no definition and gets no rule from here. `directory` returns the pins in force.
 */
export function createMcpPinSource(directory: () => PinDirectory): RuleSource {
  return {
    name: 'mcp_pins',
    attributedTo: 'mcp_pin',
    rules(context) {
      if (context.kind !== 'tool' || !context.mcp) return NONE;
      const { server, tool, sha256 } = context.mcp;
      const pinned = directory().pinned(server, tool);
      if (pinned === sha256) return NONE;
      const accept = `An operator can review and accept it on /transparency#mcp or with npx swarm mcp pins accept ${server} ${tool} --hash ${sha256}.`;
      const reason =
        pinned === undefined
          ? `The MCP tool "${tool}" of server "${server}" is new and has not been reviewed (a compliance profile holds new tools): its calls are refused until its definition (sha256 ${sha256.slice(0, 12)}…) is accepted. ${accept}`
          : `The definition of the MCP tool "${tool}" of server "${server}" changed since it was reviewed (sha256 ${pinned.slice(0, 12)}… pinned, ${sha256.slice(0, 12)}… now): its calls are refused until the new definition is accepted. ${accept}`;
      return [{ decision: 'DENY', priority: PRIORITY.mcpPin, attribution: ATTRIBUTION, reason }];
    },
  };
}
