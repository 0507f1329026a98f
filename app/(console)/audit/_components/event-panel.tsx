'use client';

import type { SecurityEventJson } from '@/lib/http/responses';
import kit from '@/app/(console)/_explorer/explorer.module.css';
import { DetailPanel } from '@/app/(console)/_explorer/detail-panel';
import { localDateTime, localZone, utcDateTime } from '@/app/(console)/_explorer/format';
import { JsonView } from '@/app/(console)/_explorer/json-view';
import type { OpenRow } from '@/app/(console)/_explorer/use-open-row';
import styles from '@/app/(console)/audit/audit.module.css';
import { OutcomeLabel } from './outcome-label';
import { typeLabel } from '@/lib/audit/event-labels';

interface Props {
  id: number;
  /** undefined: there is no such event */
  event: SecurityEventJson | undefined;
  openRow: OpenRow;
  onDecision: (decisionId: string) => void;
}

const none = <span className="muted">none</span>;

/** One security event in full: who, what, the outcome, its detail, and what ties it to the evidence. */
export function EventPanel({ id, event: e, openRow, onDecision }: Props) {
  return (
    <DetailPanel
      id={id}
      noun="Event"
      openRow={openRow}
      stepLabels={{ prev: 'Newer event in the list', next: 'Older event in the list' }}
      closeText="✕"
    >
      {!e ? (
        <p className="muted">There is no security event #{id}.</p>
      ) : (
        <>
          <p className={kit.panelLead}>
            <strong>{typeLabel(e.type)}</strong> <code>{e.type}</code> — <OutcomeLabel outcome={e.outcome} />
          </p>
          <dl className={kit.facts}>
            <dt>Local time</dt>
            <dd>
              <span className={kit.mono}>{localDateTime(e.timestamp)}</span> <span className="muted">({localZone(e.timestamp * 1000)})</span>
            </dd>
            <dt>UTC</dt>
            <dd className={kit.mono}>{utcDateTime(e.timestamp)}</dd>
            <dt>Actor</dt>
            <dd>
              {e.actor} <span className="muted">({e.actor_role ?? 'no role'})</span>
            </dd>
            <dt>Target</dt>
            <dd>{e.target ?? none}</dd>
            <dt>Decision ID</dt>
            <dd className={kit.mono}>{e.decision_id ?? none}</dd>
            <dt>Policy revision</dt>
            <dd className={kit.mono}>{e.policy_revision ?? none}</dd>
            <dt>IP</dt>
            <dd className={kit.mono}>{e.ip ?? none}</dd>
            <dt>Row hash</dt>
            <dd className={`${kit.mono} ${styles.hash}`}>{e.row_hash ?? <span className="muted">none (written before the chain began)</span>}</dd>
          </dl>
          {e.decision_id ? (
            <div className={kit.panelActions}>
              <button type="button" className="button" onClick={() => onDecision(e.decision_id ?? '')}>
                Only this decision
              </button>
            </div>
          ) : null}
          <h3 className={kit.panelSection}>Detail</h3>
          {e.detail === null || e.detail === undefined ? (
            <p className="muted">No detail was recorded for this event.</p>
          ) : (
            <pre className={kit.json} data-testid="event-detail-json" tabIndex={0} aria-label="Detail">
              <JsonView value={e.detail} />
            </pre>
          )}
        </>
      )}
    </DetailPanel>
  );
}
