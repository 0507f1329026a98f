import { useMcpNaming } from '@/app/(console)/_mcp/mcp-naming';
import { splitMcpTool, type McpNaming } from '@/app/(console)/_mcp/mcp-tool-name';
import styles from './approvals.module.css';

/**
 * A tool as an operator reads it: an MCP tool as the upstream's own tool and its server ("write_file on MCP server
 * files", the full name kept as the tooltip: it is what rules and gates name), any other tool by its name.
 */
export function ToolName({ name, naming }: { name: string; naming: McpNaming }) {
  const split = splitMcpTool(name, naming);
  if (!split) return <code className={styles.tool}>{name}</code>;
  return (
    <span className={styles.mcpTool} title={name} data-mcp-server={split.server}>
      <code className={styles.tool}>{split.tool}</code> <span className={styles.mcpServer}>on MCP server <code>{split.server}</code></span>
    </span>
  );
}

/** ToolName with the naming the page provided (McpNamingProvider): for the queue's client parts. */
export function QueueToolName({ name }: { name: string }) {
  return <ToolName name={name} naming={useMcpNaming()} />;
}
