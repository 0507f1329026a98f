'use client';

import styles from './explorer.module.css';

/**
 * The first stop of the page's own content (after the console's "Skip to content"): it moves the focus to the table's
 * current row, so a keyboard user reaches the first denial or event in two Tab presses instead of fifty past the
 * filters, cards and chart. Hidden until focused. `results`: the id of the results section.
 */
export function SkipToResults({ results }: { results: string }) {
  return (
    <a
      href={`#${results}`}
      className={styles.skipToResults}
      data-testid="skip-to-results"
      onClick={(e) => {
        const section = document.getElementById(results);
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
  );
}
