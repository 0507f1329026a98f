'use client';

import { useEffect, useRef, useState, type FocusEvent, type KeyboardEvent } from 'react';
import type { OpenRow } from './use-open-row';

/**
 * Keyboard navigation of a table whose rows are one tab stop: arrows, Home and End move between rows, Enter or Space
 * opens one. The row open in a panel becomes the current one, and `focusRequest` moves focus back to a row (after the
 * panel closes). The explorers' tables (explorer-table.tsx) take their rows' props from it.
 */
export function useRowNavigation(rows: readonly { id: number }[], { open: onOpen, openId, focusRequest }: OpenRow) {
  const ids = rows.map((r) => r.id);
  const rowRefs = useRef(new Map<number, HTMLTableRowElement>());
  const [activeId, setActiveId] = useState<number | undefined>(openId);
  useEffect(() => {
    if (openId !== undefined) setActiveId(openId);
  }, [openId]);
  useEffect(() => {
    if (focusRequest) rowRefs.current.get(focusRequest.id)?.focus();
  }, [focusRequest]);

  const current = activeId !== undefined && ids.includes(activeId) ? activeId : ids[0];
  const focusAt = (index: number) => {
    const id = ids[Math.min(ids.length - 1, Math.max(0, index))];
    if (id === undefined) return;
    setActiveId(id);
    rowRefs.current.get(id)?.focus();
  };
  const onRowKey = (e: KeyboardEvent<HTMLTableRowElement>, id: number) => {
    // Keys on the row itself only: a focused control inside it keeps its own keys.
    if (e.target !== e.currentTarget) return;
    const i = ids.indexOf(id);
    if (e.key === 'ArrowDown') focusAt(i + 1);
    else if (e.key === 'ArrowUp') focusAt(i - 1);
    else if (e.key === 'Home') focusAt(0);
    else if (e.key === 'End') focusAt(ids.length - 1);
    else if (e.key === 'Enter' || e.key === ' ') onOpen(id);
    else return;
    e.preventDefault();
  };
  /** The props of row `id`: one tab stop for the table, its keys, and a click that opens it. */
  const rowProps = (id: number) => ({
    ref: (el: HTMLTableRowElement | null) => {
      if (el) rowRefs.current.set(id, el);
      else rowRefs.current.delete(id);
    },
    tabIndex: id === current ? 0 : -1,
    'aria-current': id === openId ? ('true' as const) : undefined,
    onFocus: (e: FocusEvent<HTMLTableRowElement>) => {
      if (e.target === e.currentTarget) setActiveId(id);
    },
    onKeyDown: (e: KeyboardEvent<HTMLTableRowElement>) => onRowKey(e, id),
    onClick: () => {
      // Selecting text to copy it is not a request to open the row.
      if (window.getSelection()?.toString()) return;
      onOpen(id);
    },
  });
  return { rowProps };
}
