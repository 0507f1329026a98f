import type { Approval } from './approval-types';
import { ColumnHeads } from '@/app/_components/data-table';
import { ArgumentsView } from './arguments-view';
import type { McpNaming } from '@/app/(console)/_mcp/mcp-tool-name';
import { ToolName } from './tool-name';
import { decidedByText } from './approval-text';
import styles from './approvals.module.css';
import { Time } from '@/app/_components/time';

export interface HistoryFilter {
  status?: string;
  agent?: string;
  gate?: string;
  decided_by?: string;
}

const STATUSES = [
  ['', 'Every outcome'],
  ['consumed', 'Approved and run'],
  ['approved', 'Approved, not yet run'],
  ['rejected', 'Rejected'],
  ['expired', 'Expired'],
] as const;

const TEXT_FIELDS = [
  ['agent', 'Agent', 'any'],
  ['gate', 'Gate', 'any'],
  ['decided_by', 'Decided by', 'anyone'],
] as const;

/** Every decided request: who decided, when, why, and what came of it. A plain GET form, so the URL is the filter. */
export function ApprovalHistory({ rows, filter, mcpNaming }: { rows: Approval[]; filter: HistoryFilter; mcpNaming: McpNaming }) {
  return (
    <section aria-labelledby="history-title">
      <h2 id="history-title" className="visually-hidden">
        History
      </h2>
      <form className={styles.filters} method="get" action="/approvals">
        <input type="hidden" name="tab" value="history" />
        <label>
          Outcome
          <select name="status" defaultValue={filter.status ?? ''}>
            {STATUSES.map(([v, l]) => (
              <option key={v} value={v}>
                {l}
              </option>
            ))}
          </select>
        </label>
        {TEXT_FIELDS.map(([name, label, placeholder]) => (
          <label key={name}>
            {label}
            <input name={name} defaultValue={filter[name] ?? ''} placeholder={placeholder} />
          </label>
        ))}
        <button type="submit" className="button">
          Filter
        </button>
      </form>
      {rows.length === 0 ? (
        <div className="panel empty">No decided request matches this filter.</div>
      ) : (
        <div className="table-wrap">
          <table className={`table ${styles.historyTable}`} aria-label="Decided approval requests">
            {/* fixed shares of the width: Reason always on screen at 1440 px, whatever the arguments hold */}
            <colgroup>
              {[12, 9, 14, 20, 13, 9, 23].map((w, i) => (
                <col key={i} style={{ width: `${w}%` }} />
              ))}
            </colgroup>
            <ColumnHeads labels={['Decided', 'Outcome', 'Request', 'Arguments', 'Requested by', 'Decided by', 'Reason']} />
            <tbody>
              {rows.map((a) => (
                <tr key={a.id}>
                  <td>{a.decided_at ? <Time seconds={a.decided_at} /> : '—'}</td>
                  <td>
                    <span className={`${styles.outcome} ${styles[`outcome_${a.status}`] ?? ''}`}>{a.outcome}</span>
                  </td>
                  <td>
                    <span className="badge badge-hitl">{a.gate}</span> {a.agent} → <ToolName name={a.tool} naming={mcpNaming} />
                  </td>
                  <td className={styles.argsCell}>
                    <ArgumentsView args={a.arguments} />
                  </td>
                  <td>
                    {a.requested_by}
                    {a.client ? <div className="muted">through {a.client}</div> : null}
                  </td>
                  <td>{decidedByText(a) ?? '—'}</td>
                  <td className={`reason ${styles.reasonCell}`}>{a.decision_reason ?? '—'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
