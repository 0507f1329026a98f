'use client';

/**
 * The administrators' controls on /transparency: turn a flag on or off (a runtime override) or reset it, always with a
 * reason, through PUT and DELETE /api/v1/flags/{name}. The server decides (role, invariants); this only asks and shows
 * the answer, including a refusal, in the server's own words. Invariants and flags locked by a compliance profile get no
 * buttons at all (flags-table.tsx says why instead).
 */
import { useRouter } from 'next/navigation';
import { createContext, useCallback, useContext, useEffect, useId, useRef, useState, type ReactNode } from 'react';
import { useModal } from '@/app/_components/use-modal';
import type { TransparencyFlag } from '@/lib/flags/transparency';
import { flagSchema } from '@/lib/http/responses';
import { apiDelete, apiPut, asApiError } from '@/app/_lib/api-client';
import styles from './transparency.module.css';
import { DialogFooter } from './dialog-footer';

type Action = { kind: 'set'; value: boolean } | { kind: 'reset' };

interface Request {
  flag: TransparencyFlag;
  action: Action;
  trigger: HTMLElement | null;
}

const Ctx = createContext<((r: Request) => void) | null>(null);

const onOff = (v: boolean) => (v ? 'on' : 'off');

/** How a value was decided, in words: "the environment variable SWARM_FLAG_X", "a runtime override by admin". */
function decidedBy(f: TransparencyFlag): string {
  if (f.layer === 'override' && f.override) return `a runtime override by ${f.override.set_by}`;
  if (f.layer === 'env') return `the environment variable ${f.variable ?? f.env_var ?? ''}`.trim();
  if (f.layer === 'alias') return `the legacy alias ${f.variable ?? ''}`.trim();
  if (f.layer === 'profile' && f.locked_by) return `the compliance profile ${f.locked_by.join(', ')}, which locks it`;
  return 'its declared default';
}

function verb(action: Action): string {
  return action.kind === 'reset' ? 'Reset' : action.value ? 'Turn on' : 'Turn off';
}

/** Holds the one dialog of the page and the status line that announces a saved change. */
export function FlagAdminProvider({ children }: { children: ReactNode }) {
  const [request, setRequest] = useState<Request | null>(null);
  const [status, setStatus] = useState('');
  const router = useRouter();

  const returnFocus = useRef<HTMLElement | null>(null);

  const close = useCallback(
    (saved?: string) => {
      returnFocus.current = request?.trigger ?? null;
      setRequest(null);
      if (saved) {
        setStatus(saved);
        router.refresh();
      }
    },
    [request, router],
  );

  // Back to the button that opened the dialog once the dialog is gone, so a keyboard user continues where they were.
  useEffect(() => {
    if (request || !returnFocus.current) return;
    if (returnFocus.current.isConnected) returnFocus.current.focus();
    returnFocus.current = null;
  }, [request]);

  return (
    <Ctx.Provider value={setRequest}>
      <p className={styles.saved} role="status" aria-live="polite">
        {status}
      </p>
      {children}
      {request ? <FlagChangeDialog key={`${request.flag.name}:${request.action.kind}`} request={request} onClose={close} /> : null}
    </Ctx.Provider>
  );
}

/** The buttons of one flag's row (only for a flag a change can take effect on: not an invariant, not a locked flag). */
export function FlagActions({ flag }: { flag: TransparencyFlag }) {
  const open = useContext(Ctx);
  if (!open) return null;
  // Turn it the other way; reset only an override in place.
  const actions: Action[] = flag.override !== null ? [{ kind: 'set', value: !flag.value }, { kind: 'reset' }] : [{ kind: 'set', value: !flag.value }];
  return (
    <div className={styles.actionButtons}>
      {actions.map((action) => (
        <button key={action.kind} type="button" className="button" aria-label={`${verb(action)} ${flag.name}`} aria-haspopup="dialog" onClick={(e) => open({ flag, action, trigger: e.currentTarget })}>
          {verb(action)}
        </button>
      ))}
    </div>
  );
}

