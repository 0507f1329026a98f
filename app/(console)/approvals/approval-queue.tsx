'use client';

import { useCallback, useEffect, useRef, useState } from 'react';
import type { ApprovalView } from './approval-types';
import { ArgumentsView } from './arguments-view';
import { formatDuration, urgency } from './durations';
import { RejectDialog } from './reject-dialog';
import styles from './approvals.module.css';

const POLL_MS = 3000;
const SHORTCUTS_KEY = 'swarm.approvals.shortcuts';

interface Note {
  id: string;
  text: string;
  kind: 'info' | 'error';
}

async function api<T>(path: string, init?: RequestInit): Promise<T> {
  const res = await fetch(path, { ...init, headers: { 'content-type': 'application/json', ...init?.headers } });
  const body = (await res.json().catch(() => null)) as (T & { error?: { message?: string } }) | null;
  if (!res.ok) throw new Error(body?.error?.message ?? `The server answered ${res.status}.`);
  return body as T;
}

function describe(a: ApprovalView): string {
  const by = a.decided_by ? ` by ${a.decided_by}` : '';
  return `${a.agent} → ${a.tool}: ${a.outcome}${by}${a.decision_reason ? ` (${a.decision_reason})` : ''}`;
}

export function ApprovalQueue({ initial, canDecide }: { initial: ApprovalView[]; canDecide: boolean }) {
  const [items, setItems] = useState(initial);
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  const [focus, setFocus] = useState(0);
  const [shortcuts, setShortcuts] = useState(true);
  const [rejecting, setRejecting] = useState<string[] | null>(null);
  const [notes, setNotes] = useState<Note[]>([]);
  const [busy, setBusy] = useState(false);
  const [now, setNow] = useState(() => Date.now() / 1000);
  const cards = useRef<(HTMLElement | null)[]>([]);
  const decidedHere = useRef(new Set<string>());

  const note = useCallback((text: string, kind: Note['kind'] = 'info') => {
    const id = `${Date.now()}-${Math.random()}`;
    setNotes((n) => [...n.slice(-4), { id, text, kind }]);
    setTimeout(() => setNotes((n) => n.filter((x) => x.id !== id)), 15_000);
  }, []);

  useEffect(() => {
    setShortcuts(window.localStorage.getItem(SHORTCUTS_KEY) !== 'off');
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
            void api<ApprovalView>(`/api/v1/approvals/${gone.id}`).then((a) => note(`Decided elsewhere: ${describe(a)}`));
          }
          return approvals;
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

  useEffect(() => {
    if (focus >= items.length && items.length > 0) setFocus(items.length - 1);
  }, [items.length, focus]);

  const decide = useCallback(
    async (ids: string[], action: 'approve' | 'reject', reason?: string) => {
      setBusy(true);
      for (const id of ids) {
        try {
          decidedHere.current.add(id);
          const a = await api<ApprovalView>(`/api/v1/approvals/${id}/${action}`, { method: 'POST', body: JSON.stringify(reason ? { reason } : {}) });
          note(`${action === 'approve' ? 'Approved' : 'Rejected'}: ${a.agent} → ${a.tool}`);
        } catch (e) {
          note(`Could not ${action} ${id}: ${e instanceof Error ? e.message : String(e)}`, 'error');
        }
      }
      setItems((list) => list.filter((a) => !ids.includes(a.id)));
      setSelected(new Set());
      setBusy(false);
    },
    [note],
  );

  const toggle = useCallback((id: string) => {
    setSelected((s) => {
      const next = new Set(s);
      if (next.has(id)) next.delete(id);
      else next.add(id);
      return next;
    });
  }, []);

  // Single-key shortcuts: j/k move, a approves, r rejects, x selects. Never while typing or in the dialog.
  useEffect(() => {
    if (!shortcuts) return;
    const onKey = (e: KeyboardEvent) => {
      if (e.metaKey || e.ctrlKey || e.altKey || rejecting || busy) return;
      const t = e.target as HTMLElement | null;
      if (t && (t.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(t.tagName))) return;
      const current = items[focus];
      const move = (i: number) => {
        const n = Math.max(0, Math.min(items.length - 1, i));
        setFocus(n);
        cards.current[n]?.focus();
      };
      if (e.key === 'j') move(focus + 1);
      else if (e.key === 'k') move(focus - 1);
      else if (!canDecide || !current) return;
      else if (e.key === 'a') void decide(selected.size ? [...selected] : [current.id], 'approve');
      else if (e.key === 'r') setRejecting(selected.size ? [...selected] : [current.id]);
      else if (e.key === 'x') toggle(current.id);
      else return;
      e.preventDefault();
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [shortcuts, items, focus, canDecide, selected, rejecting, busy, decide, toggle]);

  const setShortcutsPersisted = (on: boolean) => {
    setShortcuts(on);
    window.localStorage.setItem(SHORTCUTS_KEY, on ? 'on' : 'off');
  };

  return (
    <section aria-labelledby="queue-title">
      <div className={styles.toolbar}>
        <h2 id="queue-title" className={styles.count}>
          {items.length === 0 ? 'Nothing is waiting' : `${items.length} waiting, oldest first`}
        </h2>
        {canDecide && selected.size > 0 ? (
          <div className={styles.bulk} role="group" aria-label="Selected requests">
            <span>{selected.size} selected</span>
            <button type="button" className="button button-primary" disabled={busy} onClick={() => void decide([...selected], 'approve')}>
              Approve selected
            </button>
            <button type="button" className="button button-danger" disabled={busy} onClick={() => setRejecting([...selected])}>
              Reject selected…
            </button>
          </div>
        ) : null}
        <label className={styles.shortcutToggle}>
          <input type="checkbox" checked={shortcuts} onChange={(e) => setShortcutsPersisted(e.target.checked)} /> Keyboard shortcuts
          <span className="muted"> (j/k move{canDecide ? ', a approve, r reject, x select' : ''})</span>
        </label>
      </div>

      <div className={styles.notes} role="status" aria-live="polite">
        {notes.map((n) => (
          <p key={n.id} className={n.kind === 'error' ? styles.noteError : styles.note}>
            {n.text}
          </p>
        ))}
      </div>

      {items.length === 0 ? (
        <div className="panel empty">No gated call is waiting for a decision. New requests appear here by themselves.</div>
      ) : (
        <ol className={styles.queue}>
          {items.map((a, i) => {
            const left = urgency(a.expires_at - now);
            return (
              <li
                key={a.id}
                ref={(el) => {
                  cards.current[i] = el;
                }}
                tabIndex={0}
                className={`${styles.card} ${i === focus ? styles.focused : ''} ${selected.has(a.id) ? styles.selected : ''}`}
                aria-label={`${a.agent} wants to run ${a.tool}`}
                data-approval-id={a.id}
                onFocus={() => setFocus(i)}
              >
                <div className={styles.cardHead}>
                  <span className="badge badge-hitl">{a.gate}</span>
                  <h3 className={styles.ask}>
                    <span className={styles.agent}>{a.agent}</span> wants to run <code className={styles.tool}>{a.tool}</code>
                  </h3>
                  {canDecide ? (
                    <label className={styles.select}>
                      <input type="checkbox" checked={selected.has(a.id)} onChange={() => toggle(a.id)} /> Select
                    </label>
                  ) : null}
                </div>
                <ArgumentsView args={a.arguments} />
                <p className={styles.meta}>
                  Requested by <strong>{a.requested_by}</strong> · waiting {formatDuration(now - a.requested_at)} ·{' '}
                  <span className={styles[`urgency_${left.level}`]}>{left.label}</span> · rule <code>{a.rule_source}</code>
                </p>
                {canDecide ? (
                  <div className={styles.actions}>
                    <button type="button" className="button button-primary" disabled={busy} onClick={() => void decide([a.id], 'approve')}>
                      Approve
                    </button>
                    <button type="button" className="button button-danger" disabled={busy} onClick={() => setRejecting([a.id])}>
                      Reject…
                    </button>
                  </div>
                ) : null}
              </li>
            );
          })}
        </ol>
      )}
      {rejecting ? (
        <RejectDialog
          count={rejecting.length}
          onCancel={() => setRejecting(null)}
          onConfirm={(reason) => {
            const ids = rejecting;
            setRejecting(null);
            void decide(ids, 'reject', reason);
          }}
        />
      ) : null}
    </section>
  );
}
