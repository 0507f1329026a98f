'use client';

import { useEffect, useId, useRef, useState, type FormEvent } from 'react';
import { typeLabel } from '@/lib/audit/event-labels';
import kit from '@/app/(console)/_explorer/explorer.module.css';
import { ClearAll, WindowRow } from '@/app/(console)/_explorer/filters';
import type { RelativeWindow } from '@/app/(console)/_explorer/time-window';
import styles from '@/app/(console)/audit/audit.module.css';
import { hasFilters, OUTCOMES, type AuditState } from './url-state';
import { familyLabel, OUTCOME_TEXT, TYPE_FAMILIES } from './vocabulary';

/** How long the actor field waits after the last key before it applies (so a name is not searched letter by letter). */
const ACTOR_DELAY_MS = 500;

const SHORT_LABELS: Record<RelativeWindow, string> = { '1h': 'Hour', '24h': 'Day', '7d': 'Week', '30d': '30 days', all: 'All time' };

interface Props {
  state: AuditState;
  onChange: (change: Partial<AuditState>) => void;
  onClear: () => void;
}

/** The filters of the audit page: the explorers' window buttons and field styles, the event fields. */
export function AuditFilterBar({ state, onChange, onClear }: Props) {
  const id = useId();
  const [actor, setActor] = useState(state.actor ?? '');
  // The URL is the truth: back/forward must show up in the field.
  useEffect(() => setActor(state.actor ?? ''), [state.actor]);
  const exactType = state.type !== undefined && familyLabel(state.type) === undefined;

  // Every filter applies as it is chosen, the actor too: a moment after typing stops (Enter at once). Before, the
  // window, type and outcome applied at once and the actor only with Apply, so a changed actor was easily not applied.
  const typed = actor.trim();
  const onChangeRef = useRef(onChange);
  onChangeRef.current = onChange;
  useEffect(() => {
    if (typed === (state.actor ?? '')) return;
    const timer = window.setTimeout(() => onChangeRef.current({ actor: typed || undefined }), ACTOR_DELAY_MS);
    return () => window.clearTimeout(timer);
  }, [typed, state.actor]);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (typed !== (state.actor ?? '')) onChange({ actor: typed || undefined });
  };

  return (
    <section className={kit.filters} aria-label="Filters">
      <WindowRow state={state} labels={SHORT_LABELS} className={styles.windows} rangeNote="local time, from the link" onPick={(w) => onChange({ window: w, from: undefined, to: undefined })} />
      <form className={styles.fieldRow} onSubmit={submit} role="search" aria-label="Filter security events">
        <div>
          <label className={kit.fieldLabel} htmlFor={`${id}-type`}>
            Event type
          </label>
          <select id={`${id}-type`} value={state.type ?? ''} onChange={(e) => onChange({ type: e.target.value || undefined })}>
            <option value="">Security events (logged decisions apart)</option>
            {TYPE_FAMILIES.map((f) => (
              <option key={f.value} value={f.value}>
                {f.label} ({f.value})
              </option>
            ))}
            {exactType && state.type ? (
              <option value={state.type}>
                {typeLabel(state.type)} ({state.type})
              </option>
            ) : null}
          </select>
        </div>
        <div>
          <label className={kit.fieldLabel} htmlFor={`${id}-actor`}>
            Actor
          </label>
          <input id={`${id}-actor`} value={actor} placeholder="Any actor, e.g. alex or agent:trainer" maxLength={200} onChange={(e) => setActor(e.target.value)} />
        </div>
        <div>
          <label className={kit.fieldLabel} htmlFor={`${id}-outcome`}>
            Outcome
          </label>
          <select id={`${id}-outcome`} value={state.outcome ?? ''} onChange={(e) => onChange({ outcome: OUTCOMES.find((o) => o === e.target.value) })}>
            <option value="">Any outcome</option>
            {OUTCOMES.map((o) => (
              <option key={o} value={o}>
                {OUTCOME_TEXT[o].label}
              </option>
            ))}
          </select>
        </div>
        <div className={kit.fieldActions}>
          <ClearAll shown={hasFilters(state)} onClear={onClear} />
        </div>
      </form>
      {state.decision ? (
        <p className={styles.decisionFilter}>
          Only decision <code>{state.decision}</code>{' '}
          <button type="button" className="button button-quiet" onClick={() => onChange({ decision: undefined })}>
            Show all decisions
          </button>
        </p>
      ) : null}
    </section>
  );
}
