'use client';

import type { SecurityEventJson } from '@/lib/http/responses';
import kit from '@/app/(console)/_explorer/explorer.module.css';
import { DetailPanel, Facts } from '@/app/(console)/_explorer/detail-panel';
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
          <Facts
            at={e.timestamp}
            facts={[
              [
                'Actor',
                <>
                  {e.actor} <span className="muted">({e.actor_role ?? 'no role'})</span>
                </>,
              ],
              ['Target', e.target],
              ['Decision ID', e.decision_id, kit.mono],
              ['Policy revision', e.policy_revision, kit.mono],
              ['IP', e.ip, kit.mono],
              ['Row hash', e.row_hash ?? <span className="muted">none (written before the chain began)</span>, `${kit.mono} ${styles.hash}`],
            ]}
          />
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
