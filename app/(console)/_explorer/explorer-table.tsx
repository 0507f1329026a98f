import type { ReactNode } from 'react';
import styles from './explorer.module.css';

interface Props {
  /** the table's accessible name ("Denials", "Security events") */
  label: string;
  /** the id of the keyboard hint the table is described by */
  hintId: string;
  /** what the rows are called in the hint: "denials", "events" */
  rowsName: string;
  /** the rows on screen belong to an earlier view: dimmed, aria-busy (the specs wait for it to be false) */
  busy: boolean;
  /** controls beside the hint (the denials' column menu) */
  tools?: ReactNode;
  /** the page's own classes, added to the kit's */
  classNames?: { hint?: string; wrap?: string; table?: string };
  /** the header row(s) */
  head: ReactNode;
  /** the rows: each with rowProps() of use-row-navigation.ts and rowClassName() */
  children: ReactNode;
}

/** The class of a row: every row opens on click; the open one is marked. */
export const rowClassName = (open: boolean): string => `${styles.row} ${open ? styles.rowOpen : ''}`;

/**
 * The explorers' results table: one tab stop (use-row-navigation.ts), its keyboard hint, dimmed while the next view
 * loads, scrolling sideways inside itself on a narrow screen.
 */
export function ExplorerTable({ label, hintId, rowsName, busy, tools, classNames = {}, head, children }: Props) {
  const hint = (
    <p id={hintId} className={`${styles.keysHint} ${classNames.hint ?? ''}`}>
      <kbd>↑</kbd> <kbd>↓</kbd> move between {rowsName}, <kbd>Enter</kbd> opens one, <kbd>Esc</kbd> closes it.
    </p>
  );
  return (
    <div className={styles.tableBlock}>
      {tools ? (
        <div className={styles.tableTools}>
          {hint}
          {tools}
        </div>
      ) : (
        hint
      )}
      <div className={`${styles.tableWrap} ${classNames.wrap ?? ''} ${busy ? styles.stale : ''}`}>
        <table className={`table ${styles.table} ${classNames.table ?? ''}`} aria-label={label} aria-describedby={hintId} aria-busy={busy}>
          {head}
          <tbody>{children}</tbody>
        </table>
      </div>
    </div>
  );
}
