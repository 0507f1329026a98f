'use client';

import type { ReactNode } from 'react';
import styles from './explorer.module.css';

/**
 * An explorer page: everything else after its first stop (after the console's "Skip to content"), "Skip to results".
 * It moves the focus to the table's current row, so a keyboard user reaches the first denial or event in two Tab
 * presses instead of fifty past the filters, cards and chart. Hidden until focused. `resultsId`: the results section.
 */
export function ExplorerPage({ resultsId, children }: { resultsId: string; children: ReactNode }) {
  return (
    <div className={styles.page}>
      <a
        href={`#${resultsId}`}
        className={styles.skipToResults}
        data-testid="skip-to-results"
        onClick={(e) => {
          const section = document.getElementById(resultsId);
          if (!section) return;
          e.preventDefault();
          // The table's one tab stop (the current row); without rows, the section's heading.
          const target = section.querySelector<HTMLElement>('tbody tr[tabindex="0"]') ?? section.querySelector<HTMLElement>('h2');
          if (target && !target.hasAttribute('tabindex')) target.setAttribute('tabindex', '-1');
          target?.focus();
          target?.scrollIntoView({ block: 'nearest' });
        }}
      >
        Skip to results
      </a>
      {children}
    </div>
  );
}

/** The page's heading and what it shows, with its actions (exports) on the right. */
export function ExplorerHead({ title, lead, children }: { title: string; lead: string; children?: ReactNode }) {
  return (
    <header className={styles.head}>
      <div>
        <h1>{title}</h1>
        <p className="muted">{lead}</p>
      </div>
      {children}
    </header>
  );
}

/** A line of news above the results (a copied link, what a link held that was left out). */
export function Notice({ testId, children }: { testId?: string; children: ReactNode }) {
  return (
    <p className={styles.notice} role="status" data-testid={testId}>
      {children}
    </p>
  );
}

/** The parts of a link that were not understood and were left out, named. */
export function IgnoredNotice({ ignored }: { ignored: readonly string[] }) {
  return ignored.length ? <Notice>Part of this link was not understood and was left out: {ignored.join(', ')}.</Notice> : null;
}
