'use client';

import { useEscapeToClose } from '@/app/_components/use-escape-to-close';
import { NoMatch } from '@/app/_components/no-match';
import { usePathname, useRouter, useSearchParams } from 'next/navigation';
import { useCallback, useEffect, useMemo, useRef, useState, useTransition } from 'react';
import denials from '@/app/(console)/denials/denials.module.css';
import { count, describeWindow } from '@/app/(console)/denials/_components/format';
import { DEFAULT_STATE } from '@/app/(console)/denials/_components/url-state';
import styles from '@/app/(console)/audit/audit.module.css';
import { eventPageSchema, getJson, type EventPage, type Integrity, type SecurityEvent } from './api';
import { EventPanel } from './event-panel';
import { EventsTable } from './events-table';
import { AuditFilterBar } from './filter-bar';
import { IntegrityBadge } from './integrity-badge';
import { FiltersDisclosure } from '@/app/(console)/denials/_components/filters-disclosure';
import { SkipToResults } from '@/app/(console)/denials/_components/skip-to-results';
import { useNarrow } from '@/app/(console)/denials/_components/use-narrow';
import { DECISIONS, excludedType, hasFilters, olderUrl, parseAuditState, serializeAuditState, viewKey, withFilters, type AuditState } from './url-state';
import { OUTCOME_TEXT, typeFilterWords } from './vocabulary';

interface Props {
  /** the filters of the first page, as the server read them from the URL */
  state: AuditState;
  ignored: string[];
  /** the first page, newest first */
  initial: EventPage;
  /** the event a link opened, when it is not on the first page */
  opened: SecurityEvent | undefined;
  integrity: Integrity | undefined;
}

function filterWords(s: AuditState): string[] {
  const out: string[] = [];
  if (s.type) out.push(typeFilterWords(s.type));
  if (s.actor) out.push(`actor ${s.actor}`);
  if (s.outcome) out.push(`outcome ${OUTCOME_TEXT[s.outcome].label.toLowerCase()}`);
  if (s.decision) out.push(`decision ${s.decision}`);
  return out;
}

const listWords = (words: string[]) => (words.length < 2 ? (words[0] ?? '') : `${words.slice(0, -1).join(', ')} and ${words[words.length - 1]}`);

/**
 * The audit page: the integrity badge, the filters, and the security events newest first. Filters are URL changes
 * the server answers (its first page); "Older events" continues with the cursor here; the open event is a URL
 * parameter too, changed in place (no server round trip), so a link opens it again.
 */
