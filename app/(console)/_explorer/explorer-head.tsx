import type { ReactNode } from 'react';
import styles from './explorer.module.css';
import { SkipToResults } from './skip-to-results';

/** An explorer page: the skip link to its results first, then everything else. */
export function ExplorerPage({ resultsId, children }: { resultsId: string; children: ReactNode }) {
  return (
    <div className={styles.page}>
      <SkipToResults results={resultsId} />
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
