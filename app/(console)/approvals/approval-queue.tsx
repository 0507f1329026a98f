'use client';

import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { normalize, type Approval, type ApprovalView } from './approval-types';
import { distinguishers, plainReason, summarize } from './approval-text';
import { ArgumentsView } from './arguments-view';
import { ApproveDialog, type ApproveCandidate } from './approve-dialog';
import { ago, formatDuration, urgency } from './durations';
import { usePublishPendingCount } from './pending-count';
import { RejectDialog } from './reject-dialog';
import { RiskBadge } from './request-parts';
import styles from './approvals.module.css';

const POLL_MS = 3000;
const SHORTCUTS_KEY = 'swarm.approvals.shortcuts';
const MOVE_FIRST = 'Move to a request first (j/k).';

interface Note {
  id: string;
  text: string;
  kind: 'info' | 'error';
}

class ApiError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

async function api<T>(path: string, init?: RequestInit): Promise<T> {
  const res = await fetch(path, { ...init, headers: { 'content-type': 'application/json', ...init?.headers } });
  const body = (await res.json().catch(() => null)) as (T & { error?: { message?: string } }) | null;
  if (!res.ok) throw new ApiError(body?.error?.message ?? `The server answered ${res.status}.`, res.status);
  return body as T;
}

/** "deployer → deploy_serving: rejected by admin (reason)", for a request decided elsewhere. */
function describe(a: ApprovalView): string {
  const by = a.decided_by ? ` by ${a.decided_by}` : '';
  return `${a.agent} → ${a.tool}: ${a.outcome}${by}${a.decision_reason ? ` (${a.decision_reason})` : ''}`;
}

/**
 * The pending queue. Safe under time pressure: nothing is current until the operator moves (j/k, Tab or a click), and
 * no keystroke decides on its own: approving always goes through a confirmation that restates the call.
 */
