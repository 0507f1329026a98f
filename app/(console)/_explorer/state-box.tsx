'use client';

import type { ReactNode } from 'react';
import type { ApiError } from '@/app/_lib/api-client';
import { signInAgainHref } from '@/app/_components/session-watch';
import styles from './explorer.module.css';

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
