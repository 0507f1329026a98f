'use client';

import styles from '@/app/(console)/denials/denials.module.css';
import { badgeClass } from './families';

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
