'use client';

import { useRowNavigation } from '@/app/_components/use-row-navigation';
import { flexRender, getCoreRowModel, useReactTable, type ColumnDef, type SortingState, type VisibilityState } from '@tanstack/react-table';
import { useEffect, useMemo, useRef, useState } from 'react';
import { z } from 'zod';
import styles from '@/app/(console)/denials/denials.module.css';
import type { Denial } from './api';
import { localDateTime, utcDateTime } from './format';
import { RowRuleBadge } from './rule-badge';
import type { ExplorerState, TableSort } from './url-state';

/** The columns the server can sort by (each has an index); the others are not sortable. */
const SORTABLE = new Set<string>(['timestamp', 'agent_name', 'tool_name', 'rule_source']);

export const COLUMN_LABELS: Record<string, string> = {
  timestamp: 'Time',
  agent_name: 'Agent',
  tool_name: 'Tool',
  rule_source: 'Rule source',
  reason: 'Reason',
  user_role: 'Role',
  request: 'HTTP request',
  tool_call_id: 'Tool call ID',
  id: 'ID',
};

export const DEFAULT_VISIBILITY: VisibilityState = { request: false, tool_call_id: false, id: false };
const STORAGE_KEY = 'swarm.denials.columns.v1';
const visibilitySchema = z.record(z.string(), z.boolean());

/** Column visibility, remembered in this browser. Read after mount: the server cannot know it. */
export function useColumnVisibility(): [VisibilityState, (v: VisibilityState) => void] {
  const [visibility, setVisibility] = useState<VisibilityState>(DEFAULT_VISIBILITY);
  useEffect(() => {
    try {
      const stored = visibilitySchema.safeParse(JSON.parse(window.localStorage.getItem(STORAGE_KEY) ?? 'null'));
      if (stored.success) setVisibility({ ...DEFAULT_VISIBILITY, ...stored.data, timestamp: true });
    } catch {
      // An unreadable entry (or storage switched off) keeps the defaults.
    }
  }, []);
  const update = (v: VisibilityState) => {
    setVisibility(v);
    try {
      window.localStorage.setItem(STORAGE_KEY, JSON.stringify(v));
    } catch {
      // Storage full or switched off: the choice holds for this visit.
    }
  };
  return [visibility, update];
}

interface Props {
  rows: Denial[];
  state: ExplorerState;
  stale: boolean;
  visibility: VisibilityState;
  onVisibility: (v: VisibilityState) => void;
  onSort: (column: TableSort) => void;
  onOpen: (id: number) => void;
  onRuleFilter: (ruleSource: string) => void;
  /** the row open in the detail panel */
  openId: number | undefined;
  /** set by the explorer to move keyboard focus to a row (after the panel closes) */
  focusRequest: { id: number; n: number } | undefined;
}

