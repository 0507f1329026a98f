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
