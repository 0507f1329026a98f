import type { ReactNode } from 'react';
import type { Approval } from './approval-types';
import { plainReason } from './approval-text';
import { ArgumentsView } from './arguments-view';
import { ApprovalProgress } from './card-parts';
import { useMcpNaming } from '@/app/(console)/_mcp/mcp-naming';
import { QueueToolName } from './tool-name';
import { toolWords } from '@/app/(console)/_mcp/mcp-tool-name';
import { GateTags, RequestedBy, RequestLine, RiskBadge } from './request-parts';
import styles from './approvals.module.css';

interface Props {
  a: Approval;
  /** what tells it apart from a request that looks the same ("model_id m-42") */
  twin: string | undefined;
  compact: boolean;
  isCurrent: boolean;
  /** the request a link pointed at, still the one the person looks at */
  highlighted: boolean;
  /** the Select box (operators only), ticked or not */
  select: { checked: boolean; onToggle: () => void } | null;
  me: string;
  now: number;
  /** the card's times (card-parts.tsx) and decision buttons */
  times: ReactNode;
  actions: ReactNode;
  cardRef: (el: HTMLElement | null) => void;
  onFocus: () => void;
}

/** One pending request: who wants to run what, why it waits, its arguments, its times, and what can be done. */
export function ApprovalCard({ a, twin, compact, isCurrent, highlighted, select, me, now, times, actions, cardRef, onFocus }: Props) {
  const reason = plainReason(a);
  const naming = useMcpNaming();
  const className = [styles.card, compact ? styles.compactCard : '', isCurrent ? styles.current : '', highlighted ? styles.highlighted : '', select?.checked ? styles.selected : ''].join(' ');
  return (
    <li
      ref={cardRef}
      tabIndex={0}
      className={className}
      aria-label={`${a.agent} wants to run ${toolWords(a.tool, naming)}${twin ? `, ${twin}` : ''}${highlighted ? ' (the request the link points to)' : ''}`}
      aria-current={isCurrent ? 'true' : undefined}
      data-approval-id={a.id}
      data-highlighted={highlighted ? 'true' : undefined}
      onFocus={onFocus}
    >
      {compact ? (
        <div className={styles.compactRow}>
          {select ? (
            <label className={styles.select}>
              <input type="checkbox" checked={select.checked} onChange={select.onToggle} />
              <span className="visually-hidden"> Select</span>
            </label>
          ) : null}
          <RiskBadge risk={a.risk} />
          <span className={styles.compactWhat}>
            <RequestLine a={a} max={3} />
          </span>
          <span className={styles.compactMeta}>
            gate <strong>{a.gate}</strong>
            {a.approvals_required > 1 ? ` · ${a.approvals.length} of ${a.approvals_required} approvals` : ''} · {times}
          </span>
          {actions}
        </div>
      ) : (
        <>
          <div className={styles.cardHead}>
            <h3 className={styles.ask}>
              <span className={styles.agent}>{a.agent}</span> wants to run <QueueToolName name={a.tool} />
              {twin ? <span className={styles.twin}> · {twin}</span> : null}
            </h3>
            {select ? (
              <label className={styles.select}>
                <input type="checkbox" checked={select.checked} onChange={select.onToggle} /> Select
              </label>
            ) : null}
          </div>
          {highlighted ? <p className={styles.linkedNote}>The request the link points to.</p> : null}
          <GateTags a={a} />
          <p className={styles.why}>
            <strong>Why it waits:</strong> {a.gate_description ? `${a.gate_description} ` : ''}
            {reason ?? (a.gate_description ? '' : `Calls behind the “${a.gate}” gate need a person to approve them.`)}
          </p>
          <ArgumentsView args={a.arguments} markProduction />
          {a.approvals_required > 1 ? <ApprovalProgress a={a} me={me} now={now} /> : null}
          <p className={styles.meta}>
            <RequestedBy a={a} /> · {times} · rule <code>{a.rule_source}</code>
          </p>
          {actions}
        </>
      )}
    </li>
  );
}