export function ApprovalQueue({
  initial,
  canDecide,
  me,
  myRole,
  serverNow,
}: {
  initial: ApprovalView[];
  canDecide: boolean;
  /** the signed-in principal: a card they approved already, or requested, offers no approve */
  me: string;
  myRole?: string;
  serverNow?: number;
}) {
  const [items, setItems] = useState(initial);
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  const [currentId, setCurrentId] = useState<string | null>(null);
  const [shortcuts, setShortcuts] = useState(true);
  const [approving, setApproving] = useState<ApproveCandidate[] | null>(null);
  const [rejecting, setRejecting] = useState<Approval[] | null>(null);
  const [notes, setNotes] = useState<Note[]>([]);
  const [busy, setBusy] = useState(false);
  const [now, setNow] = useState(() => serverNow ?? Date.now() / 1000);
  /** true once the page is interactive (the shortcuts listen); tests wait for it */
  const [ready, setReady] = useState(false);
  /** requests this operator gave a (non-final) approval to in this session, in case a poll answers before the server shows it */
  const [mine, setMine] = useState<ReadonlySet<string>>(new Set());
  const cards = useRef(new Map<string, HTMLElement>());
  const heading = useRef<HTMLHeadingElement>(null);
  const decidedHere = useRef(new Set<string>());
  /** set by a decision made here: the position of the current card then (-1: none), to move on from */
  const advanceFrom = useRef<number | null>(null);

  const list = useMemo(() => items.map(normalize), [items]);
  const twins = useMemo(() => distinguishers(items), [items]);
  const currentIndex = currentId ? list.findIndex((a) => a.id === currentId) : -1;
  const current = currentIndex >= 0 ? list[currentIndex] : undefined;

  usePublishPendingCount(items.length);

  const note = useCallback((text: string, kind: Note['kind'] = 'info') => {
    const id = `${Date.now()}-${Math.random()}`;
    setNotes((n) => [...n.slice(-4), { id, text, kind }]);
    setTimeout(() => setNotes((n) => n.filter((x) => x.id !== id)), 15_000);
  }, []);

  useEffect(() => {
    setShortcuts(window.localStorage.getItem(SHORTCUTS_KEY) !== 'off');
    setNow(Date.now() / 1000);
    setReady(true);
  }, []);

  // New requests appear without a reload; a request decided elsewhere leaves with a note of who decided it.
  useEffect(() => {
    let stopped = false;
    const poll = async () => {
      try {
        const { approvals } = await api<{ approvals: ApprovalView[] }>('/api/v1/approvals?status=pending');
        if (stopped) return;
        setItems((previous) => {
          const still = new Set(approvals.map((a) => a.id));
          for (const gone of previous.filter((p) => !still.has(p.id) && !decidedHere.current.has(p.id))) {
            void api<ApprovalView>(`/api/v1/approvals/${gone.id}`)
              .then((a) => note(`Decided elsewhere: ${describe(a)}`))
              .catch(() => undefined);
          }
          // a poll sent before one of our decisions landed must not bring the decided card back
          return approvals.filter((a) => !decidedHere.current.has(a.id));
        });
        setNow(Date.now() / 1000);
      } catch {
        // A missed poll is retried on the next tick; the list stays as it was.
      }
    };
    const timer = setInterval(poll, POLL_MS);
    return () => {
      stopped = true;
      clearInterval(timer);
    };
  }, [note]);

  const focusCard = useCallback((id: string | null) => {
    if (id) cards.current.get(id)?.focus();
    else heading.current?.focus();
  }, []);

  // After a decision made here, or when a poll takes the current card away: a decided current card hands over to the
  // next one (the operator is working through the queue); one decided elsewhere leaves nothing current.
  useEffect(() => {
    const from = advanceFrom.current;
    advanceFrom.current = null;
    if (currentId && !items.some((a) => a.id === currentId)) {
      const next = from !== null && from >= 0 && items.length > 0 ? items[Math.min(from, items.length - 1)] : undefined;
      setCurrentId(next?.id ?? null);
      if (from !== null) focusCard(next?.id ?? null);
    } else if (from !== null) {
      const active = document.activeElement;
      if (currentId) focusCard(currentId);
      else if (!active || active === document.body) focusCard(null);
    }
    setSelected((s) => {
      const ids = new Set(items.map((a) => a.id));
      return [...s].every((id) => ids.has(id)) ? s : new Set([...s].filter((id) => ids.has(id)));
    });
  }, [items, currentId, focusCard]);

  /** Why this operator cannot approve a request, in words, or null. */
  const blockedReason = useCallback(
    (a: Approval): string | null => {
      if (a.approvals.some((g) => g.by === me) || mine.has(a.id)) {
        return a.approvals_required === 2 ? 'You gave the first approval; a second operator must approve it.' : 'You approved it already; another operator must approve it.';
      }
      if (a.requested_by === me) return 'You requested this call; another operator must approve it.';
      if (myRole && a.approver_roles && !a.approver_roles.includes(myRole)) {
        return `The “${a.gate}” gate is approved by ${a.approver_roles.join(' or ')}; your role is ${myRole}.`;
      }
      return null;
    },
    [me, myRole, mine],
  );

  const decide = useCallback(
    async (targets: Approval[], action: 'approve' | 'reject', reason?: string) => {
      setBusy(true);
      const outcome = new Map<string, ApprovalView | 'gone'>();
      for (const t of targets) {
        const label = summarize(t);
        decidedHere.current.add(t.id);
        try {
          const raw = await api<ApprovalView>(`/api/v1/approvals/${t.id}/${action}`, { method: 'POST', body: JSON.stringify(reason ? { reason } : {}) });
          const a = normalize(raw);
          if (action === 'approve' && a.status === 'pending') {
            // a two-person gate: our approval counted, the request waits for another operator
            decidedHere.current.delete(t.id);
            outcome.set(t.id, raw);
            setMine((m) => new Set(m).add(t.id));
            note(
              a.approvals_required === 2
                ? `First of two approvals given: ${label}; a second operator must approve.`
                : `Approval ${a.approvals.length} of ${a.approvals_required} given: ${label}; another operator must approve.`,
            );
          } else {
            outcome.set(t.id, 'gone');
            note(`${action === 'approve' ? 'Approved' : 'Rejected'}: ${label}`);
          }
        } catch (e) {
          const message = e instanceof Error ? e.message : String(e);
          note(`Could not ${action} ${label}: ${message}`, 'error');
          // decided meanwhile (409) or gone (404): it leaves the list; anything else stays for another try
          if (e instanceof ApiError && (e.status === 409 || e.status === 404)) outcome.set(t.id, 'gone');
          else decidedHere.current.delete(t.id);
        }
      }
      advanceFrom.current = currentIndex;
      setItems((l) => l.flatMap((a) => {
        const o = outcome.get(a.id);
        return o === 'gone' ? [] : o ? [o] : [a];
      }));
      setSelected(new Set());
      setBusy(false);
    },
    [note, currentIndex],
  );

  const openApprove = useCallback(
    (ids: string[]) => {
      // in queue order, oldest first, as the operator sees them
      const candidates = list.filter((a) => ids.includes(a.id)).map((a) => ({ a, blocked: blockedReason(a) }));
      if (candidates.length === 0) return;
      const only = candidates.length === 1 ? candidates[0] : undefined;
      if (only?.blocked) {
        note(`Not approved: ${summarize(only.a)}. ${only.blocked}`);
        return;
      }
      if (candidates.every((c) => c.blocked)) {
        note('None of the selected requests can be approved by you: each needs another operator.');
        return;
      }
      setApproving(candidates);
    },
    [list, blockedReason, note],
  );

  const openReject = useCallback((ids: string[]) => {
    const targets = list.filter((a) => ids.includes(a.id));
    if (targets.length) setRejecting(targets);
  }, [list]);

  const toggle = useCallback((id: string) => {
    setSelected((s) => {
      const next = new Set(s);
      if (next.has(id)) next.delete(id);
      else next.add(id);
      return next;
    });
  }, []);

  // Single-key shortcuts: j/k move, a asks to approve, r asks to reject, x selects. Never while typing or in a dialog.
  useEffect(() => {
    if (!shortcuts) return;
    const onKey = (e: KeyboardEvent) => {
      if (e.metaKey || e.ctrlKey || e.altKey || approving || rejecting || busy) return;
      const t = e.target as HTMLElement | null;
      if (t && (t.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(t.tagName) || t.closest('dialog'))) return;
      const move = (i: number) => {
        const next = list[Math.max(0, Math.min(list.length - 1, i))];
        if (!next) return;
        setCurrentId(next.id);
        focusCard(next.id);
      };
      if (e.key === 'j') move(currentIndex < 0 ? 0 : currentIndex + 1);
      else if (e.key === 'k') move(currentIndex < 0 ? 0 : currentIndex - 1);
      else if (!canDecide || !['a', 'r', 'x'].includes(e.key)) return;
      else if (e.repeat) {
        // a held key never decides or stacks notes
      } else if (e.key === 'a') {
        if (selected.size) openApprove([...selected]);
        else if (current) openApprove([current.id]);
        else note(MOVE_FIRST);
      } else if (e.key === 'r') {
        if (selected.size) openReject([...selected]);
        else if (current) openReject([current.id]);
        else note(MOVE_FIRST);
      } else if (e.key === 'x') {
        if (current) toggle(current.id);
        else note(MOVE_FIRST);
      }
      e.preventDefault();
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [shortcuts, list, currentIndex, current, canDecide, selected, approving, rejecting, busy, openApprove, openReject, toggle, note, focusCard]);

  const setShortcutsPersisted = (on: boolean) => {
    setShortcuts(on);
    window.localStorage.setItem(SHORTCUTS_KEY, on ? 'on' : 'off');
  };

  return (
    <section aria-labelledby="queue-title" data-ready={ready ? 'true' : undefined}>
      <div className={styles.toolbar}>
        <h2 id="queue-title" className={styles.count} ref={heading} tabIndex={-1}>
          {items.length === 0 ? 'Nothing is waiting' : `${items.length} waiting, oldest first`}
        </h2>
        {canDecide && selected.size > 0 ? (
          <div className={styles.bulk} role="group" aria-label="Selected requests">
            <span>{selected.size} selected</span>
            <button type="button" className="button button-primary" disabled={busy} onClick={() => openApprove([...selected])}>
              Approve selected…
            </button>
            <button type="button" className="button button-danger" disabled={busy} onClick={() => openReject([...selected])}>
              Reject selected…
            </button>
            <button type="button" className="button button-quiet" disabled={busy} onClick={() => setSelected(new Set())}>
              Clear
            </button>
          </div>
        ) : null}
        <label className={styles.shortcutToggle}>
          <input type="checkbox" checked={shortcuts} onChange={(e) => setShortcutsPersisted(e.target.checked)} /> Keyboard shortcuts
          <span className="muted"> (j/k move{canDecide ? ', a approve, r reject, x select; each asks first' : ''})</span>
        </label>
      </div>

      <div className={styles.notes} role="status" aria-live="polite">
        {notes.map((n) => (
          <p key={n.id} className={n.kind === 'error' ? styles.noteError : styles.note}>
            {n.text}
          </p>
        ))}
      </div>

      {list.length === 0 ? (
        <div className="panel empty">No gated call is waiting for a decision. New requests appear here by themselves.</div>
      ) : (
        <ol className={styles.queue}>
          {list.map((a) => {
            const left = urgency(a.expires_at - now);
            const twin = twins.get(a.id);
            const isCurrent = a.id === currentId;
            const blocked = canDecide ? blockedReason(a) : null;
            const reason = plainReason(a);
            const first = a.approvals[0];
            return (
              <li
                key={a.id}
                ref={(el) => {
                  if (el) cards.current.set(a.id, el);
                  else cards.current.delete(a.id);
                }}
                tabIndex={0}
                className={`${styles.card} ${isCurrent ? styles.current : ''} ${selected.has(a.id) ? styles.selected : ''}`}
                aria-label={`${a.agent} wants to run ${a.tool}${twin ? `, ${twin}` : ''}`}
                aria-current={isCurrent ? 'true' : undefined}
                data-approval-id={a.id}
                onFocus={() => setCurrentId(a.id)}
              >
                <div className={styles.cardHead}>
                  <h3 className={styles.ask}>
                    <span className={styles.agent}>{a.agent}</span> wants to run <code className={styles.tool}>{a.tool}</code>
                    {twin ? <span className={styles.twin}> · {twin}</span> : null}
                  </h3>
                  {canDecide ? (
                    <label className={styles.select}>
                      <input type="checkbox" checked={selected.has(a.id)} onChange={() => toggle(a.id)} /> Select
                    </label>
                  ) : null}
                </div>
                <p className={styles.tags}>
                  <RiskBadge risk={a.risk} />
                  <span className={styles.gateTag}>
                    gate <strong>{a.gate}</strong>
                  </span>
                  {a.approvals_required > 1 ? <span className={styles.gateTag}>{a.approvals_required === 2 ? 'two-person gate' : `${a.approvals_required} approvals needed`}</span> : null}
                </p>
                <p className={styles.why}>
                  <strong>Why it waits:</strong> {a.gate_description ? `${a.gate_description} ` : ''}
                  {reason ?? (a.gate_description ? '' : `Calls behind the “${a.gate}” gate need a person to approve them.`)}
                </p>
                <ArgumentsView args={a.arguments} markProduction />
                {a.approvals_required > 1 ? (
                  <p className={styles.progress} data-testid="approval-progress">
                    <strong>
                      {a.approvals.length} of {a.approvals_required} approvals
                    </strong>
                    {first ? ` · approved by ${first.by}${first.by === me ? ' (you)' : ''} ${ago(now - first.at)}` : ' · none given yet'}
                    {a.approvals.slice(1).map((g) => ` · then by ${g.by}${g.by === me ? ' (you)' : ''} ${ago(now - g.at)}`)}
                  </p>
                ) : null}
                <p className={styles.meta}>
                  Requested by <strong>{a.requested_by}</strong> · waiting {formatDuration(now - a.requested_at)} ·{' '}
                  <span className={styles[`urgency_${left.level}`]}>{left.label}</span> · rule <code>{a.rule_source}</code>
                </p>
                {canDecide ? (
                  <div className={styles.actions}>
                    {blocked ? (
                      <p className={styles.plainNote}>{blocked}</p>
                    ) : (
                      <button type="button" className="button button-primary" disabled={busy} onClick={() => openApprove([a.id])}>
                        Approve…
                      </button>
                    )}
                    <button type="button" className="button button-danger" disabled={busy} onClick={() => openReject([a.id])}>
                      Reject…
                    </button>
                  </div>
                ) : null}
              </li>
            );
          })}
        </ol>
      )}
      {approving ? (
        <ApproveDialog
          candidates={approving}
          onCancel={() => setApproving(null)}
          onConfirm={(ids) => {
            const targets = approving.filter((c) => ids.includes(c.a.id)).map((c) => c.a);
            setApproving(null);
            void decide(targets, 'approve');
          }}
        />
      ) : null}
      {rejecting ? (
        <RejectDialog
          items={rejecting}
          onCancel={() => setRejecting(null)}
          onConfirm={(reason) => {
            const targets = rejecting;
            setRejecting(null);
            void decide(targets, 'reject', reason);
          }}
        />
      ) : null}
    </section>
  );
}
