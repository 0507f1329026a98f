'use client';

import type { Column, VisibilityState } from '@tanstack/react-table';
import { useEffect, useRef } from 'react';
import styles from '@/app/(console)/denials/denials.module.css';
import { COLUMN_LABELS } from './denial-columns';
import { DEFAULT_VISIBILITY } from './use-column-visibility';

/** "Columns": which of the table's columns to show. Closes with Escape (focus back on its button) and a click elsewhere. */
export function ColumnsMenu<T>({ columns, onVisibility }: { columns: Column<T, unknown>[]; onVisibility: (v: VisibilityState) => void }) {
  const menuRef = useRef<HTMLDetailsElement>(null);
  useEffect(() => {
    const onDown = (e: MouseEvent) => {
      const menu = menuRef.current;
      if (menu?.open && e.target instanceof Node && !menu.contains(e.target)) menu.open = false;
    };
    document.addEventListener('mousedown', onDown);
    return () => document.removeEventListener('mousedown', onDown);
  }, []);
  return (
    <details
      ref={menuRef}
      className={styles.columnsMenu}
      onKeyDown={(e) => {
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
        {columns.map((c) => (
          <label key={c.id}>
            <input type="checkbox" checked={c.getIsVisible()} onChange={c.getToggleVisibilityHandler()} /> {COLUMN_LABELS[c.id] ?? c.id}
          </label>
        ))}
        <button type="button" className="button button-quiet" onClick={() => onVisibility(DEFAULT_VISIBILITY)}>
          Reset to default
        </button>
      </fieldset>
    </details>
  );
}
