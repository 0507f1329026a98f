'use client';

/**
 * An operator accepts the new definition of an MCP tool (issue 42): POST /api/v1/mcp/pins/accept with the hash of the
 * definition shown, so that what is accepted is what was reviewed, whatever the upstream lists meanwhile. The server
 * decides (role, change control); this asks and shows the answer, a refusal in the server's own words.
 *
 * Never a single keystroke: the button opens a confirmation that names the tool and what accepting does, the focus
 * starts in a box where the tool's listed name must be typed, a reason is required, and a held-down Enter does not
 * submit. Escape or Cancel closes without deciding and the focus goes back to the button.
 */
import { useRouter } from 'next/navigation';
import { createContext, useContext, useEffect, useId, useRef, useState, type ReactNode } from 'react';
import { useModal } from '@/app/_components/use-modal';
import { apiPost, asApiError } from '@/app/_lib/api-client';
import { mcpPinAcceptanceSchema } from '@/lib/http/responses';
import styles from '../transparency/transparency.module.css';
import { DialogFooter } from '../transparency/dialog-footer';

export interface HeldDefinitionRef {
  server: string;
  tool: string;
  /** the name agents know it by: `<server><separator><tool>` */
  listed: string;
  sha256: string;
  pinnedSha256: string | null;
}

const short = (sha: string) => `${sha.slice(0, 12)}…`;

const Saved = createContext<((message: string) => void) | null>(null);

/**
 * The line that announces an acceptance, above the held definitions: the accepted one leaves the list when the page
 * is read again, so the answer is said here, and the focus comes here (the button it came from is gone).
 */
export function PinAcceptanceStatus({ children }: { children: ReactNode }) {
  const [status, setStatus] = useState('');
  const ref = useRef<HTMLParagraphElement>(null);
  const router = useRouter();
  return (
    <Saved.Provider
      value={(message) => {
        setStatus(message);
        router.refresh();
        queueMicrotask(() => ref.current?.focus());
      }}
    >
      <p ref={ref} tabIndex={-1} className={styles.saved} role="status" aria-live="polite">
        {status}
      </p>
      {children}
    </Saved.Provider>
  );
}

export function AcceptDefinition({ held, changeControl }: { held: HeldDefinitionRef; changeControl: boolean }) {
  const [open, setOpen] = useState(false);
  const button = useRef<HTMLButtonElement>(null);
  const wasOpen = useRef(false);
  const announce = useContext(Saved);
  // Back to the button once the dialog is gone without a decision, so a keyboard user continues where they were.
  useEffect(() => {
    if (open) wasOpen.current = true;
    else if (wasOpen.current) button.current?.focus();
  }, [open]);
  const verb = changeControl ? 'Propose accepting' : 'Accept';
  return (
    <div className={styles.acceptRow}>
      <button ref={button} type="button" className="button" aria-haspopup="dialog" aria-label={`${verb} the new definition of ${held.listed}`} onClick={() => setOpen(true)}>
        {verb} this definition…
      </button>
      {open ? (
        <AcceptDialog
          held={held}
          changeControl={changeControl}
          onClose={(message) => {
            if (message) {
              wasOpen.current = false;
              announce?.(message);
            }
            setOpen(false);
          }}
        />
      ) : null}
    </div>
  );
}

