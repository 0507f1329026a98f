'use client';

import { stepping } from '@/app/(console)/denials/_components/detail-panel';
import { useEffect, useRef } from 'react';
import denials from '@/app/(console)/denials/denials.module.css';
import { JsonView } from '@/app/(console)/denials/_components/detail-panel';
import { localDateTime, localZone, utcDateTime } from '@/app/(console)/denials/_components/format';
import styles from '@/app/(console)/audit/audit.module.css';
import type { SecurityEvent } from './api';
import { Outcome } from './events-table';
import { typeLabel } from './vocabulary';

interface Props {
  id: number;
  /** undefined: there is no such event */
  event: SecurityEvent | undefined;
  onClose: () => void;
  onStep?: (delta: 1 | -1) => void;
  canStep: { prev: boolean; next: boolean };
  onDecision: (decisionId: string) => void;
}

const none = <span className="muted">none</span>;

/** One security event in full: who, what, the outcome, its detail, and what ties it to the evidence. */
export function EventPanel({ id, event: e, onClose, onStep, canStep, onDecision }: Props) {
  const headingRef = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    headingRef.current?.focus();
  }, [id]);

  return (
    <aside
      className={denials.panel}
      role="dialog"
      aria-modal="false"
      aria-labelledby="event-title"
      data-testid="event-detail"
      {...stepping(onStep, canStep)}
    >
      <header className={denials.panelHead}>
        <h2 id="event-title" ref={headingRef} tabIndex={-1}>
          Event <span className={denials.mono}>#{id}</span>
        </h2>
        <div className={denials.panelNav}>
          {onStep ? (
            <>
              <button type="button" className="button button-quiet" disabled={!canStep.prev} onClick={() => onStep(-1)} aria-label="Newer event in the list">
                ↑
              </button>
              <button type="button" className="button button-quiet" disabled={!canStep.next} onClick={() => onStep(1)} aria-label="Older event in the list">
                ↓
              </button>
            </>
          ) : null}
          <button type="button" className="button button-quiet" onClick={onClose} aria-label="Close the details (Escape)">
            ✕
          </button>
        </div>
      </header>
      <div className={denials.panelBody}>
        {!e ? (
          <p className="muted">There is no security event #{id}.</p>
        ) : (
          <>
            <p className={denials.panelLead}>
              <strong>{typeLabel(e.type)}</strong> <code>{e.type}</code> — <Outcome outcome={e.outcome} />
            </p>
            <dl className={denials.facts}>
              <dt>Local time</dt>
              <dd>
                <span className={denials.mono}>{localDateTime(e.timestamp)}</span> <span className="muted">({localZone(e.timestamp * 1000)})</span>
              </dd>
              <dt>UTC</dt>
              <dd className={denials.mono}>{utcDateTime(e.timestamp)}</dd>
              <dt>Actor</dt>
              <dd>
                {e.actor} <span className="muted">({e.actor_role ?? 'no role'})</span>
              </dd>
              <dt>Target</dt>
              <dd>{e.target ?? none}</dd>
              <dt>Decision ID</dt>
              <dd className={denials.mono}>{e.decision_id ?? none}</dd>
              <dt>Policy revision</dt>
              <dd className={denials.mono}>{e.policy_revision ?? none}</dd>
              <dt>IP</dt>
              <dd className={denials.mono}>{e.ip ?? none}</dd>
              <dt>Row hash</dt>
              <dd className={`${denials.mono} ${styles.hash}`}>{e.row_hash ?? <span className="muted">none (written before the chain began)</span>}</dd>
            </dl>
            {e.decision_id ? (
              <div className={denials.panelActions}>
                <button type="button" className="button" onClick={() => onDecision(e.decision_id ?? '')}>
                  Only this decision
                </button>
              </div>
            ) : null}
            <h3 className={denials.panelSection}>Detail</h3>
            {e.detail === null || e.detail === undefined ? (
              <p className="muted">No detail was recorded for this event.</p>
            ) : (
              <pre className={denials.json} data-testid="event-detail-json" tabIndex={0} aria-label="Detail">
                <JsonView value={e.detail} />
              </pre>
            )}
          </>
        )}
      </div>
    </aside>
  );
}
