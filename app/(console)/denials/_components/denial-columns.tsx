import type { ColumnDef } from '@tanstack/react-table';
import type { DenialJson } from '@/lib/http/responses';
import kit from '@/app/(console)/_explorer/explorer.module.css';
import { LocalTime } from '@/app/(console)/_explorer/local-time';
import styles from '@/app/(console)/denials/denials.module.css';
import { RowRuleBadge } from './rule-badge';

/** The columns the server can sort by (each has an index); the others are not sortable. */
export const SORTABLE = new Set<string>(['timestamp', 'agent_name', 'tool_name', 'rule_source']);

export const COLUMN_LABELS: Record<string, string> = {
  timestamp: 'Time',
  agent_name: 'Agent',
  tool_name: 'Tool',
  rule_source: 'Rule source',
  reason: 'Reason',
  user_role: 'Role',
  request: 'HTTP request',
  tool_call_id: 'Tool call ID',
  id: 'ID',
};

const none = <span className="muted">—</span>;
const httpRequest = (d: DenialJson) => `${d.http_method} ${d.http_path ?? ''}`;

/** The denial table's columns; a rule badge's funnel filters by its rule (`onRuleFilter`). */
export function denialColumns(onRuleFilter: (ruleSource: string) => void): ColumnDef<DenialJson>[] {
  return [
    {
      id: 'timestamp',
      accessorKey: 'timestamp',
      header: COLUMN_LABELS.timestamp,
      enableHiding: false,
      cell: ({ row }) => <LocalTime seconds={row.original.timestamp} className={kit.mono} />,
    },
    { id: 'agent_name', accessorKey: 'agent_name', header: COLUMN_LABELS.agent_name, cell: ({ row }) => row.original.agent_name ?? none },
    {
      id: 'tool_name',
      accessorKey: 'tool_name',
      header: COLUMN_LABELS.tool_name,
      // An HTTP denial's "tool" is the request it refused: say which.
      cell: ({ row }) =>
        row.original.http_method ? (
          <span className={styles.httpTool} title={httpRequest(row.original)}>
            <code>http</code> <span className={`${kit.mono} ${styles.httpPath}`}>{httpRequest(row.original)}</span>
          </span>
        ) : (
          <code>{row.original.tool_name}</code>
        ),
    },
    { id: 'rule_source', accessorKey: 'rule_source', header: COLUMN_LABELS.rule_source, cell: ({ row }) => <RowRuleBadge ruleSource={row.original.rule_source} onFilter={onRuleFilter} /> },
    { id: 'reason', accessorKey: 'reason', header: COLUMN_LABELS.reason, cell: ({ row }) => <span className={styles.reasonCell}>{row.original.reason ?? '—'}</span> },
    { id: 'user_role', accessorKey: 'user_role', header: COLUMN_LABELS.user_role, cell: ({ row }) => row.original.user_role ?? none },
    {
      id: 'request',
      accessorFn: (r) => (r.http_method ? httpRequest(r) : null),
      header: COLUMN_LABELS.request,
      cell: ({ row }) => (row.original.http_method ? <span className={kit.mono}>{httpRequest(row.original)}</span> : none),
    },
    {
      id: 'tool_call_id',
      accessorKey: 'tool_call_id',
      header: COLUMN_LABELS.tool_call_id,
      cell: ({ row }) => (row.original.tool_call_id ? <span className={kit.mono}>{row.original.tool_call_id}</span> : none),
    },
    { id: 'id', accessorKey: 'id', header: COLUMN_LABELS.id, cell: ({ row }) => <span className={kit.mono}>{row.original.id}</span> },
  ];
}
