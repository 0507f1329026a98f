'use client';

import { useCallback } from 'react';
import type { EventPage, SecurityEventJson } from '@/lib/http/responses';
import type { Seed } from '@/app/_lib/use-api-resource';
import kit from '@/app/(console)/_explorer/explorer.module.css';
import { ExplorerHead, ExplorerPage, IgnoredNotice } from '@/app/(console)/_explorer/explorer-head';
import { FiltersDisclosure } from '@/app/(console)/_explorer/filters';
import { count, describeWindow } from '@/app/(console)/_explorer/format';
import { ResultsSection, ResultsSort } from '@/app/(console)/_explorer/results-section';
import { inPlaceOfRows } from '@/app/(console)/_explorer/state-box';
import { isWindowed } from '@/app/(console)/_explorer/time-window';
import { listWords } from '@/app/(console)/_explorer/url-params';
import { useNarrow } from '@/app/(console)/_explorer/use-narrow';
import { useOpenRow } from '@/app/(console)/_explorer/use-open-row';
import { useUrlState } from '@/app/(console)/_explorer/use-url-state';
import styles from '@/app/(console)/audit/audit.module.css';
import type { Integrity } from './integrity';
import { EventPanel } from './event-panel';
import { EventsTable } from './events-table';
import { AuditFilterBar } from './filter-bar';
import { IntegrityBadge } from './integrity-badge';
import { useAuditEvents } from './use-audit-events';
import { DECISIONS, excludedType, hasFilters, parseAuditState, serializeAuditState, withFilters, type AuditState } from './url-state';
import { OUTCOME_TEXT, typeFilterWords } from './vocabulary';

interface Props {
  /** the first page of the URL the page was opened with, as the server read it */
  initial: Seed<EventPage>;
  /** the event a link opened, when it is not on the first page */
  opened: SecurityEventJson | undefined;
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

/**
 * The audit page: the integrity badge, the filters, and the security events newest first. The explorers' data model
 * (../../_explorer/use-url-state.ts): the server renders the first page of the URL; every filter is a new history
 * entry whose events the browser reads from the API; "Older events" continues with the cursor; the open event is a
 * URL parameter too, changed in place, so a link opens it again.
 */
export function AuditExplorer({ initial, opened, integrity }: Props) {
  const { state, ignored, stateRef, go, moving } = useUrlState(parseAuditState, serializeAuditState);
  const events = useAuditEvents(state, initial, moving);
  const { rows, first } = events;
  const setFilters = useCallback((change: Partial<AuditState>) => go(withFilters(stateRef.current, change)), [go, stateRef]);
  const clearAll = useCallback(() => go({ window: 'all' }), [go]);
  // Opening, closing and stepping change the URL in place: the rows stay, a reload or a shared link reopens the event.
  const show = useCallback((event: number | undefined) => go({ ...stateRef.current, event }, 'replace'), [go, stateRef]);
  const panel = useOpenRow(state.event, rows, show);
  const narrow = useNarrow();

  const words = filterWords(state);
  const openEvent = rows.find((r) => r.id === state.event) ?? (opened?.id === state.event ? opened : undefined);
  const when = describeWindow(state);
  const results = inPlaceOfRows({
    what: 'security events',
    read: first,
    rows: rows.length,
    window: state,
    words,
    emptyText: 'Sign-ins, user and token changes, approvals, flag and configuration changes, and reads of the audit trail appear here as they happen.',
    sentence: words.length ? `Nothing with ${listWords(words)} was recorded ${when}.` : `Nothing was recorded ${when}.`,
    onClear: clearAll,
    onAllTime: () => setFilters({ window: 'all', from: undefined, to: undefined }),
  }) ?? <EventsTable rows={rows} busy={first.stale} openRow={panel} />;

  const activeFilters = Number(isWindowed(state)) + words.length;
  const badge = <IntegrityBadge initial={integrity} />;
  const more = events.nextCursor !== null;

  return (
    <ExplorerPage resultsId="event-results">
      <ExplorerHead
        title="Audit"
        lead="Security events — sign-ins, users and tokens, approvals, flags and configuration, reads of the trail — and the integrity of the hash-chained audit trail."
      />
      {/* First on every width: whether the trail is intact is what an auditor reads before any event. */}
      {badge}
      <IgnoredNotice ignored={ignored} />
      <FiltersDisclosure narrow={narrow} active={activeFilters}>
        <AuditFilterBar state={state} onChange={setFilters} onClear={clearAll} />
      </FiltersDisclosure>
      {excludedType(state) ? (
        <p className={`muted ${styles.decisionsNote}`} data-testid="decisions-apart">
          Allowed and asked decisions logged by <code>decision_log_all</code> are kept apart from these security events.{' '}
          <button type="button" className="button button-quiet" onClick={() => setFilters({ type: DECISIONS })}>
            Show logged decisions
          </button>
        </p>
      ) : null}
      <ResultsSection
        id="event-results"
        titleId="events-title"
        title={
          rows.length > 0 ? (
            <>
              {rows.length === 1 ? '1 event' : `${count(rows.length)} events`} <ResultsSort>· newest first{more ? ' · older ones below' : ''}</ResultsSort>
            </>
          ) : (
            'Security events'
          )
        }
        footNote={rows.length > 0 ? 'Times are in your local zone; hover a time for UTC. Open an event for its detail, decision and row hash.' : undefined}
      >
        {results}
        {rows.length > 0 ? (
          <div className={styles.more}>
            {more ? (
              <button type="button" className="button" onClick={events.loadOlder} disabled={events.olderBusy || first.stale}>
                {events.olderBusy ? 'Loading older events…' : 'Older events'}
              </button>
            ) : (
              <p className="muted">{hasFilters(state) ? 'These are all the events that match.' : 'This is the beginning of the trail.'}</p>
            )}
            {events.olderError ? (
              <p className={kit.inlineError} role="alert">
                The older events could not be loaded: {events.olderError}
              </p>
            ) : null}
          </div>
        ) : null}
      </ResultsSection>
      {state.event !== undefined ? (
        <EventPanel id={state.event} event={openEvent} openRow={panel} onDecision={(decision) => setFilters({ decision })} />
      ) : null}
    </ExplorerPage>
  );
}
