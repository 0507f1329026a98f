'use client';

import { useEffect, useRef, type ReactNode } from 'react';
import styles from './explorer.module.css';
import { stepping, type CanStep } from './stepping';

interface Props {
  /** the open row (the heading takes the focus whenever it changes) */
  id: number;
  /** the heading's id (aria-labelledby) and the panel's data-testid */
  titleId: string;
  testId: string;
  title: ReactNode;
  /** present when the open row is in the list: the arrows and Up/Down/j/k move through it */
  onStep?: (delta: 1 | -1) => void;
  canStep: CanStep;
  /** the step buttons' names, e.g. "Previous denial in the list" */
  stepLabels: { prev: string; next: string };
  onClose: () => void;
  /** what the close button shows ("Close", "✕"); it is named "Close the details (Escape)" either way */
  closeText: ReactNode;
  children: ReactNode;
}

/**
 * The explorers' detail panel: a side sheet over the page (not modal: the list stays usable), its heading focused when
 * a row opens, stepping through the list, closed by its button or Escape (use-escape-to-close.ts).
 */
export function DetailPanel({ id, titleId, testId, title, onStep, canStep, stepLabels, onClose, closeText, children }: Props) {
  const headingRef = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    headingRef.current?.focus();
  }, [id]);
  return (
    <aside className={styles.panel} role="dialog" aria-modal="false" aria-labelledby={titleId} data-testid={testId} {...stepping(onStep, canStep)}>
      <header className={styles.panelHead}>
        <h2 id={titleId} ref={headingRef} tabIndex={-1}>
          {title}
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
          <button type="button" className="button button-quiet" onClick={onClose} aria-label="Close the details (Escape)">
            {closeText}
          </button>
        </div>
      </header>
      <div className={styles.panelBody}>{children}</div>
    </aside>
  );
}
