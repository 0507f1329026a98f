'use client';

import { useRouter } from 'next/navigation';
import { useRef, useState } from 'react';
import { useModal } from '@/app/_components/use-modal';
import styles from './tokens.module.css';

/**
 * Revoke one token, after a confirmation: the button opens a dialog that names the token and its owner, with the
 * focus on Cancel, so that neither a stray Enter nor a pre-selected choice revokes anything; only the dialog's
 * Revoke button does. A revocation cannot be undone (the owner needs a new token).
 */
export function RevokeToken({ id, name, owner }: { id: number; name: string; owner: string }) {
  const [open, setOpen] = useState(false);
  return (
    <>
      <button type="button" className={`button ${styles.revoke}`} onClick={() => setOpen(true)} aria-label={`Revoke token ${id} (${name})`}>
        Revoke…
      </button>
      {open ? <ConfirmRevoke id={id} name={name} owner={owner} onClose={() => setOpen(false)} /> : null}
    </>
  );
}

function ConfirmRevoke({ id, name, owner, onClose }: { id: number; name: string; owner: string; onClose: () => void }) {
  const cancelRef = useRef<HTMLButtonElement>(null);
  const ref = useModal(cancelRef);
  const router = useRouter();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>();

  const revoke = async () => {
    setBusy(true);
    setError(undefined);
    try {
      const res = await fetch(`/api/v1/tokens/${id}/revoke`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      if (!res.ok) {
        const body = (await res.json().catch(() => ({}))) as { error?: { message?: string } };
        setError(body.error?.message ?? `The server answered ${res.status}.`);
        setBusy(false);
        return;
      }
      ref.current?.close();
      router.refresh();
    } catch {
      setError('The server could not be reached; nothing was revoked.');
      setBusy(false);
    }
  };

  return (
    <dialog ref={ref} className={styles.dialog} aria-labelledby={`revoke-title-${id}`} aria-describedby={`revoke-what-${id}`} onClose={onClose}>
      <h2 id={`revoke-title-${id}`}>Revoke token {id}?</h2>
      <p id={`revoke-what-${id}`}>
        <strong>{name}</strong>, of {owner.startsWith('agent:') ? `agent ${owner.slice('agent:'.length)}` : owner}. It stops working on every server within a second, and this cannot be
        undone: its owner will need a new token.
      </p>
      {error ? (
        <p role="alert" className={styles.error}>
          {error}
        </p>
      ) : null}
      <div className={styles.dialogActions}>
        <button type="button" ref={cancelRef} className="button" onClick={() => ref.current?.close()}>
          Cancel
        </button>
        <button type="button" className={`button ${styles.confirmRevoke}`} disabled={busy} onClick={() => void revoke()}>
          {busy ? 'Revoking…' : 'Revoke token'}
        </button>
      </div>
    </dialog>
  );
}
