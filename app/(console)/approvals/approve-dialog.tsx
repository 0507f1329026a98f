'use client';

import { useEffect, useRef } from 'react';
import type { Approval } from './approval-types';
import { approvalStep, plainReason } from './approval-text';
import { ArgumentsView } from './arguments-view';
import { RequestLine, RiskBadge } from './request-parts';
import styles from './approvals.module.css';

export interface ApproveCandidate {
  a: Approval;
  /** why this operator cannot approve it (e.g. they gave the first approval already); it is then left out */
  blocked: string | null;
}

/**
 * Confirms an approval before it is sent: restates who wants to run what, every argument (production values
 * marked), the gate's risk and why it is gated, and for two-person gates which approval this is. The confirm button
 * has the focus, so Enter confirms; Escape or Cancel closes without deciding. A native modal dialog.
 */
export function ApproveDialog({ candidates, onCancel, onConfirm }: { candidates: ApproveCandidate[]; onCancel: () => void; onConfirm: (ids: string[]) => void }) {
  const ref = useRef<HTMLDialogElement>(null);
  const confirmRef = useRef<HTMLButtonElement>(null);
  const ids = candidates.filter((c) => !c.blocked).map((c) => c.a.id);
  const single = candidates.length === 1 ? candidates[0] : undefined;

  useEffect(() => {
    const d = ref.current;
    if (d && !d.open) d.showModal();
    confirmRef.current?.focus();
  }, []);

  const step = single ? approvalStep(single.a) : null;
  const confirmLabel = single
    ? step
      ? step.completes
        ? `Approve (${single.a.approvals_required} of ${single.a.approvals_required})`
        : `Approve (${single.a.approvals.length + 1} of ${single.a.approvals_required})`
      : 'Approve'
    : `Approve ${ids.length} ${ids.length === 1 ? 'request' : 'requests'}`;

  return (
    <dialog
      ref={ref}
      className={`${styles.dialog} ${styles.dialogWide}`}
      aria-labelledby="approve-title"
      aria-describedby="approve-help"
      onClose={onCancel}
      onKeyDown={(e) => {
        // A held-down Enter must not approve: only a fresh key press confirms.
        if (e.key === 'Enter' && e.repeat) e.preventDefault();
      }}
    >
      <form
        method="dialog"
        onSubmit={(e) => {
          e.preventDefault();
          if (ids.length) onConfirm(ids);
        }}
      >
        <h2 id="approve-title">{single ? 'Approve this request?' : `Approve ${candidates.length} requests?`}</h2>
        <p id="approve-help" className="muted">
          {single ? 'The agent may then run this exact call once, on its next turn.' : 'Each agent may then run its exact call once. Check every line:'}
        </p>

        {single ? (
          <div className={styles.confirmOne}>
            <p className={styles.confirmWho}>
              <strong>{single.a.agent}</strong> wants to run <code className={styles.tool}>{single.a.tool}</code>
            </p>
            <p className={styles.tags}>
              <RiskBadge risk={single.a.risk} />
              <span className={styles.gateTag}>
                gate <strong>{single.a.gate}</strong>
              </span>
              {single.a.approvals_required > 1 ? <span className={styles.gateTag}>{single.a.approvals_required === 2 ? 'two-person gate' : `${single.a.approvals_required} approvals needed`}</span> : null}
            </p>
            <p className={styles.why}>
              <strong>Why it is gated:</strong> {single.a.gate_description ?? plainReason(single.a) ?? `Calls behind the “${single.a.gate}” gate need a person to approve them.`}
            </p>
            <h3 className={styles.subhead}>Arguments</h3>
            <ArgumentsView args={single.a.arguments} markProduction />
            {step ? <p className={styles.step}>{step.text}</p> : null}
            {single.blocked ? <p className={styles.blocked}>{single.blocked}</p> : null}
          </div>
        ) : (
          <ol className={styles.confirmList} aria-label="Requests to approve">
            {candidates.map(({ a, blocked }) => {
              const s = approvalStep(a);
              return (
                <li key={a.id} className={blocked ? styles.confirmSkipped : undefined}>
                  <RequestLine a={a} />
                  <span className={styles.confirmMeta}>
                    <RiskBadge risk={a.risk} />
                    {s ? <span>{s.completes ? `completes ${a.approvals_required} of ${a.approvals_required}` : `approval ${a.approvals.length + 1} of ${a.approvals_required}`}</span> : null}
                    {blocked ? <strong>Left out. {blocked}</strong> : null}
                  </span>
                </li>
              );
            })}
          </ol>
        )}

        <div className={styles.dialogActions}>
          <button type="button" className="button" onClick={() => ref.current?.close()}>
            Cancel
          </button>
          <button ref={confirmRef} type="submit" className="button button-primary" disabled={ids.length === 0} autoFocus>
            {confirmLabel}
          </button>
        </div>
      </form>
    </dialog>
  );
}
