import type { ReactNode } from 'react';

/** The header row of a plain data table: one column header per label. */
export function ColumnHeads({ labels }: { labels: readonly string[] }) {
  return (
    <thead>
      <tr>
        {labels.map((l) => (
          <th key={l} scope="col">
            {l}
          </th>
        ))}
      </tr>
    </thead>
  );
}

interface Props {
  /** the table's accessible name (aria-label), or its caption, read by screen readers only */
  label?: string;
  caption?: string;
  heads: readonly string[];
  /** the page's own classes, added to the global .table-wrap and .table */
  wrapClassName?: string;
  className?: string;
  /**
   * on a narrow screen each row reads as a small card, its cells labelled by their `data-label`, rather than a table
   * that scrolls sideways (every cell of the rows must carry data-label)
   */
  cardsWhenNarrow?: boolean;
  /** the rows */
  children: ReactNode;
}

/** A plain data table in the console's look, scrolling sideways inside its frame on a narrow screen (or read as cards). */
export function DataTable({ label, caption, heads, wrapClassName, className, cardsWhenNarrow, children }: Props) {
  const classes = ['table', cardsWhenNarrow ? 'table-cards-when-narrow' : '', className ?? ''].filter(Boolean).join(' ');
  return (
    <div className={wrapClassName ? `table-wrap ${wrapClassName}` : 'table-wrap'}>
      <table className={classes} aria-label={label}>
        {caption ? <caption className="visually-hidden">{caption}</caption> : null}
        <ColumnHeads labels={heads} />
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}
