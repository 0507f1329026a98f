'use client';

import { useEffect, useRef, useState } from 'react';
import type { Approval } from './approval-types';
import { RequestLine } from './request-parts';
import styles from './approvals.module.css';

export const PRESET_REASONS = [
  'The arguments look wrong',
  'Not during a change freeze',
  'Needs a review or a model card first',
  'Wrong environment',
] as const;

/**
 * Asks for the reason of a rejection (required; it is sent back to the agent) and lists every request it will
 * reject. A native modal dialog: Escape closes.
 */
export function RejectDialog({ items, onCancel, onConfirm }: { items: Approval[]; onCancel: () => void; onConfirm: (reason: string) => void }) {
  const count = items.length;
  const ref = useRef<HTMLDialogElement>(null);
  const [preset, setPreset] = useState<string>('');
  const [text, setText] = useState('');
  const reason = [preset, text.trim()].filter(Boolean).join(': ');

  useEffect(() => {
    const d = ref.current;
    if (d && !d.open) d.showModal();
  }, []);

  return (
    <dialog ref={ref} className={styles.dialog} aria-labelledby="reject-title" onClose={onCancel}>
      <form
        method="dialog"
        onSubmit={(e) => {
          e.preventDefault();
          if (reason) onConfirm(reason);
        }}
      >
        <h2 id="reject-title">{count === 1 ? 'Reject this request' : `Reject ${count} requests`}</h2>
        <ol className={count === 1 ? styles.confirmListOne : styles.confirmList} aria-label="Requests to reject">
          {items.map((a) => (
            <li key={a.id}>
              <RequestLine a={a} />
            </li>
          ))}
        </ol>
        <p className="muted">The reason is sent back to the agent and kept in the audit trail.</p>
        <fieldset className={styles.presets}>
          <legend>Reason</legend>
          {PRESET_REASONS.map((r) => (
            <label key={r}>
              <input type="radio" name="preset" value={r} checked={preset === r} onChange={() => setPreset(r)} /> {r}
            </label>
          ))}
          <label>
            <input type="radio" name="preset" value="" checked={preset === ''} onChange={() => setPreset('')} /> Other (write below)
          </label>
        </fieldset>
        <label htmlFor="reject-text" className={styles.fieldLabel}>
          {preset ? 'Details (optional)' : 'Reason (required)'}
        </label>
        <textarea id="reject-text" rows={3} value={text} onChange={(e) => setText(e.target.value)} autoFocus />
        <div className={styles.dialogActions}>
          <button type="button" className="button" onClick={() => ref.current?.close()}>
            Cancel
          </button>
          <button type="submit" className={`button ${styles.confirmReject}`} disabled={!reason}>
            Reject
          </button>
        </div>
      </form>
    </dialog>
  );
}