function AcceptDialog({ held, changeControl, onClose }: { held: HeldDefinitionRef; changeControl: boolean; onClose: (saved?: string) => void }) {
  const nameRef = useRef<HTMLInputElement>(null);
  const ref = useModal(nameRef);
  const id = useId();
  const [typed, setTyped] = useState('');
  const [reason, setReason] = useState('');
  const [tried, setTried] = useState(false);
  const [error, setError] = useState<string[] | null>(null);
  const [busy, setBusy] = useState(false);
  const saved = useRef<string | undefined>(undefined);
  const reasonRef = useRef<HTMLTextAreaElement>(null);
  const nameWrong = typed.trim() !== held.listed;
  const reasonMissing = !reason.trim();

  async function submit() {
    setTried(true);
    if (nameWrong) return nameRef.current?.focus();
    if (reasonMissing) return reasonRef.current?.focus();
    setBusy(true);
    setError(null);
    try {
      const answer = await apiPost('/api/v1/mcp/pins/accept', { server: held.server, tool: held.tool, sha256: held.sha256, reason: reason.trim() }, mcpPinAcceptanceSchema);
      saved.current =
        answer.status === 'proposed' && answer.proposal
          ? `Proposed ${answer.proposal.id}: ${held.listed} stays held until ${answer.proposal.approvals_required} approver${answer.proposal.approvals_required === 1 ? '' : 's'} approve it on Policy changes.`
          : `Accepted: agents are shown ${held.listed} again and its calls are decided by the rules. Recorded in the audit trail.`;
      ref.current?.close();
    } catch (e) {
      const failure = asApiError(e);
      setError([failure.message, ...failure.issues.map((i) => i.message)]);
    } finally {
      setBusy(false);
    }
  }

  return (
    <dialog
      ref={ref}
      className={`${styles.dialog} ${styles.dialogWide}`}
      aria-labelledby={`${id}-title`}
      aria-describedby={`${id}-what`}
      onClose={() => onClose(saved.current)}
      onCancel={(e) => {
        if (busy) e.preventDefault();
      }}
      onKeyDown={(e) => {
        // A held-down Enter must not accept: only a fresh key press submits.
        if (e.key === 'Enter' && e.repeat) e.preventDefault();
      }}
    >
      <form
        noValidate
        onSubmit={(e) => {
          e.preventDefault();
          void submit();
        }}
      >
        <h2 id={`${id}-title`} className={styles.dialogTitle}>
          {changeControl ? 'Propose accepting' : 'Accept'} the new definition of <code>{held.listed}</code>?
        </h2>
        <div id={`${id}-what`}>
          <p>
            {held.pinnedSha256 ? (
              <>
                Its server <code>{held.server}</code> changed what it says about <code>{held.tool}</code> since it was reviewed (
                <code>{short(held.pinnedSha256)}</code> reviewed, <code>{short(held.sha256)}</code> now).
              </>
            ) : (
              <>
                <code>{held.tool}</code> is a new tool of server <code>{held.server}</code>, held because a compliance profile holds new tools.
              </>
            )}
          </p>
          <p className={styles.dialogNote}>
            {changeControl
              ? 'Change control is on: this makes a proposal whose revision pins this definition. The tool stays held until the approvers approve it.'
              : 'Once accepted, agents are shown it again and its calls are decided by the rules with this description and these annotations. A later change is held again.'}
          </p>
        </div>
        <label htmlFor={`${id}-name`} className={styles.fieldLabel}>
          Type <code>{held.listed}</code> to confirm
        </label>
        <p id={`${id}-name-why`} className={styles.fieldHint}>
          A second step, because accepting lets agents use a tool whose definition nobody reviewed before you.
        </p>
        <input
          id={`${id}-name`}
          ref={nameRef}
          className={styles.textInput}
          autoComplete="off"
          spellCheck={false}
          value={typed}
          aria-invalid={tried && nameWrong ? 'true' : undefined}
          aria-describedby={`${id}-name-why${tried && nameWrong ? ` ${id}-name-wrong` : ''}`}
          onChange={(e) => setTyped(e.target.value)}
        />
        {tried && nameWrong ? (
          <p id={`${id}-name-wrong`} className={styles.fieldError}>
            {typed.trim() ? `“${typed.trim()}” is not “${held.listed}”.` : 'Nothing typed yet.'} Type the tool&apos;s name exactly, or Cancel.
          </p>
        ) : null}
        <label htmlFor={`${id}-reason`} className={styles.fieldLabel}>
          Reason <span className={styles.required}>(required)</span>
        </label>
        <p id={`${id}-reason-hint`} className={styles.fieldHint}>
          Kept in the audit trail with your name and the difference.
        </p>
        <textarea
          id={`${id}-reason`}
          ref={reasonRef}
          className={styles.textarea}
          rows={3}
          maxLength={2000}
          value={reason}
          aria-invalid={tried && reasonMissing ? true : undefined}
          aria-describedby={`${id}-reason-hint${tried && reasonMissing ? ` ${id}-reason-missing` : ''}`}
          onChange={(e) => setReason(e.target.value)}
        />
        {tried && reasonMissing ? (
          <p id={`${id}-reason-missing`} className={styles.fieldError}>
            Give a reason: every acceptance is recorded with one.
          </p>
        ) : null}
        <DialogFooter error={error} refusal="Not accepted." busy={busy} action={changeControl ? 'Propose' : 'Accept'} onCancel={() => ref.current?.close()} />
      </form>
    </dialog>
  );
}
