'use client';

import { useEscapeToClose } from '@/app/_components/use-escape-to-close';
import { NoMatch } from '@/app/_components/no-match';
import { useSearchParams } from 'next/navigation';
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { z } from 'zod';
import styles from '@/app/(console)/denials/denials.module.css';
import { detailSchema, histogramSchema, pageSchema, summarySchema, useApi, type ApiError } from './api';
import { DenialsTable, useColumnVisibility } from './denials-table';
import { DetailPanel } from './detail-panel';
import { FilterBar, type Suggestions } from './filter-bar';
import { count, describeWindow } from './format';
import { HistogramChart } from './histogram-chart';
import { FiltersDisclosure } from './filters-disclosure';
import { SkipToResults } from './skip-to-results';
import { SummaryCards } from './summary-cards';
import { useNarrow } from './use-narrow';
import {
  clearedFilters,
  exactLinkState,
  exportUrl,
  reportUrl,
  filterParams,
  loadedState,
  hasFilters,
  histogramUrl,
  isCustomRange,
  listUrl,
  PAGE_SIZES,
  parseState,
  pinWindow,
  serializeState,
  summaryUrl,
  withFilters,
  WINDOW_LABELS,
  type ExplorerState,
  type LoadedWindow,
  type TableSort,
} from './url-state';

const TAIL_MS = 5_000;
const tailSchema = z.object({ count: z.number(), newest_id: z.number().nullable(), now: z.number().optional() });
/** The page's own polls are marked, so the server does not log them as someone's decisions (README, decision logging). */
const BACKGROUND = { 'x-swarm-background': '1' };

/** The view without its position: what a remembered cursor belongs to. */
const viewKey = (s: ExplorerState) => serializeState({ ...s, cursor: undefined, page: 1, denial: undefined });

/** The attribute filters in words, for the empty state: "agent trainer", "text “m-42”". */
function filterWords(s: ExplorerState): string[] {
  const out: string[] = [];
  if (s.agent) out.push(`agent ${s.agent}`);
  if (s.tool) out.push(`tool ${s.tool}`);
  if (s.ruleSource) out.push(s.ruleSource.includes(':') ? `rule ${s.ruleSource}` : `the ${s.ruleSource} family`);
  if (s.role) out.push(`role ${s.role}`);
  if (s.q) out.push(`the text “${s.q}”`);
  return out;
}

const listWords = (words: string[]) => (words.length < 2 ? (words[0] ?? '') : `${words.slice(0, -1).join(', ')} and ${words[words.length - 1]}`);

function sortText(s: ExplorerState): string {
  if (!s.sort) return 'newest first';
  const names: Record<TableSort, string> = { timestamp: 'time', agent_name: 'agent', tool_name: 'tool', rule_source: 'rule source' };
  if (s.sort === 'timestamp') return s.order === 'desc' ? 'newest first' : 'oldest first';
  return `by ${names[s.sort]}, ${s.order === 'desc' ? 'Z to A' : 'A to Z'}`;
}

function ErrorState({ title, error, onRetry }: { title: string; error: ApiError; onRetry: () => void }) {
  return (
    <div className={styles.stateBox} role="alert">
      <h3>{title}</h3>
      <p>{error.message}</p>
      {error.status === 401 ? (
        <p>
          Your session has ended. <a href={`/login?next=${encodeURIComponent(window.location.pathname + window.location.search)}`}>Sign in again</a>.
        </p>
      ) : (
        <button type="button" className="button" onClick={onRetry}>
          Try again
        </button>
      )}
    </div>
  );
}

