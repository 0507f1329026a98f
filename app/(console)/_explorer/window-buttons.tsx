import type { ReactNode } from 'react';
import styles from './explorer.module.css';
import { localDateTime } from './format';
import { isCustomRange, WINDOW_LABELS, WINDOWS, type RelativeWindow, type TimeWindow } from './time-window';

interface Props {
  /** the id of the group's label */
  labelId: string;
  state: TimeWindow;
  /** what each button says (the title says it in full) */
  labels: Record<RelativeWindow, string>;
  onPick: (window: RelativeWindow) => void;
  className?: string;
  /** more buttons in the group (the denials' "Custom range") */
  children?: ReactNode;
}

/** The relative windows as one group of toggle buttons; none is pressed while a custom range is in force. */
export function WindowButtons({ labelId, state, labels, onPick, className = '', children }: Props) {
  const custom = isCustomRange(state);
  return (
    <div className={`${styles.segmented} ${className}`} role="group" aria-labelledby={labelId}>
      {WINDOWS.map((w) => (
        <button key={w} type="button" aria-pressed={!custom && state.window === w} title={WINDOW_LABELS[w]} onClick={() => onPick(w)}>
          {labels[w]}
        </button>
      ))}
      {children}
    </div>
  );
}

/** A custom range in words, in local time to the minute: "2025-11-20 14:00 → now (local time)". */
export function RangeText({ state, note }: { state: TimeWindow; note: string }) {
  return (
    <span className={styles.rangeText}>
      {state.from !== undefined ? localDateTime(state.from).slice(0, 16) : 'the beginning'} → {state.to !== undefined ? localDateTime(state.to).slice(0, 16) : 'now'}
      <span className="muted"> ({note})</span>
    </span>
  );
}