export function AuditExplorer({ state, ignored, initial, opened, integrity }: Props) {
  const router = useRouter();
  const pathname = usePathname();
  const searchParams = useSearchParams();
  const [pending, startTransition] = useTransition();
  const openId = useMemo(() => parseAuditState(new URLSearchParams(searchParams.toString())).state.event, [searchParams]);

  const stateRef = useRef(state);
  stateRef.current = state;
  // The filters the person chose last, while the server answers: the fields show them (a controlled select would
  // snap back to the old value), and the next change builds on them, not on the view still on screen. Before, a
  // second change made while the first was loading started from the old view and dropped the first.
  const [chosen, setChosen] = useState<AuditState>();
  const chosenRef = useRef<AuditState | undefined>(undefined);
  useEffect(() => {
    // The last navigation finished (or back/forward moved the view): the URL is the truth again.
    if (!pending) {
      chosenRef.current = undefined;
      setChosen(undefined);
    }
  }, [pending, state]);
  const go = useCallback(
    (next: AuditState) => {
      chosenRef.current = next;
      setChosen(next);
      startTransition(() => router.push(`${pathname}${serializeAuditState(next)}`, { scroll: false }));
    },
    [router, pathname],
  );
  const setFilters = useCallback((change: Partial<AuditState>) => go(withFilters(chosenRef.current ?? stateRef.current, change)), [go]);
  const clearAll = useCallback(() => go({ window: 'all' }), [go]);

  // Older pages of this view, fetched with the cursor and appended; a new view starts again from the server's page.
  const key = viewKey(state);
  const [older, setOlder] = useState<{ key: string; rows: SecurityEvent[]; cursor: number | null }>();
  const [olderBusy, setOlderBusy] = useState(false);
  const [olderError, setOlderError] = useState<string>();
  const extra = older?.key === key ? older : undefined;
  const rows = useMemo(() => [...initial.events, ...(extra?.rows ?? [])], [initial.events, extra]);
  const nextCursor = extra ? extra.cursor : initial.next_cursor;
  useEffect(() => setOlderError(undefined), [key]);

  const loadOlder = async () => {
    if (nextCursor === null) return;
    setOlderBusy(true);
    setOlderError(undefined);
    try {
      const page = await getJson(olderUrl(state, nextCursor), eventPageSchema);
      setOlder((o) => ({ key, rows: [...(o?.key === key ? o.rows : []), ...page.events], cursor: page.next_cursor }));
    } catch (e) {
      setOlderError((e as Error).message);
    } finally {
      setOlderBusy(false);
    }
  };

  // Opening and closing an event changes the URL in place: the rows stay, a reload or a shared link reopens it.
  const [focusRequest, setFocusRequest] = useState<{ id: number; n: number }>();
  const setOpen = useCallback(
    (id: number | undefined) => {
      const params = new URLSearchParams(window.location.search);
      if (id === undefined) params.delete('event');
      else params.set('event', String(id));
      const next = parseAuditState(params).state;
      window.history.replaceState(null, '', `${window.location.pathname}${serializeAuditState(next)}`);
    },
    [],
  );
  const close = useCallback(() => {
    const id = openId;
    setOpen(undefined);
    if (id !== undefined) setFocusRequest({ id, n: Date.now() });
  }, [openId, setOpen]);
  useEscapeToClose(openId !== undefined, close);

  const ids = rows.map((r) => r.id);
  const openIndex = openId === undefined ? -1 : ids.indexOf(openId);
  const openEvent = openIndex >= 0 ? rows[openIndex] : opened?.id === openId ? opened : undefined;
  const step = (delta: 1 | -1) => {
    const next = ids[openIndex + delta];
    if (next !== undefined) setOpen(next);
  };

  const words = filterWords(state);
  const windowed = state.window !== 'all' || state.from !== undefined || state.to !== undefined;
  const when = describeWindow({ ...DEFAULT_STATE, window: state.window, from: state.from, to: state.to });

  let results: React.ReactNode;
  if (rows.length === 0 && !hasFilters(state)) {
    results = (
      <div className={denials.stateBox} role="status" data-testid="empty-state">
        <h3>No security events have been recorded yet</h3>
        <p>Sign-ins, user and token changes, approvals, flag and configuration changes, and reads of the audit trail appear here as they happen.</p>
      </div>
    );
  } else if (rows.length === 0) {
    results = (
      <NoMatch
        title="No security events match these filters"
        sentence={words.length ? `Nothing with ${listWords(words)} was recorded ${when}.` : `Nothing was recorded ${when}.`}
        offerAllTime={windowed && words.length > 0}
        onClear={clearAll}
        onAllTime={() => setFilters({ window: 'all', from: undefined, to: undefined })}
      />
    );
  } else {
    results = <EventsTable rows={rows} busy={pending} onOpen={setOpen} openId={openId} focusRequest={focusRequest} />;
  }

  const narrow = useNarrow();
  const shown = chosen ?? state;
  const activeFilters = [shown.window !== 'all' || shown.from !== undefined || shown.to !== undefined, shown.type, shown.actor, shown.outcome, shown.decision].filter(Boolean).length;
  const badge = <IntegrityBadge initial={integrity} />;

  return (
    <div className={denials.page}>
      <SkipToResults results="event-results" />
      <header className={denials.head}>
        <div>
          <h1>Audit</h1>
          <p className="muted">Security events — sign-ins, users and tokens, approvals, flags and configuration, reads of the trail — and the integrity of the hash-chained audit trail.</p>
        </div>
      </header>

      {narrow ? null : badge}

      {ignored.length ? (
        <p className={denials.notice} role="status">
          Part of this link was not understood and was left out: {ignored.join(', ')}.
        </p>
      ) : null}

      <FiltersDisclosure narrow={narrow} active={activeFilters}>
        <AuditFilterBar state={shown} onChange={setFilters} onClear={clearAll} />
      </FiltersDisclosure>

      {excludedType(state) ? (
        <p className={`muted ${styles.decisionsNote}`} data-testid="decisions-apart">
          Allowed and asked decisions logged by <code>decision_log_all</code> are kept apart from these security events.{' '}
          <button type="button" className="button button-quiet" onClick={() => setFilters({ type: DECISIONS })}>
            Show logged decisions
          </button>
        </p>
      ) : null}

      <section className={denials.results} aria-labelledby="events-title" id="event-results">
        <div className={denials.resultsHead}>
          <h2 id="events-title" className={denials.resultsTitle} aria-live="polite">
            {rows.length > 0 ? (
              <>
                {rows.length === 1 ? '1 event' : `${count(rows.length)} events`} <span className={denials.resultsSort}>· newest first{nextCursor !== null ? ' · older ones below' : ''}</span>
              </>
            ) : (
              'Security events'
            )}
          </h2>
        </div>
        {results}
        {rows.length > 0 ? (
          <div className={styles.more}>
            {nextCursor !== null ? (
              <button type="button" className="button" onClick={loadOlder} disabled={olderBusy || pending}>
                {olderBusy ? 'Loading older events…' : 'Older events'}
              </button>
            ) : (
              <p className="muted">{hasFilters(state) ? 'These are all the events that match.' : 'This is the beginning of the trail.'}</p>
            )}
            {olderError ? (
              <p className={denials.inlineError} role="alert">
                The older events could not be loaded: {olderError}
              </p>
            ) : null}
          </div>
        ) : null}
        {rows.length > 0 ? <p className={denials.footNote}>Times are in your local zone; hover a time for UTC. Open an event for its detail, decision and row hash.</p> : null}
      </section>

      {narrow ? badge : null}

      {openId !== undefined ? (
        <EventPanel
          id={openId}
          event={openEvent}
          onClose={close}
          onStep={openIndex >= 0 ? step : undefined}
          canStep={{ prev: openIndex > 0, next: openIndex >= 0 && openIndex < ids.length - 1 }}
          onDecision={(decision) => setFilters({ decision })}
        />
      ) : null}
    </div>
  );
}
