/** Small pieces shared by the queue cards and the confirmation dialogs. */
import type { Approval, Risk } from './approval-types';
import { keyArguments, RISK_LABEL } from './approval-text';
import { ProductionValue } from './arguments-view';
import { QueueToolName } from './tool-name';
import styles from './approvals.module.css';

const RISK_MARK: Record<Risk, string> = { low: '●', medium: '◆', high: '▲' };

/** The gate's risk as a badge: a symbol and a text label, colour only as a second signal. */
export function RiskBadge({ risk }: { risk: Risk }) {
  return (
    <span className={`${styles.risk} ${styles[`risk_${risk}`] ?? ''}`} data-risk={risk}>
      <span aria-hidden="true">{RISK_MARK[risk]} </span>
      {RISK_LABEL[risk]}
    </span>
  );
}

/** The gate's risk, its name, and how many people must approve it when that is more than one. */
export function GateTags({ a }: { a: Approval }) {
  return (
    <p className={styles.tags}>
      <RiskBadge risk={a.risk} />
      <span className={styles.gateTag}>
        gate <strong>{a.gate}</strong>
      </span>
      {a.approvals_required > 1 ? <span className={styles.gateTag}>{a.approvals_required === 2 ? 'two-person gate' : `${a.approvals_required} approvals needed`}</span> : null}
    </p>
  );
}

/**
 * One request on one line: "deployer → deploy_serving · model_id m-42 · env prod (production)". `whole` (a dialog where
 * a person decides): every value whole, wrapping, never cut.
 */
export function RequestLine({ a, max = 4, whole = false }: { a: Approval; max?: number; whole?: boolean }) {
  const args = keyArguments(a.arguments, max, whole);
  return (
    <span className={styles.requestLine}>
      <span className={styles.requestWho}>
        <strong>{a.agent}</strong> → <QueueToolName name={a.tool} />
      </span>
      {args.map((k) => (
        <span key={k.key} className={styles.keyArg}>
          <span className={styles.keyArgName}>{k.key}</span> {k.production ? <ProductionValue text={k.value} /> : <code>{k.value}</code>}
          <span className="visually-hidden">;</span>
        </span>
      ))}
    </span>
  );
}

/** "Requested by agent:desk through Claude Desktop 1.2": who asked, and the MCP client it asked through (as it named itself). */
export function RequestedBy({ a }: { a: Pick<Approval, 'requested_by' | 'client'> }) {
  return (
    <span className={styles.requestedBy}>
      Requested by <strong>{a.requested_by}</strong>
      {a.client ? (
        <>
          {' '}
          through <strong className={styles.client}>{a.client}</strong>
        </>
      ) : null}
    </span>
  );
}
