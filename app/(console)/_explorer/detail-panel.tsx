'use client';

import { Fragment, useEffect, useRef, type ReactNode } from 'react';
import styles from './explorer.module.css';
import { localDateTime, localZone, utcDateTime } from './format';
import { stepping } from './stepping';
import type { OpenRow } from './use-open-row';

interface Props {
  /** the open row (the heading takes the focus whenever it changes) */
  id: number;
  /** what the open row is ("Denial"): the heading says "Denial #42", its id is denial-title, the panel's test id denial-detail */
  noun: string;
  /** closes the panel; steps through the list when the open row is in it (the arrows, and Up/Down/j/k) */
  openRow: OpenRow;
  /** the step buttons' names, e.g. "Previous denial in the list" */
  stepLabels: { prev: string; next: string };
  /** what the close button shows ("Close", "✕"); it is named "Close the details (Escape)" either way */
  closeText: ReactNode;
  children: ReactNode;
}

/**
 * The explorers' detail panel: a side sheet over the page (not modal: the list stays usable), its heading focused when
 * a row opens, stepping through the list, closed by its button or Escape (use-open-row.ts).
 */
export function DetailPanel({ id, noun, openRow, stepLabels, closeText, children }: Props) {
  const { onStep, canStep } = openRow;
  const headingRef = useRef<HTMLHeadingElement>(null);
  const titleId = `${noun.toLowerCase()}-title`;
  useEffect(() => {
    headingRef.current?.focus();
  }, [id]);
  return (
    <aside className={styles.panel} role="dialog" aria-modal="false" aria-labelledby={titleId} data-testid={`${noun.toLowerCase()}-detail`} {...stepping(onStep, canStep)}>
      <header className={styles.panelHead}>
        <h2 id={titleId} ref={headingRef} tabIndex={-1}>
          {noun} <span className={styles.mono}>#{id}</span>
        </h2>
        <div className={styles.panelNav}>
          {onStep ? (
            <>
              <button type="button" className="button button-quiet" disabled={!canStep.prev} onClick={() => onStep(-1)} aria-label={stepLabels.prev}>
                ↑
              </button>
              <button type="button" className="button button-quiet" disabled={!canStep.next} onClick={() => onStep(1)} aria-label={stepLabels.next}>
                ↓
              </button>
            </>
          ) : null}
          <button type="button" className="button button-quiet" onClick={openRow.close} aria-label="Close the details (Escape)">
            {closeText}
          </button>
        </div>
      </header>
      <div className={styles.panelBody}>{children}</div>
    </aside>
  );
}

/** One fact of an open row: its label, its value (null: "none"), and the value's class and test id. */
export type Fact = readonly [label: string, value: ReactNode, className?: string, testId?: string];

/** Everything recorded about a row, field by field, its time first: in the reader's zone and in UTC. */
export function Facts({ at, facts }: { at: number; facts: readonly Fact[] }) {
  return (
    <dl className={styles.facts}>
      <dt>Local time</dt>
      <dd>
        <span className={styles.mono}>{localDateTime(at)}</span> <span className="muted">({localZone(at * 1000)})</span>
      </dd>
      <dt>UTC</dt>
      <dd className={styles.mono}>{utcDateTime(at)}</dd>
      {facts.map(([label, value, className, testId]) => (
        <Fragment key={label}>
          <dt>{label}</dt>
          <dd className={className} data-testid={testId}>
            {value ?? <span className="muted">none</span>}
          </dd>
        </Fragment>
      ))}
    </dl>
  );
}
