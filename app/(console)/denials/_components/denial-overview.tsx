import type { DenialHistogram, DenialSummary } from '@/lib/http/responses';
import type { Resource } from '@/app/_lib/use-api-resource';
import { ErrorState } from '@/app/(console)/_explorer/state-box';
import { HistogramChart } from './histogram-chart';
import { SummaryCards } from './summary-cards';
import type { ExplorerState } from './url-state';

interface Props {
  state: ExplorerState;
  summary: Resource<DenialSummary>;
  histogram: Resource<DenialHistogram>;
  onFilter: (change: Partial<ExplorerState>) => void;
}

/** The counts and the chart of the view, each with its own error state; each click on them narrows the filter. */
export function DenialOverview({ state, summary, histogram, onFilter }: Props) {
  return (
    <>
      {summary.error ? (
        <ErrorState title="The summary could not be loaded" error={summary.error} onRetry={summary.reload} />
      ) : (
        <SummaryCards state={state} summary={summary.data} stale={summary.stale} onFilter={onFilter} />
      )}
      {histogram.error ? (
        <ErrorState title="The chart could not be loaded" error={histogram.error} onRetry={histogram.reload} />
      ) : (
        <HistogramChart
          histogram={histogram.data}
          stale={histogram.stale}
          onNarrow={(from, to) => onFilter({ from, to, window: 'all' })}
          onFamily={(family) => onFilter({ ruleSource: family })}
        />
      )}
    </>
  );
}
