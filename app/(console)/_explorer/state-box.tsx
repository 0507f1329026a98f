'use client';

import type { ReactNode } from 'react';
import type { ApiError } from '@/app/_lib/api-client';
import { signInAgainHref } from '@/app/_components/session-watch';
import styles from './explorer.module.css';
import { isWindowed, type TimeWindow } from './time-window';

/** A calm box in place of the results: nothing recorded yet, nothing on this page, and the like. */
export function StateBox({ title, testId, children }: { title: string; testId?: string; children: ReactNode }) {
  return (
    <div className={styles.stateBox} role="status" data-testid={testId}>
      <h3>{title}</h3>
      {children}
    </div>
  );
}

/** A read that failed: what could not be loaded, why in the server's words, and a way on (try again, or sign in). */
export function ErrorState({ title, error, onRetry }: { title: string; error: ApiError; onRetry: () => void }) {
  return (
    <div className={styles.stateBox} role="alert">
      <h3>{title}</h3>
      <p>{error.detail}</p>
      {error.status === 401 ? (
        <p>
          Your session has ended. <a href={signInAgainHref()}>Sign in again</a>.
        </p>
      ) : (
        <button type="button" className="button" onClick={onRetry}>
          Try again
        </button>
      )}
    </div>
  );
}

/** Grey lines where the rows will be, while the first answer of a view loads. */
export function LoadingRows({ label }: { label: string }) {
  return (
    <div className={styles.tableWrap} aria-busy="true" aria-label={label}>
      {Array.from({ length: 8 }, (_, i) => (
        <div key={i} className={styles.skeletonRow}>
          <span className={styles.skeletonLine} />
        </div>
      ))}
      <p className={styles.srOnly} role="status">
        {label}…
      </p>
    </div>
  );
}

interface InPlaceOfRows {
  /** what the rows are, in the plural: "denials", "security events" */
  what: string;
  /** the read of the view's rows, and how many it holds */
  read: { data: unknown; error: ApiError | undefined; reload: () => void };
  rows: number;
  /** the view's window and its other filters in words ("agent trainer"): with neither, nothing was recorded yet */
  window: TimeWindow;
  words: readonly string[];
  /** what appears here once something is recorded */
  emptyText: string;
  /** what nothing matched, in a sentence, and the two ways out: clear every filter, or keep them and search all time */
  sentence: string;
  onClear: () => void;
  onAllTime: () => void;
}

/**
 * What stands in place of an explorer's rows, or null when there are rows to show: the read that failed, the lines
 * of the first answer loading, nothing recorded yet, or nothing matching the filters (search all time is offered when
 * a window narrows the view and other filters are set).
 */
export function inPlaceOfRows({ what, read, rows, window, words, emptyText, sentence, onClear, onAllTime }: InPlaceOfRows): ReactNode {
  if (read.error) return <ErrorState title={`The ${what} could not be loaded`} error={read.error} onRetry={read.reload} />;
  if (!read.data) return <LoadingRows label={`Loading ${what}`} />;
  if (rows > 0) return null;
  if (!isWindowed(window) && words.length === 0) {
    return (
      <StateBox title={`No ${what} have been recorded yet`} testId="empty-state">
        <p>{emptyText}</p>
      </StateBox>
    );
  }
  return (
    <StateBox title={`No ${what} match these filters`} testId="no-match">
      <p>{sentence}</p>
      <div className={styles.stateActions}>
        <button type="button" className="button button-primary" onClick={onClear}>
          Clear all filters
        </button>
        {isWindowed(window) && words.length > 0 ? (
          <button type="button" className="button" onClick={onAllTime}>
            Search all time instead
          </button>
        ) : null}
      </div>
    </StateBox>
  );
}
