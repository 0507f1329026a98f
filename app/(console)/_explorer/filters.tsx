'use client';

import { useId, useState, type ReactNode } from 'react';
import styles from './explorer.module.css';
import { localDateTime } from './format';
import { isCustomRange, WINDOW_LABELS, WINDOWS, type RelativeWindow, type TimeWindow } from './time-window';

/**
 * On a phone the filters sit behind a "Filters" button (a disclosure: a real button with aria-expanded, so Enter and
 * Space open it), and the results come first. `active`: how many filters are set, said on the button so a filtered
 * view is never mistaken for the whole trail. On a wide screen the filters are shown as they are.
 */
export function FiltersDisclosure({ narrow, active, children }: { narrow: boolean; active: number; children: ReactNode }) {
  const id = useId();
  const [open, setOpen] = useState(false);
  if (!narrow) return <>{children}</>;
  return (
    <div className={styles.disclosure}>
      <button type="button" className="button" aria-expanded={open} aria-controls={id} onClick={() => setOpen((o) => !o)} data-testid="filters-toggle">
        {open ? 'Hide filters' : 'Filters'}
        {active > 0 ? ` (${active} set)` : ''}
      </button>
      <div id={id} hidden={!open}>
        {children}
      </div>
    </div>
  );
}

interface WindowRowProps {
  state: TimeWindow;
  /** what each button says (the title says it in full) */
  labels: Record<RelativeWindow, string>;
  onPick: (window: RelativeWindow) => void;
  /** said after a custom range in force ("local time"); null: the range is not shown */
  rangeNote: string | null;
  className?: string;
  /** more buttons in the group (the denials' "Custom range") */
  children?: ReactNode;
}

/**
 * The filters' time window: the relative windows as one group of toggle buttons, none pressed while a custom range is
 * in force, and that range in words, in local time to the minute: "2025-11-20 14:00 → now (local time)".
 */
export function WindowRow({ state, labels, onPick, rangeNote, className = '', children }: WindowRowProps) {
  const labelId = `${useId()}-window`;
  const custom = isCustomRange(state);
  return (
    <div className={styles.windowRow}>
      <span className={styles.fieldLabel} id={labelId}>
        Time window
      </span>
      <div className={`${styles.segmented} ${className}`} role="group" aria-labelledby={labelId}>
        {WINDOWS.map((w) => (
          <button key={w} type="button" aria-pressed={!custom && state.window === w} title={WINDOW_LABELS[w]} onClick={() => onPick(w)}>
            {labels[w]}
          </button>
        ))}
        {children}
      </div>
      {custom && rangeNote !== null ? (
        <span className={styles.rangeText}>
          {state.from !== undefined ? localDateTime(state.from).slice(0, 16) : 'the beginning'} → {state.to !== undefined ? localDateTime(state.to).slice(0, 16) : 'now'}
          <span className="muted"> ({rangeNote})</span>
        </span>
      ) : null}
    </div>
  );
}

/** "Clear all", kept in the layout when there is nothing to clear (hidden, out of the tab order), so the fields do not jump. */
export function ClearAll({ shown, onClear }: { shown: boolean; onClear: () => void }) {
  return (
    <button type="button" className={`button button-quiet ${shown ? '' : styles.invisible}`} onClick={onClear} aria-hidden={!shown} tabIndex={shown ? undefined : -1}>
      Clear all
    </button>
  );
}
