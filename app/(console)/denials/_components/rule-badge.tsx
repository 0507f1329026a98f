'use client';

import { ruleSourceFamily } from '@/lib/audit/denials/vocabulary';
import styles from '@/app/(console)/denials/denials.module.css';

/** The class of the global badge colours (app/globals.css) for a rule source's family. */
const badgeClass = (ruleSource: string): string => `badge badge-${ruleSourceFamily(ruleSource).replace(/[^a-z_]/g, '')}`;

/**
 * A rule-source badge that filters by its rule when clicked. Its text is the rule source itself, so the colour is
 * never the only sign. In the table it is left out of the tab order (the row is the keyboard stop, and the detail
 * panel offers the same filter as a button).
 */
export function RuleBadge({ ruleSource, onFilter, tabbable = true }: { ruleSource: string; onFilter: (ruleSource: string) => void; tabbable?: boolean }) {
  return (
    <button
      type="button"
      className={`${badgeClass(ruleSource)} ${styles.badgeButton}`}
      title={`Show only denials by ${ruleSource}`}
      tabIndex={tabbable ? undefined : -1}
      onClick={(e) => {
        // Inside a row: filter, do not also open the row.
        e.stopPropagation();
        onFilter(ruleSource);
      }}
    >
      {ruleSource}
    </button>
  );
}

/**
 * The rule source in a table row: the badge is part of the row (a click on it opens the row, like anywhere else in the
 * row), and the small funnel beside it is the one target that filters by the rule. Out of the tab order: the row is
 * the keyboard stop, and the detail panel offers the same filter as a button.
 */
export function RowRuleBadge({ ruleSource, onFilter }: { ruleSource: string; onFilter: (ruleSource: string) => void }) {
  return (
    <span className={styles.rowBadge}>
      <span className={badgeClass(ruleSource)} title={ruleSource}>
        {ruleSource}
      </span>
      <button
        type="button"
        className={styles.badgeFilter}
        aria-label={`Show only denials by ${ruleSource}`}
        title={`Show only denials by ${ruleSource}`}
        tabIndex={-1}
        onClick={(e) => {
          // The filter itself was the target: filter, do not also open the row.
          e.stopPropagation();
          onFilter(ruleSource);
        }}
      >
        <svg viewBox="0 0 16 16" width="12" height="12" aria-hidden="true" focusable="false">
          <path d="M1.5 2h13l-5 6v5l-3 1.5V8z" fill="currentColor" />
        </svg>
      </button>
    </span>
  );
}
