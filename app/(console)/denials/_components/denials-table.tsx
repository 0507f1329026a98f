'use client';

import { flexRender, getCoreRowModel, useReactTable, type SortingState, type VisibilityState } from '@tanstack/react-table';
import { useMemo } from 'react';
import type { DenialJson } from '@/lib/http/responses';
import { ExplorerTable, rowClassName } from '@/app/(console)/_explorer/explorer-table';
import type { OpenRow } from '@/app/(console)/_explorer/use-open-row';
import { useRowNavigation } from '@/app/(console)/_explorer/use-row-navigation';
import styles from '@/app/(console)/denials/denials.module.css';
import { ColumnsMenu } from './columns-menu';
import { COLUMN_LABELS, denialColumns, SORTABLE } from './denial-columns';
import type { ExplorerState, TableSort } from './url-state';

interface Props {
  rows: DenialJson[];
  state: ExplorerState;
  stale: boolean;
  visibility: VisibilityState;
  onVisibility: (v: VisibilityState) => void;
  onSort: (column: TableSort) => void;
  onRuleFilter: (ruleSource: string) => void;
  /** the row open in the detail panel, how to open one, and where the focus goes back to */
  openRow: OpenRow;
}

/** The denials of the page: sorted on the server (the headers only show which way), columns chosen by the reader. */
export function DenialsTable({ rows, state, stale, visibility, onVisibility, onSort, onRuleFilter, openRow }: Props) {
  const { rowProps } = useRowNavigation(rows, openRow);
  const columns = useMemo(() => denialColumns(onRuleFilter), [onRuleFilter]);
  // No sort parameter means newest first.
  const sorting: SortingState = state.sort ? [{ id: state.sort, desc: state.order === 'desc' }] : [{ id: 'timestamp', desc: true }];
  const table = useReactTable({
    data: rows,
    columns,
    getCoreRowModel: getCoreRowModel(),
    getRowId: (r) => String(r.id),
    manualSorting: true,
    manualPagination: true,
    manualFiltering: true,
    enableSorting: true,
    state: { sorting, columnVisibility: visibility },
    onColumnVisibilityChange: (updater) => onVisibility(typeof updater === 'function' ? updater(visibility) : updater),
  });

  const head = (
    <thead>
      {table.getHeaderGroups().map((group) => (
        <tr key={group.id}>
          {group.headers.map((header) => {
            const sorted = header.column.getIsSorted();
            const sortable = SORTABLE.has(header.column.id);
            const label = flexRender(header.column.columnDef.header, header.getContext());
            return (
              <th key={header.id} scope="col" className={styles[`col_${header.column.id}`]} aria-sort={sorted === 'asc' ? 'ascending' : sorted === 'desc' ? 'descending' : sortable ? 'none' : undefined}>
                {sortable ? (
                  <button type="button" className={styles.sortButton} onClick={() => onSort(header.column.id as TableSort)} title={`Sort by ${COLUMN_LABELS[header.column.id]?.toLowerCase()}`}>
                    {label}
                    <span className={styles.sortMark} aria-hidden="true">
                      {sorted === 'asc' ? '▲' : sorted === 'desc' ? '▼' : '↕'}
                    </span>
                  </button>
                ) : (
                  label
                )}
              </th>
            );
          })}
        </tr>
      ))}
    </thead>
  );

  return (
    <ExplorerTable
      label="Denials"
      hintId="table-keys"
      rowsName="denials"
      busy={stale}
      tools={<ColumnsMenu columns={table.getAllLeafColumns().filter((c) => c.getCanHide())} onVisibility={onVisibility} />}
      head={head}
      // On a phone each denial reads as a small card, every column (the reason and the rule source too) in view.
      classNames={{ table: 'table-cards-when-narrow' }}
    >
      {table.getRowModel().rows.map((row) => {
        const id = row.original.id;
        return (
          <tr key={row.id} {...rowProps(id)} className={rowClassName(id === openRow.openId)} data-denial-id={id}>
            {row.getVisibleCells().map((cell) => (
              <td key={cell.id} className={styles[`col_${cell.column.id}`]} data-label={COLUMN_LABELS[cell.column.id]}>
                {flexRender(cell.column.columnDef.cell, cell.getContext())}
              </td>
            ))}
          </tr>
        );
      })}
    </ExplorerTable>
  );
}
