import type { DenialDetail } from '@/lib/http/responses';
import kit from '@/app/(console)/_explorer/explorer.module.css';
import { Facts } from '@/app/(console)/_explorer/detail-panel';
import { useMcpNaming } from '@/app/(console)/_mcp/mcp-naming';
import { splitMcpTool } from '@/app/(console)/_mcp/mcp-tool-name';

/** Everything recorded about a denial, field by field, with its time in the reader's zone and in UTC. */
export function DenialFacts({ denial: d }: { denial: DenialDetail }) {
  const naming = useMcpNaming();
  const mcp = d.tool_name ? splitMcpTool(d.tool_name, naming) : null;
  return (
    <Facts
      at={d.timestamp}
      facts={[
        ['Agent', d.agent_name],
        ['Tool', <code>{d.tool_name}</code>],
        // only for a call through the MCP gateway (a tool named after a configured server)
        ...(mcp
          ? ([
              [
                'MCP server',
                <>
                  <code>{mcp.server}</code> (its tool <code>{mcp.tool}</code>)
                </>,
                undefined,
                'denial-mcp-server',
              ],
            ] as const)
          : []),
        ['Rule source', d.rule_source, kit.mono],
        ['User role', d.user_role],
        ['Principal', d.principal],
        ['HTTP request', d.http_method ? `${d.http_method} ${d.http_path ?? ''}` : null, kit.mono],
        ['Tool call ID', d.tool_call_id, kit.mono],
        ['Decision ID', d.decision_id, kit.mono, 'denial-decision-id'],
        ['Policy revision', d.policy_revision, kit.mono],
      ]}
    />
  );
}
