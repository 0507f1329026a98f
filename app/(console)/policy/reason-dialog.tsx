'use client';

import { useRef, useState, type ReactNode } from 'react';
import { useModal } from '@/app/_components/use-modal';
import { errorSentence } from '@/app/_lib/api-client';
import styles from './policy.module.css';

/**
 * A decision on the rules, confirmed: the dialog says what will happen and asks for the reason (required; it is kept
 * in the trail). The focus starts in the empty reason, never on the confirm button, and Enter there starts a new line,
 * so that no single keystroke decides; only the confirm button does, and an empty reason is refused in words. Escape
 * or Cancel closes without deciding. A native modal dialog.
 */
export function ReasonDialog({
  title,
  children,
  confirmLabel,
  busyLabel,
  danger = false,
  onCancel,
  onConfirm,
}: {
  title: string;
  children: ReactNode;
  confirmLabel: string;
  busyLabel: string;
  danger?: boolean;
  onCancel: () => void;
  /** sends the decision; what it throws is shown in the dialog, else the dialog closes */
  onConfirm: (reason: string) => Promise<unknown>;
}) {
  const textRef = useRef<HTMLTextAreaElement>(null);
  const ref = useModal(textRef);
  const [text, setText] = useState('');
  const [missing, setMissing] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>();

  const submit = async () => {
    const reason = text.trim();
    if (!reason) {
      setMissing(true);
      textRef.current?.focus();
      return;
    }
    setBusy(true);
    setError(undefined);
    try {
      await onConfirm(reason);
    } catch (e) {
      setError(errorSentence(e));
      setBusy(false);
      return;
    }
    ref.current?.close();
  };

  return (
    <dialog ref={ref} className={styles.dialog} aria-labelledby="reason-title" aria-describedby="reason-what" onClose={onCancel}>
      <form
        method="dialog"
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          void submit();
        }}
      >
        <h2 id="reason-title">{title}</h2>
        <div id="reason-what" className={styles.dialogWhat}>
          {children}
        </div>
        <label htmlFor="reason-text" className={styles.fieldLabel}>
          Reason (required)
        </label>
        <p id="reason-help" className={styles.fieldHelp}>
          Kept in the audit trail with your name, exactly as written here.
        </p>
        <textarea
          id="reason-text"
          ref={textRef}
          rows={3}
          value={text}
          aria-describedby={missing ? 'reason-missing reason-help' : 'reason-help'}
          aria-invalid={missing ? 'true' : undefined}
          onChange={(e) => {
            setText(e.target.value);
            if (e.target.value.trim()) setMissing(false);
          }}
        />
        {missing ? (
          <p id="reason-missing" role="alert" className={styles.fieldError}>
            Write the reason first: a decision on the rules is never recorded without one.
          </p>
        ) : null}
        {error ? (
          <p role="alert" className={styles.fieldError}>
            {error}
          </p>
        ) : null}
        <div className={styles.dialogActions}>
          <button type="button" className="button" onClick={() => ref.current?.close()}>
            Cancel
          </button>
          <button type="submit" className={danger ? 'button button-danger' : 'button button-primary'} disabled={busy}>
            {busy ? busyLabel : confirmLabel}
          </button>
        </div>
      </form>
    </dialog>
  );
}