function FlagChangeDialog({ request, onClose }: { request: Request; onClose: (saved?: string) => void }) {
  const { flag, action } = request;
  const reasonRef = useRef<HTMLTextAreaElement>(null);
  const ref = useModal(reasonRef);
  const [reason, setReason] = useState('');
  const [missingReason, setMissingReason] = useState(false);
  const [error, setError] = useState<string[] | null>(null);
  const [busy, setBusy] = useState(false);
  const saved = useRef<string | undefined>(undefined);
  const id = useId();

  async function submit() {
    if (!reason.trim()) {
      setMissingReason(true);
      reasonRef.current?.focus();
      return;
    }
    setBusy(true);
    setError(null);
    const path = `/api/v1/flags/${encodeURIComponent(flag.name)}`;
    try {
      const answer =
        action.kind === 'set'
          ? await apiPut(path, { value: action.value, reason: reason.trim() }, flagSchema)
          : await apiDelete(path, { reason: reason.trim() }, flagSchema);
      saved.current = `Saved: ${answer.name} is now ${onOff(answer.value)} (${answer.layer}). The change is in the history below.`;
      // Close it the native way (the close event below reports it), so the browser leaves the modal state cleanly.
      ref.current?.close();
    } catch (e) {
      const error = asApiError(e);
      if (error.status >= 200 && error.status < 300) {
        // Saved, in an answer this page does not read: the history below shows what changed.
        saved.current = `Saved the change to ${flag.name}.`;
        ref.current?.close();
      } else {
        // The refusal in the server's own words and each problem it named (or that the server was not reached).
        setError([error.message, ...error.issues.map((i) => i.message)]);
      }
    } finally {
      setBusy(false);
    }
  }

  const title = `${verb(action)} ${flag.name}`;
  const guards = [...flag.guards.tools, ...flag.guards.paths];
  return (
    <dialog
      ref={ref}
      className={styles.dialog}
      aria-labelledby={`${id}-title`}
      aria-describedby={`${id}-what`}
      onClose={() => onClose(saved.current)}
      onCancel={(e) => {
        // Escape closes, except while the request is on its way (its answer must be seen).
        if (busy) e.preventDefault();
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
          {title}
        </h2>
        <div id={`${id}-what`}>
          <p>
            Now <strong>{onOff(flag.value)}</strong>, decided by {decidedBy(flag)}.
          </p>
          {action.kind === 'set' ? (
            <p>
              A runtime override sets it <strong>{onOff(action.value)}</strong> in every process within a second, until it is reset.
              {!action.value && guards.length > 0 ? <> While it is off, the engine denies {guards.join(', ')}.</> : null}
            </p>
          ) : (
            <p>The override is removed; the flag falls back to its environment variable, alias or declared default.</p>
          )}
        </div>
        <label htmlFor={`${id}-reason`} className={styles.fieldLabel}>
          Reason <span className={styles.required}>(required)</span>
        </label>
        <p id={`${id}-hint`} className={styles.fieldHint}>
          Kept in the flag history with your name, for auditors.
        </p>
        <textarea
          id={`${id}-reason`}
          ref={reasonRef}
          className={styles.textarea}
          rows={3}
          maxLength={2000}
          required
          value={reason}
          aria-invalid={missingReason && !reason.trim() ? true : undefined}
          aria-describedby={`${id}-hint${missingReason && !reason.trim() ? ` ${id}-missing` : ''}`}
          onChange={(e) => setReason(e.target.value)}
        />
        {missingReason && !reason.trim() ? (
          <p id={`${id}-missing`} className={styles.fieldError}>
            Give a reason: every flag change is recorded with one.
          </p>
        ) : null}
        <DialogFooter error={error} refusal="Not changed." busy={busy} action={verb(action)} onCancel={() => ref.current?.close()} />
      </form>
    </dialog>
  );
}