export function DenialExplorer({ suggestions }: { suggestions: Suggestions }) {
  const searchParams = useSearchParams();
  const { state, ignored } = useMemo(() => parseState(new URLSearchParams(searchParams.toString())), [searchParams]);

  /** Every change of view is a URL change: push for a new view (back returns), replace for moves within one. */
  const go = useCallback((next: ExplorerState, mode: 'push' | 'replace' = 'push') => {
    const url = `${window.location.pathname}${serializeState(next)}`;
    if (mode === 'push') window.history.pushState(null, '', url);
    else window.history.replaceState(null, '', url);
  }, []);
  const stateRef = useRef(state);
  stateRef.current = state;
  const setFilters = useCallback((change: Partial<ExplorerState>) => go(withFilters(stateRef.current, change)), [go]);
  const clearAll = useCallback(() => go(clearedFilters(stateRef.current)), [go]);

  // The window the view was loaded with: the newest matching id and the server's time when the filter was applied
  // (or the until_id of an exact link). Everything the view reads, exports or links takes this fixed window.
  const filterKey = filterParams({ ...state, untilId: undefined }).toString();
  const [tailEpoch, setTailEpoch] = useState(0);
  const [fetchedWindow, setFetchedWindow] = useState<{ key: string; epoch: number; loaded: LoadedWindow }>();
  const loaded: LoadedWindow | undefined =
    state.untilId !== undefined
      ? { untilId: state.untilId }
      : fetchedWindow && fetchedWindow.key === filterKey && fetchedWindow.epoch === tailEpoch
        ? fetchedWindow.loaded
        : undefined;
  const view = loaded ? loadedState(state, loaded) : undefined;

  const list = useApi(view ? listUrl(view) : null, pageSchema);
  const summary = useApi(view ? summaryUrl(view) : null, summarySchema);
  const histogram = useApi(view ? histogramUrl(view) : null, histogramSchema);
  const detail = useApi(state.denial !== undefined ? `/api/v1/permissions/denials/${state.denial}` : null, detailSchema);
  const [visibility, setVisibility] = useColumnVisibility();
  const [focusRequest, setFocusRequest] = useState<{ id: number; n: number }>();

  // Cursors of the pages seen in this view, so "Previous" can go back without the server counting.
  const cursors = useRef(new Map<string, string | undefined>());
  const key = viewKey(state);
  cursors.current.set(`${key}#${state.page}`, state.cursor);
  const prevKnown = state.page === 2 || cursors.current.has(`${key}#${state.page - 1}`);

  const rows = useMemo(() => list.data?.denials ?? [], [list.data]);
  const rowIds = rows.map((r) => r.id);

  const open = useCallback((id: number) => go({ ...stateRef.current, denial: id }), [go]);
  const close = useCallback(() => {
    const id = stateRef.current.denial;
    go({ ...stateRef.current, denial: undefined }, 'replace');
    if (id !== undefined) setFocusRequest({ id, n: Date.now() });
  }, [go]);
  const step = (delta: 1 | -1) => {
    const i = state.denial === undefined ? -1 : rowIds.indexOf(state.denial);
    const next = rowIds[i + delta];
    if (next !== undefined) go({ ...state, denial: next }, 'replace');
  };

  useEscapeToClose(state.denial !== undefined, close);

  // The live tail: new denials of this filter are announced while the auditor reads ("14 new denials"), never moved
  // under their eyes. The baseline is the newest matching id when the view loaded; the page asks every few seconds
  // how many matching denials came after it (counts only), and shows them when the auditor says so.
  const urlUntil = state.untilId;
  const [tail, setTail] = useState<{ key: string; baseline?: number; count: number; latest?: number }>({ key: filterKey, count: 0 });
  useEffect(() => {
    let cancelled = false;
    let baseline: number | undefined = urlUntil;
    if (baseline !== undefined) setTail({ key: filterKey, baseline, count: 0, latest: baseline });
    const poll = async () => {
      try {
        if (baseline === undefined) {
          const r = await fetch(`/api/v1/permissions/denials/tail?${filterKey}${filterKey ? '&' : ''}after=0&newest=1`, { cache: 'no-store', headers: BACKGROUND });
          if (!r.ok) {
            // The view cannot fix its window: the list's own read will say why (a 401 says to sign in again).
            if (!cancelled) setFetchedWindow({ key: filterKey, epoch: tailEpoch, loaded: { untilId: Number.MAX_SAFE_INTEGER } });
            return;
          }
          const body = tailSchema.safeParse(await r.json());
          if (cancelled || !body.success) return;
          baseline = body.data.newest_id ?? 0;
          setFetchedWindow({ key: filterKey, epoch: tailEpoch, loaded: { untilId: baseline, at: body.data.now ?? Date.now() / 1000 } });
          setTail({ key: filterKey, baseline, count: 0, latest: baseline });
          return;
        }
        const r = await fetch(`/api/v1/permissions/denials/tail?${filterKey}${filterKey ? '&' : ''}after=${baseline}`, { cache: 'no-store', headers: BACKGROUND });
        if (!r.ok) return;
        const body = tailSchema.safeParse(await r.json());
        if (cancelled || !body.success) return;
        setTail((t) => (t.key === filterKey && t.baseline === baseline ? { ...t, count: body.data.count, latest: body.data.newest_id ?? t.latest } : t));
      } catch {
        // A missed poll is not worth a message; the next one will tell.
      }
    };
    void poll();
    const timer = window.setInterval(poll, TAIL_MS);
    return () => {
      cancelled = true;
      window.clearInterval(timer);
    };
  }, [filterKey, tailEpoch, urlUntil]);
  const newCount = tail.key === filterKey ? tail.count : 0;
  const showNew = () => {
    setTailEpoch((n) => n + 1);
    setTail({ key: filterKey, count: 0 });
    // A new window is loaded (a new baseline and load time); an exact link's until_id is let go.
    if (stateRef.current.cursor || stateRef.current.untilId !== undefined) go({ ...stateRef.current, cursor: undefined, page: 1, untilId: undefined });
  };

  // A link that shows exactly this window to whoever opens it, whenever: a relative window becomes from/to.
  const [copied, setCopied] = useState<string | undefined>();
  const viewRef = useRef(view);
  viewRef.current = view;
  const copyExactLink = async () => {
    if (!viewRef.current) return;
    const url = `${window.location.origin}${window.location.pathname}${serializeState(exactLinkState(viewRef.current))}`;
    try {
      await navigator.clipboard.writeText(url);
      setCopied(url);
    } catch {
      setCopied(url);
    }
  };

  const total = summary.data && !summary.stale ? summary.data.total : undefined;
  const firstRow = (state.page - 1) * state.size + 1;
  const words = filterWords(state);
  const windowed = state.window !== 'all' || isCustomRange(state);

  let results: React.ReactNode;
  if (list.error) {
    results = <ErrorState title="The denials could not be loaded" error={list.error} onRetry={list.reload} />;
  } else if (!list.data) {
    results = (
      <div className={styles.tableWrap} aria-busy="true" aria-label="Loading denials">
        {Array.from({ length: 8 }, (_, i) => (
          <div key={i} className={styles.skeletonRow}>
            <span className={styles.skeletonLine} />
          </div>
        ))}
        <p className={styles.srOnly} role="status">
          Loading denials…
        </p>
      </div>
    );
  } else if (rows.length === 0 && state.cursor) {
    results = (
      <div className={styles.stateBox} role="status">
        <h3>No more denials on this page</h3>
        <p>The rows this link pointed at are no longer in the view.</p>
        <button type="button" className="button" onClick={() => go({ ...state, cursor: undefined, page: 1 })}>
          Go to the first page
        </button>
      </div>
    );
  } else if (rows.length === 0 && !hasFilters(state)) {
    results = (
      <div className={styles.stateBox} role="status" data-testid="empty-state">
        <h3>No denials have been recorded yet</h3>
        <p>When an agent or a person is refused, the refusal appears here, attributed to the rule that caused it.</p>
      </div>
    );
  } else if (rows.length === 0) {
    results = (
      <NoMatch
        title="No denials match these filters"
        sentence={words.length ? `Nothing was denied with ${listWords(words)} ${describeWindow(state)}.` : `Nothing was denied ${describeWindow(state)}.`}
        offerAllTime={windowed && words.length > 0}
        onClear={clearAll}
        onAllTime={() => setFilters({ window: 'all', from: undefined, to: undefined })}
      />
    );
  } else {
    results = (
      <DenialsTable
        rows={rows}
        state={state}
        stale={list.stale}
        visibility={visibility}
        onVisibility={setVisibility}
        onSort={(column) => {
          const s = stateRef.current;
          let next: Pick<ExplorerState, 'sort' | 'order'>;
          if (column === 'timestamp') next = s.sort === 'timestamp' && s.order === 'asc' ? {} : { sort: 'timestamp', order: 'asc' };
          else if (s.sort !== column) next = { sort: column, order: 'asc' };
          else next = s.order === 'asc' ? { sort: column, order: 'desc' } : {};
          go({ ...s, sort: next.sort, order: next.order, cursor: undefined, page: 1 });
        }}
        onOpen={open}
        onRuleFilter={(ruleSource) => setFilters({ ruleSource })}
        openId={state.denial}
        focusRequest={focusRequest}
      />
    );
  }

  const nextCursor = list.data && !list.stale ? list.data.next_cursor : null;
  const narrow = useNarrow();
  // The counts and the chart: above the table on a wide screen, below it on a phone (the rows come first there).
  const overview = (
    <>
      {summary.error ? (
        <ErrorState title="The summary could not be loaded" error={summary.error} onRetry={summary.reload} />
      ) : (
        <SummaryCards state={state} summary={summary.data} stale={summary.stale} onFilter={setFilters} />
      )}

      {histogram.error ? (
        <ErrorState title="The chart could not be loaded" error={histogram.error} onRetry={histogram.reload} />
      ) : (
        <HistogramChart
          histogram={histogram.data}
          stale={histogram.stale}
          onNarrow={(from, to) => setFilters({ from, to, window: 'all' })}
          onFamily={(family) => setFilters({ ruleSource: family })}
        />
      )}

    </>
  );
  const activeFilters = [state.window !== 'all' || isCustomRange(state), state.agent, state.tool, state.ruleSource, state.role, state.q].filter(Boolean).length;

  return (
    <div className={styles.page}>
      <SkipToResults results="denial-results" />
      <header className={styles.head}>
        <div>
          <h1>Denials</h1>
          <p className="muted">Every blocked tool call and request, attributed to the rule that caused it. Filter, open one to see why, export what you see.</p>
        </div>
        <div className={styles.exports} role="group" aria-label="Share and export the current filter">
          <button
            type="button"
            className="button"
            onClick={copyExactLink}
            disabled={!view}
            data-testid="copy-exact-link"
            title="A link to exactly the rows of this view: its window as it was loaded and its newest denial; denials recorded later are not in it"
          >
            Copy link for this exact window
          </button>
          {view ? (
            <>
              <a className="button" href={exportUrl(view, 'csv')} download data-testid="export-csv">
                Export CSV
              </a>
              <a className="button" href={exportUrl(view, 'ndjson')} download data-testid="export-json">
                Export JSON lines
              </a>
              {reportUrl(view) ? (
                <a
                  className="button"
                  href={reportUrl(view)}
                  download
                  data-testid="report-for-window"
                  title="The audit report (PDF) of this view's period, from its start to its end as loaded: every denial of the period, not only the filtered ones"
                >
                  Audit report for this period
                </a>
              ) : null}
            </>
          ) : (
            // Until the view's window is fixed there is nothing exact to export yet: the same buttons, unavailable.
            <>
              <button type="button" className="button" disabled>
                Export CSV
              </button>
              <button type="button" className="button" disabled>
                Export JSON lines
              </button>
            </>
          )}
        </div>
      </header>

      {copied ? (
        <p className={styles.notice} role="status" data-testid="copied-link">
          Link copied for the window {describeWindow(view ?? pinWindow(state))}
          {view?.untilId !== undefined ? `, up to denial #${view.untilId}` : ''}: <code className={styles.copiedUrl}>{copied}</code>{' '}
          <button type="button" className="button button-quiet" onClick={() => setCopied(undefined)}>
            Dismiss
          </button>
        </p>
      ) : null}

      {ignored.length ? (
        <p className={styles.notice} role="status">
          Part of this link was not understood and was left out: {ignored.join(', ')}.
        </p>
      ) : null}

      <FiltersDisclosure narrow={narrow} active={activeFilters}>
        <FilterBar key="filters" state={state} suggestions={suggestions} onChange={setFilters} onClear={clearAll} />
      </FiltersDisclosure>

      <div className={styles.tail} role="status" aria-live="polite" data-testid="live-tail">
        {newCount > 0 ? (
          <>
            <span>
              {count(newCount)} new {newCount === 1 ? 'denial' : 'denials'} since this view loaded.
            </span>{' '}
            <button type="button" className="button button-primary" onClick={showNew}>
              Show {newCount === 1 ? 'it' : 'them'}
            </button>
          </>
        ) : null}
      </div>

      {narrow ? null : overview}
      <section className={styles.results} aria-labelledby="results-title" id="denial-results">
        <div className={styles.resultsHead}>
          <h2 id="results-title" className={styles.resultsTitle} aria-live="polite">
            {rows.length > 0 ? (
              <>
                {count(firstRow)}–{count(firstRow + rows.length - 1)}
                {total !== undefined ? ` of ${count(total)}` : ''} <span className={styles.resultsSort}>· {sortText(state)}</span>
              </>
            ) : (
              'Denials'
            )}
          </h2>
          {list.data && !list.error && (rows.length > 0 || state.page > 1) ? (
            <nav className={styles.pager} aria-label="Pages">
              <button type="button" className="button button-quiet" disabled={state.page <= 1} onClick={() => go({ ...state, cursor: undefined, page: 1 })}>
                « First
              </button>
              <button
                type="button"
                className="button button-quiet"
                disabled={state.page <= 1 || !prevKnown}
                title={state.page > 1 && !prevKnown ? 'This page was opened from a link: go to the first page instead' : undefined}
                onClick={() => go({ ...state, cursor: state.page === 2 ? undefined : cursors.current.get(`${key}#${state.page - 1}`), page: state.page - 1, denial: undefined })}
              >
                ‹ Previous
              </button>
              <span className={styles.pageNo}>Page {count(state.page)}</span>
              <button
                type="button"
                className="button button-quiet"
                disabled={!nextCursor}
                onClick={() => nextCursor && go({ ...state, cursor: nextCursor, page: state.page + 1, denial: undefined })}
              >
                Next ›
              </button>
              <label className={styles.pageSize}>
                <span>Rows</span>
                <select value={state.size} onChange={(e) => go({ ...state, size: Number(e.target.value), cursor: undefined, page: 1 })}>
                  {PAGE_SIZES.map((s) => (
                    <option key={s} value={s}>
                      {s}
                    </option>
                  ))}
                </select>
              </label>
            </nav>
          ) : null}
        </div>
        {results}
        {list.data && rows.length > 0 ? (
          <p className={styles.footNote}>
            Times are in your local zone; hover a time for UTC. This view, its exports and its exact link hold the denials that matched when it was loaded
            {view?.untilId !== undefined ? ` (up to #${view.untilId})` : ''}, newest first; newer ones are announced above, never mixed in.
          </p>
        ) : null}
      </section>

      {narrow ? overview : null}

      {state.denial !== undefined ? (
        <DetailPanel
          id={state.denial}
          detail={detail.data}
          error={detail.error}
          loading={detail.loading}
          onClose={close}
          onFilter={setFilters}
          onStep={rowIds.includes(state.denial) ? step : undefined}
          canStep={{ prev: rowIds.indexOf(state.denial) > 0, next: rowIds.indexOf(state.denial) < rowIds.length - 1 }}
          onRetry={detail.reload}
        />
      ) : null}
    </div>
  );
}
