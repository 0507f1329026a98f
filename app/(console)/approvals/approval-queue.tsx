'use client';

import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { BACKGROUND_HEADER, useSession } from '@/app/_components/session-watch';
import { Time } from '@/app/_components/time';
import { normalize, type Approval, type ApprovalView } from './approval-types';
import { distinguishers, plainReason, summarize } from './approval-text';
import { ArgumentsView } from './arguments-view';
import { ApproveDialog, type ApproveCandidate } from './approve-dialog';
import { ago, formatDuration, urgency } from './durations';
import { usePublishPendingCount } from './pending-count';
import { RejectDialog } from './reject-dialog';
import { filterChoices, FILTER_KEYS, isFiltered, matchesFilter, queueFilterQuery, type FilterKey, type QueueFilter } from './queue-filter';
import { RequestLine, RiskBadge } from './request-parts';
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

/** The request a link names (/approvals?request=<id>): as the server found it at load, or null for no such request. */
export interface DeepLink {
  id: string;
  found: ApprovalView | null;
}

const FILTER_LABEL: Record<FilterKey, string> = { agent: 'Agent', tool: 'Tool', gate: 'Gate', risk: 'Risk' };
const ENDED_NOTE = 'Approving and rejecting are off until you sign in again.';

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
  initialFilter,
  deepLink = null,
}: {
  initial: ApprovalView[];
  canDecide: boolean;
  /** the signed-in principal: a card they approved already, or requested, offers no approve */
  me: string;
  myRole?: string;
  serverNow?: number;
  /** the filter and view the URL asked for */
  initialFilter?: QueueFilter;
  /** /approvals?request=<id> */
  deepLink?: DeepLink | null;
}) {
  const { ended, markEnded } = useSession();
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
  const [filter, setFilter] = useState<QueueFilter>(initialFilter ?? { agent: '', tool: '', gate: '', risk: '', compact: false });
  /** the request a link pointed at, while it is still the one the person looks at */
  const [highlightId, setHighlightId] = useState<string | null>(deepLink?.found?.status === 'pending' ? deepLink.id : null);
  /** when the times on the cards were last true (the poll's last answer); frozen once signed out */
  const [asOf, setAsOf] = useState<number | null>(null);
  const cards = useRef(new Map<string, HTMLElement>());
  const heading = useRef<HTMLHeadingElement>(null);
  const decidedHere = useRef(new Set<string>());
  /** set by a decision made here: the position of the current card then (-1: none), to move on from */
  const advanceFrom = useRef<number | null>(null);

  const all = useMemo(() => items.map(normalize), [items]);
  // the request a link pointed at stays in view whatever the filter says
  const list = useMemo(() => all.filter((a) => a.id === highlightId || matchesFilter(a, filter)), [all, filter, highlightId]);
  const twins = useMemo(() => distinguishers(items), [items]);
  /** the list as last rendered, for the poll (which runs outside React's updates) */
  const itemsRef = useRef(items);
  useEffect(() => {
    itemsRef.current = items;
  }, [items]);
  /** the ids in the open Approve or Reject dialog, for a poll that finds them decided elsewhere */
  const openDialogIds = useRef<readonly string[]>([]);
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
    setAsOf(Date.now() / 1000);
    setReady(true);
  }, []);

  // A link to one pending request: bring it into view, make it current and give it the focus, once.
  useEffect(() => {
    if (!highlightId) return;
    const card = cards.current.get(highlightId);
    if (!card) return;
    setCurrentId(highlightId);
    card.scrollIntoView({ block: 'center' });
    card.focus({ preventScroll: true });
    // on load only: later moves are the person's
  }, []);

  // The tab title carries the count, so a queue in a background tab is seen filling up.
  useEffect(() => {
    document.title = ended ? 'Signed out · Approvals · Swarm Permissions' : `${items.length ? `(${items.length}) ` : ''}Approvals · Swarm Permissions`;
  }, [items.length, ended]);

  const updateFilter = useCallback((next: QueueFilter) => {
    setFilter(next);
    // the URL is the filter (reload, share, come back after signing in); no navigation, the queue is already here
    window.history.replaceState(window.history.state, '', `${window.location.pathname}${queueFilterQuery(new URLSearchParams(window.location.search), next)}`);
  }, []);

  // New requests appear without a reload; a request decided elsewhere leaves with a note of who decided it, and a
  // dialog open on it closes with that note (confirming would only be refused). Signed out, the poll stops: the
  // session banner (app/_components/session-watch.tsx) says why, and the cards say their times are not updating.
  // Each poll is sent as a background request (x-swarm-background: 1), so the server can tell it from a person's read.
  useEffect(() => {
    if (ended) return;
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const poll = async () => {
      try {
        const { approvals } = await api<{ approvals: ApprovalView[] }>('/api/v1/approvals?status=pending', { headers: BACKGROUND_HEADER });
        if (stopped) return;
        const still = new Set(approvals.map((a) => a.id));
        const gone = itemsRef.current.filter((p) => !still.has(p.id) && !decidedHere.current.has(p.id));
        const inDialog = gone.filter((g) => openDialogIds.current.includes(g.id));
        if (inDialog.length > 0) {
          setApproving(null);
          setRejecting(null);
          openDialogIds.current = [];
        }
        for (const g of gone) {
          const wasOpen = inDialog.includes(g);
          void api<ApprovalView>(`/api/v1/approvals/${g.id}`, { headers: BACKGROUND_HEADER })
            .then((a) => note(wasOpen ? `The dialog was closed, nothing was sent: this request was decided elsewhere. ${describe(a)}` : `Decided elsewhere: ${describe(a)}`))
            .catch(() => {
              if (wasOpen) note(`The dialog was closed, nothing was sent: ${summarize(g)} was decided elsewhere.`);
            });
        }
        // a poll sent before one of our decisions landed must not bring the decided card back
        setItems(approvals.filter((a) => !decidedHere.current.has(a.id)));
        setNow(Date.now() / 1000);
        setAsOf(Date.now() / 1000);
      } catch (e) {
        // 401: the session watch has seen it too (the banner); stop here. Anything else is retried on the next tick.
        if (e instanceof ApiError && e.status === 401) {
          markEnded();
          return;
        }
      }
      if (!stopped) timer = setTimeout(poll, POLL_MS);
    };
    timer = setTimeout(poll, POLL_MS);
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [note, ended, markEnded]);

  useEffect(() => {
    openDialogIds.current = approving ? approving.map((c) => c.a.id) : rejecting ? rejecting.map((a) => a.id) : [];
  }, [approving, rejecting]);

  // Signed out while a dialog is open: close it, it could only fail.
  useEffect(() => {
    if (!ended) return;
    setApproving(null);
    setRejecting(null);
  }, [ended]);

  const focusCard = useCallback((id: string | null) => {
    if (id) cards.current.get(id)?.focus();
    else heading.current?.focus();
  }, []);

  // After a decision made here, or when a poll takes the current card away: a decided current card hands over to the
  // next one (the operator is working through the queue); one decided elsewhere leaves nothing current.
  useEffect(() => {
    const from = advanceFrom.current;
    advanceFrom.current = null;
    if (currentId && !list.some((a) => a.id === currentId)) {
      const next = from !== null && from >= 0 && list.length > 0 ? list[Math.min(from, list.length - 1)] : undefined;
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
  }, [items, list, currentId, focusCard]);

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
          if (e instanceof ApiError && e.status === 401) markEnded();
          note(`Could not ${action} ${label}: ${e instanceof ApiError && e.status === 401 ? 'you are signed out; sign in again and decide it then.' : message}`, 'error');
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
    [note, currentIndex, markEnded],
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
      if (e.metaKey || e.ctrlKey || e.altKey || approving || rejecting || busy || ended) return;
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
  }, [shortcuts, list, currentIndex, current, canDecide, selected, approving, rejecting, busy, ended, openApprove, openReject, toggle, note, focusCard]);

  const setShortcutsPersisted = (on: boolean) => {
    setShortcuts(on);
    window.localStorage.setItem(SHORTCUTS_KEY, on ? 'on' : 'off');
  };

  const decideOff = busy || ended;
  const filtered = isFiltered(filter);
  const stale = ended && asOf !== null;
  const linked = deepLink && deepLink.found?.status !== 'pending' ? deepLink : null;

  return (
    <section aria-labelledby="queue-title" data-ready={ready ? 'true' : undefined} data-live={ready ? String(!ended) : undefined}>
      {linked ? <DeepLinkResult link={linked} /> : null}
      <div className={styles.toolbar}>
        <h2 id="queue-title" className={styles.count} ref={heading} tabIndex={-1}>
          {items.length === 0
            ? 'Nothing is waiting'
            : filtered
              ? `${list.length} of ${items.length} waiting shown, oldest first`
              : `${items.length} waiting, oldest first`}
        </h2>
        {canDecide && selected.size > 0 ? (
          <div className={styles.bulk} role="group" aria-label="Selected requests">
            <span>{selected.size} selected</span>
            <button type="button" className="button button-primary" disabled={decideOff} onClick={() => openApprove([...selected])}>
              Approve selected…
            </button>
            <button type="button" className="button button-danger" disabled={decideOff} onClick={() => openReject([...selected])}>
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

      <form className={styles.queueFilters} role="search" aria-label="Filter pending requests" onSubmit={(e) => e.preventDefault()}>
        {FILTER_KEYS.map((k) => (
          <label key={k}>
            {FILTER_LABEL[k]}
            <select value={filter[k]} onChange={(e) => updateFilter({ ...filter, [k]: e.target.value })}>
              <option value="">{k === 'risk' ? 'any risk' : `any ${k}`}</option>
              {filterChoices(all, k, filter[k]).map((v) => (
                <option key={v} value={v}>
                  {k === 'risk' ? `${v} risk` : v}
                </option>
              ))}
            </select>
          </label>
        ))}
        {filtered ? (
          <button type="button" className="button button-quiet" onClick={() => updateFilter({ ...filter, agent: '', tool: '', gate: '', risk: '' })}>
            Clear filters
          </button>
        ) : null}
        <button type="button" className={`button button-quiet ${styles.viewToggle}`} aria-pressed={filter.compact} onClick={() => updateFilter({ ...filter, compact: !filter.compact })}>
          Compact view
        </button>
      </form>

      {ended && canDecide ? (
        <p className={styles.endedNote} id="queue-ended">
          {ENDED_NOTE}
        </p>
      ) : null}

      <div className={styles.notes} role="status" aria-live="polite">
        {notes.map((n) => (
          <p key={n.id} className={n.kind === 'error' ? styles.noteError : styles.note}>
            {n.text}
          </p>
        ))}
      </div>

      {items.length === 0 ? (
        <div className="panel empty">No gated call is waiting for a decision. {ended ? 'Sign in again to see new requests.' : 'New requests appear here by themselves.'}</div>
      ) : list.length === 0 ? (
        <div className="panel empty">No waiting request matches this filter; {items.length} {items.length === 1 ? 'waits' : 'wait'} in all.</div>
      ) : (
        <ol className={`${styles.queue} ${filter.compact ? styles.compactQueue : ''}`}>
          {list.map((a) => {
            const left = urgency(a.expires_at - now);
            const twin = twins.get(a.id);
            const isCurrent = a.id === currentId;
            const blocked = canDecide ? blockedReason(a) : null;
            const reason = plainReason(a);
            const first = a.approvals[0];
            const highlighted = a.id === highlightId && isCurrent;
            const times = stale ? (
              <span className={styles.stale} data-stale="true">
                times as of <Time seconds={asOf} />, not updating (signed out)
              </span>
            ) : (
              <>
                waiting {formatDuration(now - a.requested_at)} · <span className={styles[`urgency_${left.level}`]}>{left.label}</span>
              </>
            );
            const actions = canDecide ? (
              <div className={styles.actions}>
                {blocked ? (
                  <p className={styles.plainNote}>{blocked}</p>
                ) : (
                  <button type="button" className="button button-primary" disabled={decideOff} aria-describedby={ended ? 'queue-ended' : undefined} onClick={() => openApprove([a.id])}>
                    Approve…
                  </button>
                )}
                <button type="button" className="button button-danger" disabled={decideOff} aria-describedby={ended ? 'queue-ended' : undefined} onClick={() => openReject([a.id])}>
                  Reject…
                </button>
              </div>
            ) : null;
            return (
              <li
                key={a.id}
                ref={(el) => {
                  if (el) cards.current.set(a.id, el);
                  else cards.current.delete(a.id);
                }}
                tabIndex={0}
                className={`${styles.card} ${filter.compact ? styles.compactCard : ''} ${isCurrent ? styles.current : ''} ${highlighted ? styles.highlighted : ''} ${selected.has(a.id) ? styles.selected : ''}`}
                aria-label={`${a.agent} wants to run ${a.tool}${twin ? `, ${twin}` : ''}${highlighted ? ' (the request the link points to)' : ''}`}
                aria-current={isCurrent ? 'true' : undefined}
                data-approval-id={a.id}
                data-highlighted={highlighted ? 'true' : undefined}
                onFocus={() => {
                  setCurrentId(a.id);
                  // the link's highlight gives way once the person moves on
                  if (highlightId && a.id !== highlightId) setHighlightId(null);
                }}
              >
                {filter.compact ? (
                  <div className={styles.compactRow}>
                    {canDecide ? (
                      <label className={styles.select}>
                        <input type="checkbox" checked={selected.has(a.id)} onChange={() => toggle(a.id)} />
                        <span className="visually-hidden"> Select</span>
                      </label>
                    ) : null}
                    <RiskBadge risk={a.risk} />
                    <span className={styles.compactWhat}>
                      <RequestLine a={a} max={3} />
                    </span>
                    <span className={styles.compactMeta}>
                      gate <strong>{a.gate}</strong>
                      {a.approvals_required > 1 ? ` · ${a.approvals.length} of ${a.approvals_required} approvals` : ''} · {times}
                    </span>
                    {actions}
                  </div>
                ) : (
                  <>
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
                    {highlighted ? <p className={styles.linkedNote}>The request the link points to.</p> : null}
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
                      Requested by <strong>{a.requested_by}</strong> · {times} · rule <code>{a.rule_source}</code>
                    </p>
                    {actions}
                  </>
                )}
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

/** What a link to a request no longer pending finds: who decided it, when and why; or that there is no such request. */
function DeepLinkResult({ link }: { link: DeepLink }) {
  const a = link.found;
  if (!a) {
    return (
      <div className={`panel ${styles.linkResult}`} role="status" data-testid="deep-link-result">
        <strong>Request not found.</strong> No approval request <code>{link.id}</code> exists here: the link may be mistyped, or
        from another server.
      </div>
    );
  }
  const by = a.decided_by ? ` by ${a.decided_by}` : '';
  const verb = a.status === 'expired' ? 'Expired without a decision' : a.status === 'rejected' ? `Rejected${by}` : `Approved${by}`;
  const after = a.status === 'consumed' ? ' The call has run.' : a.status === 'approved' ? ' The call has not run yet.' : '';
  return (
    <div className={`panel ${styles.linkResult}`} role="status" data-testid="deep-link-result">
      <p className={styles.linkHead}>
        <strong>This request was already decided.</strong> {a.agent} → <code>{a.tool}</code>
      </p>
      <p>
        {verb}
        {a.decided_at ? (
          <>
            {' '}
            on <Time seconds={a.decided_at} />
          </>
        ) : null}
        {a.decision_reason ? <>, reason: “{a.decision_reason}”.</> : a.status === 'expired' ? '.' : ', no reason given.'}
        {after}
      </p>
      <p>
        <a href={`/approvals?tab=history&agent=${encodeURIComponent(a.agent)}&gate=${encodeURIComponent(a.gate)}`}>See it in History</a>
      </p>
    </div>
  );
}
