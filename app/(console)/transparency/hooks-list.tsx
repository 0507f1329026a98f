import type { TransparencyReport } from '@/lib/flags/transparency';
import { DataTable } from '@/app/_components/data-table';
import { FileStatus } from './rule-sources';
import styles from './transparency.module.css';

type Hooks = TransparencyReport['hooks'];

const EVENT_LABEL: Record<string, string> = {
  before_tool_call: 'Before a tool call',
  after_tool_call: 'After a tool call',
  approval_requested: 'Approval requested',
  approval_decided: 'Approval decided',
  denied: 'A call denied',
};

/** The lifecycle hooks in force: config/hooks.yaml, then the hooks registered in code. */
export function HooksList({ hooks }: { hooks: Hooks }) {
  return (
    <>
      <p className={styles.sectionLead}>
        Hooks act on tool calls the rules allow or send to a person: they can block a call, rewrite its arguments, limit
        its rate, or ask a webhook or a program. The rewritten call is decided again, so a hook never carries a call past a
        rule. Other hooks are told of approvals, denials and finished calls. A webhook or program that cannot answer blocks
        the call unless its hook says otherwise.
      </p>
      {hooks.file ? <FileStatus file={hooks.file} what="Hooks file" missingMeans="No hooks are configured." /> : null}
      {hooks.hooks.length === 0 ? (
        <p className={`panel ${styles.quietPanel}`}>No hooks in the file: tool calls are decided by the rules alone.</p>
      ) : (
        <DataTable label="Hooks in force" heads={['Hook', 'When', 'Applies to', 'What it does and why']} wrapClassName={styles.wrap}>
          {hooks.hooks.map((h) => (
            <tr key={h.id}>
              <td className="nowrap">
                <code>{h.rule_source}</code>
                <div className="muted">{h.position}</div>
              </td>
              <td className="nowrap">{EVENT_LABEL[h.event] ?? h.event}</td>
              <td>
                {h.conditions.length === 0 && !h.when ? (
                  <span className="muted">every tool call</span>
                ) : (
                  <ul className={styles.conditions}>
                    {h.conditions.map((c) => (
                      <li key={c}>{c}</li>
                    ))}
                    {h.when ? (
                      <li>
                        only when <code>{h.when}</code>
                      </li>
                    ) : null}
                  </ul>
                )}
              </td>
              <td className={styles.description}>
                {h.does}
                {h.on_error === 'allow' ? <div className="muted">If it cannot answer, the call goes through.</div> : null}
                {h.description ? <div className="muted">{h.description}</div> : null}
                {h.off_because ? <div className={styles.experimentLabel}>Not running: {h.off_because}</div> : null}
              </td>
            </tr>
          ))}
        </DataTable>
      )}
      {hooks.registered.length > 0 ? (
        <>
          <h3 className={styles.subhead}>Registered in code</h3>
          <ul className={styles.conditions} aria-label="Hooks registered in code">
            {hooks.registered.map((h) => (
              <li key={h.id}>
                <code>{h.rule_source}</code> · {EVENT_LABEL[h.event] ?? h.event}
                {h.off_because ? <span className="muted"> · not running: {h.off_because}</span> : null}
              </li>
            ))}
          </ul>
        </>
      ) : null}
    </>
  );
}
