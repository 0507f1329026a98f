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
  /** the rows */
  children: ReactNode;
}

/** A plain data table in the console's look, scrolling sideways inside its frame on a narrow screen. */
export function DataTable({ label, caption, heads, wrapClassName, className, children }: Props) {
  return (
    <div className={wrapClassName ? `table-wrap ${wrapClassName}` : 'table-wrap'}>
      <table className={className ? `table ${className}` : 'table'} aria-label={label}>
        {caption ? <caption className="visually-hidden">{caption}</caption> : null}
        <ColumnHeads labels={heads} />
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}
