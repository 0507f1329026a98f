import type { DenialDetail } from '@/lib/http/responses';
import kit from '@/app/(console)/_explorer/explorer.module.css';
import styles from '@/app/(console)/denials/denials.module.css';

const DECISION_TEXT: Record<string, string> = { DENY: 'Deny', ALLOW: 'Allow', ASK: 'Ask' };

/** How the decision was made: every rule that matched, the deciding one marked; or why there is no trace. */
export function DecisionTrace({ denial: d }: { denial: DenialDetail }) {
  if (d.trace === null) {
    return <p className="muted">No trace was stored for this denial. Rejected and expired approvals are recorded when a person or the clock decides, not by a rule check.</p>;
  }
  if (d.trace.length === 0) return <p className="muted">No rule matched: the call was denied by default (fail closed).</p>;
  // The deciding rule: the trace entry that carries the denial's own rule source and decided it.
  const decidingIndex = d.trace.findIndex((r) => r.rule_source === d.rule_source && r.decision !== 'ALLOW');
  return (
    <>
      <p className={kit.fieldNote}>Every rule that matched, in the order the sources listed them. The highest priority decides; within it, Allow beats Deny beats Ask.</p>
      <ol className={styles.trace}>
        {d.trace.map((r, i) => (
          <li key={i} className={i === decidingIndex ? styles.deciding : undefined}>
            <span className={`${styles.decision} ${styles[`decision${r.decision}`] ?? ''}`}>{DECISION_TEXT[r.decision] ?? r.decision}</span>
            <span className={styles.traceMain}>
              <span className={kit.mono}>{r.rule_source}</span>
              <span className={styles.tracePriority}>priority {r.priority}</span>
              {i === decidingIndex ? <span className={styles.decidedTag}>decided</span> : null}
              <span className={styles.traceReason}>{r.reason}</span>
            </span>
          </li>
        ))}
      </ol>
    </>
  );
}
