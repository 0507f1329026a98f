import type { ReactNode } from 'react';
import styles from './explorer.module.css';

interface Props {
  /** the section's id (the target of "Skip to results") */
  id: string;
  titleId: string;
  /** "1–50 of 270 · newest first": said again whenever it changes */
  title: ReactNode;
  /** beside the title (the denials' pager) */
  tools?: ReactNode;
  /** under the results (times, what the view holds) */
  footNote?: ReactNode;
  children: ReactNode;
}

/** The results of an explorer: a live heading that counts them, the table (or its state), a foot note. */
export function ResultsSection({ id, titleId, title, tools, footNote, children }: Props) {
  return (
    <section className={styles.results} aria-labelledby={titleId} id={id}>
      <div className={styles.resultsHead}>
        <h2 id={titleId} className={styles.resultsTitle} aria-live="polite">
          {title}
        </h2>
        {tools}
      </div>
      {children}
      {footNote ? <p className={styles.footNote}>{footNote}</p> : null}
    </section>
  );
}

/** The muted part of a results title: "· newest first". */
export function ResultsSort({ children }: { children: ReactNode }) {
  return <span className={styles.resultsSort}>{children}</span>;
}
