import type { RefObject } from 'react';
import styles from './approvals.module.css';

interface Props {
  heading: RefObject<HTMLHeadingElement | null>;
  /** waiting in all, and shown under the filter */
  total: number;
  shown: number;
  filtered: boolean;
  canDecide: boolean;
  selected: number;
  /** deciding is off: a decision is on its way, or the session has ended */
  decideOff: boolean;
  busy: boolean;
  onApproveSelected: () => void;
  onRejectSelected: () => void;
  onClearSelection: () => void;
  shortcuts: boolean;
  onShortcuts: (on: boolean) => void;
}

/** How many wait, the bulk actions on the selection, and the shortcuts switch (with its keys). */
export function QueueToolbar({ heading, total, shown, filtered, canDecide, selected, decideOff, busy, onApproveSelected, onRejectSelected, onClearSelection, shortcuts, onShortcuts }: Props) {
  return (
    <div className={styles.toolbar}>
      <h2 id="queue-title" className={styles.count} ref={heading} tabIndex={-1}>
        {total === 0 ? 'Nothing is waiting' : filtered ? `${shown} of ${total} waiting shown, oldest first` : `${total} waiting, oldest first`}
      </h2>
      {canDecide && selected > 0 ? (
        <div className={styles.bulk} role="group" aria-label="Selected requests">
          <span>{selected} selected</span>
          <button type="button" className="button button-primary" disabled={decideOff} onClick={onApproveSelected}>
            Approve selected…
          </button>
          <button type="button" className="button button-danger" disabled={decideOff} onClick={onRejectSelected}>
            Reject selected…
          </button>
          <button type="button" className="button button-quiet" disabled={busy} onClick={onClearSelection}>
            Clear
          </button>
        </div>
      ) : null}
      <label className={styles.shortcutToggle}>
        <input type="checkbox" checked={shortcuts} onChange={(e) => onShortcuts(e.target.checked)} /> Keyboard shortcuts
        <span className="muted"> (j/k move{canDecide ? ', a approve, r reject, x select; each asks first' : ''})</span>
      </label>
    </div>
  );
}
