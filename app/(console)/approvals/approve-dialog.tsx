'use client';

import { useRef, useState } from 'react';
import { useModal } from '@/app/_components/use-modal';
import type { Approval } from './approval-types';
import { approvalStart, approvalStep, confirmsStep, plainReason } from './approval-text';
import { ArgumentsView } from './arguments-view';
import { QueueToolName } from './tool-name';
import { GateTags, RequestedBy, RequestLine, RiskBadge } from './request-parts';
import styles from './approvals.module.css';

export interface ApproveCandidate {
  a: Approval;
  /** why this operator cannot approve it (e.g. they gave the first approval already); it is then left out */
  blocked: string | null;
}

/**
 * Confirms an approval before it is sent: restates who wants to run what, every argument (production values
 * marked), the gate's risk and why it is gated, and for two-person gates which approval this is. Escape or Cancel
 * closes without deciding. A native modal dialog.
 *
 * No approval starts on Approve (approvalStart): production and high-risk calls need a deliberate second step, the
 * person types the environment (or, for a high-risk call elsewhere, the tool's name) in a box that has the focus;
 * medium-risk calls a box ticked on purpose, which has the focus; low-risk calls start on Cancel, Approve a Tab away.
 * A wrong or empty word, or the box not ticked, is refused in words.
 */
export function ApproveDialog({ candidates, onCancel, onConfirm }: { candidates: ApproveCandidate[]; onCancel: () => void; onConfirm: (ids: string[]) => void }) {
  const cancelRef = useRef<HTMLButtonElement>(null);
  const ids = candidates.filter((c) => !c.blocked).map((c) => c.a.id);
  const single = candidates.length === 1 ? candidates[0] : undefined;
  const wordRef = useRef<HTMLInputElement>(null);
  const tickRef = useRef<HTMLInputElement>(null);
  // decided once, when the dialog opens: the step does not change under the person's hands
  const [start] = useState(() => approvalStart(candidates.filter((c) => !c.blocked).map((c) => c.a)));
  const deliberate = start.kind === 'word' ? start : null;
  const [typed, setTyped] = useState('');
  const [ticked, setTicked] = useState(false);
  const [wrong, setWrong] = useState(false);

  const ref = useModal(start.kind === 'word' ? wordRef : start.kind === 'tick' ? tickRef : cancelRef);

  const step = single ? approvalStep(single.a) : null;
  // A step of a gate that needs several people says which: "Approve (2 of 2)".
  const confirmLabel = !single
    ? `Approve ${ids.length} ${ids.length === 1 ? 'request' : 'requests'}`
    : step
      ? `Approve (${step.completes ? single.a.approvals_required : single.a.approvals.length + 1} of ${single.a.approvals_required})`
      : 'Approve';

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
          if (ids.length === 0) return;
          if (deliberate && !confirmsStep(typed, deliberate.word)) {
            setWrong(true);
            wordRef.current?.focus();
            return;
          }
          if (start.kind === 'tick' && !ticked) {
            setWrong(true);
            tickRef.current?.focus();
            return;
          }
          onConfirm(ids);
        }}
      >
        <h2 id="approve-title">{single ? 'Approve this request?' : `Approve ${candidates.length} requests?`}</h2>
        <p id="approve-help" className="muted">
          {single ? 'The agent may then run this exact call once, on its next turn.' : 'Each agent may then run its exact call once. Check every line:'}
        </p>

        {single ? (
          <div className={styles.confirmOne}>
            <p className={styles.confirmWho}>
              <strong>{single.a.agent}</strong> wants to run <QueueToolName name={single.a.tool} />
            </p>
            <GateTags a={single.a} />
            <p className={styles.meta}>
              <RequestedBy a={single.a} />
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
                  <RequestLine a={a} whole />
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

        {deliberate ? (
          <div className={styles.deliberate}>
            <label htmlFor="approve-word" className={styles.fieldLabel}>
              Type <code>{deliberate.word}</code> to approve
            </label>
            <p id="approve-word-why" className={styles.fieldHelp}>
              A second step, because {deliberate.why}. Calls neither in production nor high-risk do not ask for it.
            </p>
            <input
              id="approve-word"
              ref={wordRef}
              autoComplete="off"
              spellCheck={false}
              value={typed}
              aria-describedby={wrong ? 'approve-word-wrong approve-word-why' : 'approve-word-why'}
              aria-invalid={wrong ? 'true' : undefined}
              onChange={(e) => {
                setTyped(e.target.value);
                setWrong(false);
              }}
            />
            {wrong ? (
              <p id="approve-word-wrong" role="alert" className={styles.fieldError}>
                {typed.trim() ? `“${typed.trim()}” is not “${deliberate.word}”.` : 'Nothing typed yet.'} Type {deliberate.word} exactly to approve, or Cancel.
              </p>
            ) : null}
          </div>
        ) : null}

        {start.kind === 'tick' ? (
          <div className={`${styles.deliberate} ${styles.tickStep}`}>
            <label className={styles.tick}>
              <input
                ref={tickRef}
                type="checkbox"
                checked={ticked}
                aria-describedby={wrong ? 'approve-tick-wrong approve-tick-why' : 'approve-tick-why'}
                aria-invalid={wrong ? 'true' : undefined}
                onChange={(e) => {
                  setTicked(e.target.checked);
                  setWrong(false);
                }}
              />{' '}
              I have read {single ? 'this call and its arguments' : 'every call and its arguments'}, and approve {single ? 'it' : 'them'}
            </label>
            <p id="approve-tick-why" className={styles.fieldHelp}>
              A second step, because {start.why}.
            </p>
            {wrong ? (
              <p id="approve-tick-wrong" role="alert" className={styles.fieldError}>
                Tick the box to approve, or Cancel.
              </p>
            ) : null}
          </div>
        ) : null}

        <div className={styles.dialogActions}>
          <button ref={cancelRef} type="button" className="button" onClick={() => ref.current?.close()}>
            Cancel
          </button>
          <button type="submit" className="button button-primary" disabled={ids.length === 0}>
            {confirmLabel}
          </button>
        </div>
      </form>
    </dialog>
  );
}
