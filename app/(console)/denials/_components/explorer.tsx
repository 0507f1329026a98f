'use client';

import { useCallback } from 'react';
import { denialDetailSchema, denialHistogramSchema, denialPageSchema, denialSummarySchema } from '@/lib/http/responses';
import { staleWhile, useApiResource } from '@/app/_lib/use-api-resource';
import { ExplorerHead, ExplorerPage, IgnoredNotice } from '@/app/(console)/_explorer/explorer-head';
import { FiltersDisclosure } from '@/app/(console)/_explorer/filters';
import { count, describeWindow } from '@/app/(console)/_explorer/format';
import { ResultsSection, ResultsSort } from '@/app/(console)/_explorer/results-section';
import { ErrorState, inPlaceOfRows, StateBox } from '@/app/(console)/_explorer/state-box';
import { isWindowed } from '@/app/(console)/_explorer/time-window';
import { listWords } from '@/app/(console)/_explorer/url-params';
import { useNarrow } from '@/app/(console)/_explorer/use-narrow';
import { useOpenRow, type RowMove } from '@/app/(console)/_explorer/use-open-row';
import { useUrlState } from '@/app/(console)/_explorer/use-url-state';
import { CopiedLinkNotice } from './copied-link-notice';
import { DenialPanel } from './denial-panel';
import { DenialsTable } from './denials-table';
import { ExportActions } from './export-actions';
import { FilterBar } from './filter-bar';
import { HistogramChart } from './histogram-chart';
import { LiveTailNotice } from './live-tail-notice';
import { Pager } from './pager';
import { SummaryCards } from './summary-cards';
import { useColumnVisibility } from './use-column-visibility';
import { useCopyExactLink } from './use-copy-exact-link';
import { useLiveTail } from './use-live-tail';
import { usePageCursors } from './use-page-cursors';
import { clearedFilters, detailUrl, histogramUrl, listUrl, parseState, serializeState, summaryUrl, withFilters, type ExplorerState, type TableSort } from './url-state';

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

function sortText(s: ExplorerState): string {
  const names: Record<TableSort, string> = { timestamp: 'time', agent_name: 'agent', tool_name: 'tool', rule_source: 'rule source' };
  if (!s.sort) return 'newest first';
  if (s.sort === 'timestamp') return s.order === 'desc' ? 'newest first' : 'oldest first';
  return `by ${names[s.sort]}, ${s.order === 'desc' ? 'Z to A' : 'A to Z'}`;
}

/** The next sort when a column head is clicked: ascending, descending, then back to newest first. */
function nextSort(s: ExplorerState, column: TableSort): Pick<ExplorerState, 'sort' | 'order'> {
  if (column === 'timestamp') return s.sort === 'timestamp' && s.order === 'asc' ? {} : { sort: 'timestamp', order: 'asc' };
  if (s.sort !== column) return { sort: column, order: 'asc' };
  return s.order === 'asc' ? { sort: column, order: 'desc' } : {};
}

/**
 * The denial explorer. The explorers' data model (../../_explorer/use-url-state.ts): the URL is the view, each change
 * a history entry (push for a new view, replace for a move within one); the browser reads the view from the API, all
 * of it in the window fixed when the view was loaded (use-live-tail.ts), so the list, the counts, the chart, the
 * exports and the exact link hold the same rows.
 */
