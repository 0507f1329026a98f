'use client';

import styles from './explorer.module.css';

/**
 * What a filtered view says when nothing matches: what was asked for, and the two ways out (clear every filter, or keep
 * the filters and search all time). Used by the denial explorer and the audit page.
 */
export function NoMatch({
  title,
  sentence,
  offerAllTime,
  onClear,
  onAllTime,
}: {
  title: string;
  sentence: string;
  /** a time window narrows the view and other filters are set: searching all time may find something */
  offerAllTime: boolean;
  onClear: () => void;
  onAllTime: () => void;
}) {
  return (
    <div className={styles.stateBox} role="status" data-testid="no-match">
      <h3>{title}</h3>
      <p>{sentence}</p>
      <div className={styles.stateActions}>
        <button type="button" className="button button-primary" onClick={onClear}>
          Clear all filters
        </button>
        {offerAllTime ? (
          <button type="button" className="button" onClick={onAllTime}>
            Search all time instead
          </button>
        ) : null}
      </div>
    </div>
  );
}
