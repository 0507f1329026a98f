'use client';

import styles from './transparency.module.css';

/**
 * The end of a /transparency change dialog (a flag change, an MCP tool definition's acceptance): why the server
 * refused it, announced as it comes, then Cancel and the action, both held while the change is under way.
 */
export function DialogFooter({ error, refusal, busy, action, onCancel }: { error: string[] | null; refusal: string; busy: boolean; action: string; onCancel: () => void }) {
  return (
    <>
      <div role="alert" className={error ? styles.dialogError : undefined}>
        {error ? (
          <>
            <strong>{refusal}</strong> {error.join(' ')}
          </>
        ) : null}
      </div>
      <div className={styles.dialogActions}>
        <button type="button" className="button" onClick={onCancel} disabled={busy}>
          Cancel
        </button>
        <button type="submit" className="button button-primary" disabled={busy}>
          {busy ? 'Saving…' : action}
        </button>
      </div>
    </>
  );
}