export function DenialExplorer() {
  const { state, ignored, stateRef, go, moving } = useUrlState(parseState, serializeState);
  const setFilters = useCallback((change: Partial<ExplorerState>) => go(withFilters(stateRef.current, change)), [go, stateRef]);
  const clearAll = useCallback(() => go(clearedFilters(stateRef.current)), [go, stateRef]);

  const tail = useLiveTail(state);
  const view = tail.view;
  // From the keystroke that leaves a view until the next one has rendered, what is on screen is the last view's.
  const list = staleWhile(moving, useApiResource(view ? listUrl(view) : null, denialPageSchema));
  const summary = staleWhile(moving, useApiResource(view ? summaryUrl(view) : null, denialSummarySchema));
  const histogram = staleWhile(moving, useApiResource(view ? histogramUrl(view) : null, denialHistogramSchema));
  const detail = useApiResource(state.denial !== undefined ? detailUrl(state.denial) : null, denialDetailSchema);
  const [visibility, setVisibility] = useColumnVisibility();
  const cursors = usePageCursors(state);
  const exact = useCopyExactLink(view);
  const narrow = useNarrow();

  const rows = list.data?.denials ?? [];
  // Opening a denial is a new history entry (back closes it); closing and stepping change the URL in place.
  const show = useCallback(
    (denial: number | undefined, move: RowMove) => go({ ...stateRef.current, denial }, move === 'open' ? 'push' : 'replace'),
    [go, stateRef],
  );
  const panel = useOpenRow(state.denial, rows, show);
  const showNew = () => {
    tail.renew();
    // A new window is loaded (a new baseline and load time); an exact link's until_id is let go.
    const s = stateRef.current;
    if (s.cursor || s.untilId !== undefined) go({ ...s, cursor: undefined, page: 1, untilId: undefined });
  };
  const toPage = (change: Partial<ExplorerState>) => go({ ...stateRef.current, ...change });

  const total = summary.data && !summary.stale ? summary.data.total : undefined;
  const firstRow = (state.page - 1) * state.size + 1;
  const nextCursor = list.data && !list.stale ? list.data.next_cursor : null;
  const words = filterWords(state);
  const activeFilters = Number(isWindowed(state)) + words.length;
  const when = describeWindow(state);
  // The rows of the view, or what stands in their place: a page a link pointed at that is gone, the error, the loading
  // lines, or why there are none.
  const results =
    !list.error && list.data && rows.length === 0 && state.cursor ? (
      <StateBox title="No more denials on this page">
        <p>The rows this link pointed at are no longer in the view.</p>
        <button type="button" className="button" onClick={() => toPage({ cursor: undefined, page: 1 })}>
          Go to the first page
        </button>
      </StateBox>
    ) : (
      (inPlaceOfRows({
        what: 'denials',
        read: list,
        rows: rows.length,
        window: state,
        words,
        emptyText: 'When an agent or a person is refused, the refusal appears here, attributed to the rule that caused it.',
        sentence: words.length ? `Nothing was denied with ${listWords(words)} ${when}.` : `Nothing was denied ${when}.`,
        onClear: clearAll,
        onAllTime: () => setFilters({ window: 'all', from: undefined, to: undefined }),
      }) ?? (
        <DenialsTable
          rows={rows}
          state={state}
          stale={list.stale}
          visibility={visibility}
          onVisibility={setVisibility}
          onSort={(column) => {
            const { sort, order } = nextSort(stateRef.current, column);
            toPage({ sort, order, cursor: undefined, page: 1 });
          }}
          onRuleFilter={(ruleSource) => setFilters({ ruleSource })}
          openRow={panel}
        />
      ))
    );
  // The counts and the chart of the view, each with its own error state; each click on them narrows the filter.
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

  return (
    <ExplorerPage resultsId="denial-results">
      <ExplorerHead title="Denials" lead="Every blocked tool call and request, attributed to the rule that caused it. Filter, open one to see why, export what you see.">
        <ExportActions view={view} onCopyLink={exact.copy} />
      </ExplorerHead>
      {exact.copied ? <CopiedLinkNotice url={exact.copied} view={view} state={state} onDismiss={exact.dismiss} /> : null}
      <IgnoredNotice ignored={ignored} />
      <FiltersDisclosure narrow={narrow} active={activeFilters}>
        <FilterBar key="filters" state={state} onChange={setFilters} onClear={clearAll} />
      </FiltersDisclosure>
      <LiveTailNotice newCount={tail.newCount} onShow={showNew} />
      {narrow ? null : overview}
      <ResultsSection
        id="denial-results"
        titleId="results-title"
        title={
          rows.length > 0 ? (
            <>
              {count(firstRow)}–{count(firstRow + rows.length - 1)}
              {total !== undefined ? ` of ${count(total)}` : ''} <ResultsSort>· {sortText(state)}</ResultsSort>
            </>
          ) : (
            'Denials'
          )
        }
        tools={
          list.data && !list.error && (rows.length > 0 || state.page > 1) ? (
            <Pager
              state={state}
              prevKnown={cursors.prevKnown}
              nextCursor={nextCursor}
              onFirst={() => toPage({ cursor: undefined, page: 1 })}
              onPrevious={() => toPage({ cursor: cursors.prevCursor(), page: state.page - 1, denial: undefined })}
              onNext={(cursor) => toPage({ cursor, page: state.page + 1, denial: undefined })}
              onSize={(size) => toPage({ size, cursor: undefined, page: 1 })}
            />
          ) : null
        }
        footNote={
          list.data && rows.length > 0
            ? `Times are in your local zone; hover a time for UTC. This view, its exports and its exact link hold the denials that matched when it was loaded${view?.untilId !== undefined ? ` (up to #${view.untilId})` : ''}, newest first; newer ones are announced above, never mixed in.`
            : undefined
        }
      >
        {results}
      </ResultsSection>
      {narrow ? overview : null}
      {state.denial !== undefined ? (
        <DenialPanel id={state.denial} detail={detail} openRow={panel} onFilter={setFilters} />
      ) : null}
    </ExplorerPage>
  );
}
