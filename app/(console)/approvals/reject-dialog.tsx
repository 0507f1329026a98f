'use client';

import { useRef, useState } from 'react';
import { useModal } from '@/app/_components/use-modal';
import type { Approval } from './approval-types';
import { PRESET_REASONS, withPreset } from './approval-text';
import { RequestLine } from './request-parts';
import styles from './approvals.module.css';

const MISSING = 'Write the reason for the rejection (or choose a common reason above): it is sent back to the agent and kept in the audit trail.';

/**
 * Asks for the reason of a rejection (required; it is sent back to the agent) and lists every request it will
 * reject. The focus starts in the reason text, so typing at once writes the reason; the common reasons are buttons
 * that fill the text, never a pre-selected choice. Enter sends (Shift+Enter starts a new line); an empty reason is
 * refused in words and records nothing. A native modal dialog: Escape closes.
 */
export function RejectDialog({ items, onCancel, onConfirm }: { items: Approval[]; onCancel: () => void; onConfirm: (reason: string) => void }) {
  const count = items.length;
  const textRef = useRef<HTMLTextAreaElement>(null);
  const ref = useModal(textRef);
  const [text, setText] = useState('');
  const [missing, setMissing] = useState(false);
  const reason = text.trim();

  const submit = () => {
    if (reason) {
      onConfirm(reason);
      return;
    }
    setMissing(true);
    textRef.current?.focus();
  };

  const choose = (preset: string) => {
    const next = withPreset(text, preset);
    setText(next);
    setMissing(false);
    const t = textRef.current;
    if (t) {
      t.focus();
      // the caret after the text: the person goes on writing details
      requestAnimationFrame(() => t.setSelectionRange(next.length, next.length));
    }
  };

  return (
    <dialog ref={ref} className={styles.dialog} aria-labelledby="reject-title" onClose={onCancel}>
      <form
        method="dialog"
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          submit();
        }}
      >
        <h2 id="reject-title">{count === 1 ? 'Reject this request' : `Reject ${count} requests`}</h2>
        <ol className={count === 1 ? styles.confirmListOne : styles.confirmList} aria-label="Requests to reject">
          {items.map((a) => (
            <li key={a.id}>
              <RequestLine a={a} whole />
            </li>
          ))}
        </ol>
        <label htmlFor="reject-text" className={styles.fieldLabel}>
          Reason (required)
        </label>
        <p id="reject-help" className={styles.fieldHelp}>
          Sent back to the agent and kept in the audit trail, exactly as written here. Enter rejects; Shift+Enter starts a new line.
        </p>
        <textarea
          id="reject-text"
          ref={textRef}
          rows={3}
          value={text}
          aria-describedby={missing ? 'reject-missing reject-help' : 'reject-help'}
          aria-invalid={missing ? 'true' : undefined}
          onChange={(e) => {
            setText(e.target.value);
            if (e.target.value.trim()) setMissing(false);
          }}
          onKeyDown={(e) => {
            if (e.key === 'Enter' && !e.shiftKey && !e.nativeEvent.isComposing) {
              e.preventDefault();
              // a held-down Enter must not reject: only a fresh key press sends
              if (!e.repeat) submit();
            }
          }}
        />
        {missing ? (
          <p id="reject-missing" role="alert" className={styles.fieldError}>
            {MISSING}
          </p>
        ) : null}
        <div className={styles.presets} role="group" aria-labelledby="reject-presets">
          <span id="reject-presets" className={styles.presetsLabel}>
            Common reasons (each puts its words in the reason):
          </span>
          {PRESET_REASONS.map((r) => (
            <button key={r} type="button" className={`button button-quiet ${styles.preset}`} onClick={() => choose(r)}>
              {r}
            </button>
          ))}
        </div>
        <div className={styles.dialogActions}>
          <button type="button" className="button" onClick={() => ref.current?.close()}>
            Cancel
          </button>
          <button type="submit" className={`button ${styles.confirmReject}`}>
            Reject
          </button>
        </div>
      </form>
    </dialog>
  );
}