export function DenialsTable({ rows, state, stale, visibility, onVisibility, onSort, onOpen, onRuleFilter, openId, focusRequest }: Props) {
  const menuRef = useRef<HTMLDetailsElement>(null);
  useEffect(() => {
    // ...and when the reader clicks anywhere else.
    const onDown = (e: MouseEvent) => {
      const menu = menuRef.current;
      if (menu?.open && e.target instanceof Node && !menu.contains(e.target)) menu.open = false;
    };
    document.addEventListener('mousedown', onDown);
    return () => document.removeEventListener('mousedown', onDown);
  }, []);
  const { rowProps } = useRowNavigation(
    rows.map((r) => r.id),
    onOpen,
    openId,
    focusRequest,
  );

  const columns = useMemo<ColumnDef<Denial>[]>(
    () => [
      {
        id: 'timestamp',
        accessorKey: 'timestamp',
        header: COLUMN_LABELS.timestamp,
        enableHiding: false,
        cell: ({ row }) => (
          <time dateTime={new Date(row.original.timestamp * 1000).toISOString()} title={utcDateTime(row.original.timestamp)} className={styles.mono}>
            {localDateTime(row.original.timestamp)}
          </time>
        ),
      },
      {
        id: 'agent_name',
        accessorKey: 'agent_name',
        header: COLUMN_LABELS.agent_name,
        cell: ({ row }) => row.original.agent_name ?? <span className="muted">—</span>,
      },
      {
        id: 'tool_name',
        accessorKey: 'tool_name',
        header: COLUMN_LABELS.tool_name,
        // An HTTP denial's "tool" is the request it refused: say which.
        cell: ({ row }) =>
          row.original.http_method ? (
            <span className={styles.httpTool} title={`${row.original.http_method} ${row.original.http_path ?? ''}`}>
              <code>http</code> <span className={styles.mono}>{`${row.original.http_method} ${row.original.http_path ?? ''}`}</span>
            </span>
          ) : (
            <code>{row.original.tool_name}</code>
          ),
      },
      {
        id: 'rule_source',
        accessorKey: 'rule_source',
        header: COLUMN_LABELS.rule_source,
        cell: ({ row }) => <RowRuleBadge ruleSource={row.original.rule_source} onFilter={onRuleFilter} />,
      },
      {
        id: 'reason',
        accessorKey: 'reason',
        header: COLUMN_LABELS.reason,
        cell: ({ row }) => <span className={styles.reasonCell}>{row.original.reason ?? '—'}</span>,
      },
      {
        id: 'user_role',
        accessorKey: 'user_role',
        header: COLUMN_LABELS.user_role,
        cell: ({ row }) => row.original.user_role ?? <span className="muted">—</span>,
      },
      {
        id: 'request',
        accessorFn: (r) => (r.http_method ? `${r.http_method} ${r.http_path ?? ''}` : null),
        header: COLUMN_LABELS.request,
        cell: ({ row }) =>
          row.original.http_method ? <span className={styles.mono}>{`${row.original.http_method} ${row.original.http_path ?? ''}`}</span> : <span className="muted">—</span>,
      },
      {
        id: 'tool_call_id',
        accessorKey: 'tool_call_id',
        header: COLUMN_LABELS.tool_call_id,
        cell: ({ row }) => (row.original.tool_call_id ? <span className={styles.mono}>{row.original.tool_call_id}</span> : <span className="muted">—</span>),
      },
      { id: 'id', accessorKey: 'id', header: COLUMN_LABELS.id, cell: ({ row }) => <span className={styles.mono}>{row.original.id}</span> },
    ],
    [onRuleFilter],
  );

  // The server sorts; the table only shows which way. No sort parameter means newest first.
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


  const hideable = table.getAllLeafColumns().filter((c) => c.getCanHide());

  return (
    <div className={styles.tableBlock}>
      <div className={styles.tableTools}>
        <p id="table-keys" className={styles.keysHint}>
          <kbd>↑</kbd> <kbd>↓</kbd> move between denials, <kbd>Enter</kbd> opens one, <kbd>Esc</kbd> closes it.
        </p>
        <details
          ref={menuRef}
          className={styles.columnsMenu}
          onKeyDown={(e) => {
            // A menu closes with Escape, and gives the focus back to its button.
            if (e.key === 'Escape' && menuRef.current?.open) {
              e.preventDefault();
              e.stopPropagation();
              menuRef.current.open = false;
              menuRef.current.querySelector('summary')?.focus();
            }
          }}
        >
          <summary className="button button-quiet">Columns</summary>
          <fieldset>
            <legend>Show columns</legend>
            {hideable.map((c) => (
              <label key={c.id}>
                <input type="checkbox" checked={c.getIsVisible()} onChange={c.getToggleVisibilityHandler()} /> {COLUMN_LABELS[c.id] ?? c.id}
              </label>
            ))}
            <button type="button" className="button button-quiet" onClick={() => onVisibility(DEFAULT_VISIBILITY)}>
              Reset to default
            </button>
          </fieldset>
        </details>
      </div>
      <div className={`${styles.tableWrap} ${stale ? styles.stale : ''}`}>
        <table className={`table ${styles.table}`} aria-label="Denials" aria-describedby="table-keys" aria-busy={stale}>
          <thead>
            {table.getHeaderGroups().map((group) => (
              <tr key={group.id}>
                {group.headers.map((header) => {
                  const sorted = header.column.getIsSorted();
                  const sortable = SORTABLE.has(header.column.id);
                  return (
                    <th
                      key={header.id}
                      scope="col"
                      className={styles[`col_${header.column.id}`]}
                      aria-sort={sorted === 'asc' ? 'ascending' : sorted === 'desc' ? 'descending' : sortable ? 'none' : undefined}
                    >
                      {sortable ? (
                        <button type="button" className={styles.sortButton} onClick={() => onSort(header.column.id as TableSort)} title={`Sort by ${COLUMN_LABELS[header.column.id]?.toLowerCase()}`}>
                          {flexRender(header.column.columnDef.header, header.getContext())}
                          <span className={styles.sortMark} aria-hidden="true">
                            {sorted === 'asc' ? '▲' : sorted === 'desc' ? '▼' : '↕'}
                          </span>
                        </button>
                      ) : (
                        flexRender(header.column.columnDef.header, header.getContext())
                      )}
                    </th>
                  );
                })}
              </tr>
            ))}
          </thead>
          <tbody>
            {table.getRowModel().rows.map((row) => {
              const id = row.original.id;
              return (
                <tr key={row.id} {...rowProps(id)} className={`${styles.row} ${id === openId ? styles.rowOpen : ''}`} data-denial-id={id}>
                  {row.getVisibleCells().map((cell) => (
                    <td key={cell.id} className={styles[`col_${cell.column.id}`]}>
                      {flexRender(cell.column.columnDef.cell, cell.getContext())}
                    </td>
                  ))}
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
    </div>
  );
}
