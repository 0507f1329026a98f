'use client';

import type { VisibilityState } from '@tanstack/react-table';
import type { DenialPage } from '@/lib/http/responses';
import type { Resource } from '@/app/_lib/use-api-resource';
import { describeWindow } from '@/app/(console)/_explorer/format';
import { inPlaceOfRows, StateBox } from '@/app/(console)/_explorer/state-box';
import { listWords } from '@/app/(console)/_explorer/url-params';
import type { OpenRow } from '@/app/(console)/_explorer/use-open-row';
import { DenialsTable } from './denials-table';
import type { ExplorerState, TableSort } from './url-state';

interface Props {
  state: ExplorerState;
  list: Resource<DenialPage>;
  visibility: VisibilityState;
  onVisibility: (v: VisibilityState) => void;
  onSort: (column: TableSort) => void;
  onFilter: (change: Partial<ExplorerState>) => void;
  onClear: () => void;
  onFirstPage: () => void;
  openRow: OpenRow;
}

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

/** The rows of the view, or what stands in their place: the error, the loading lines, or why there are none. */
export function DenialResults({ state, list, visibility, onVisibility, onSort, onFilter, onClear, onFirstPage, openRow }: Props) {
  const rows = list.data?.denials ?? [];
  if (!list.error && list.data && rows.length === 0 && state.cursor) {
    return (
      <StateBox title="No more denials on this page">
        <p>The rows this link pointed at are no longer in the view.</p>
        <button type="button" className="button" onClick={onFirstPage}>
          Go to the first page
        </button>
      </StateBox>
    );
  }
  const words = filterWords(state);
  const inPlace = inPlaceOfRows({
    what: 'denials',
    read: list,
    rows: rows.length,
    window: state,
    words,
    emptyText: 'When an agent or a person is refused, the refusal appears here, attributed to the rule that caused it.',
    sentence: words.length ? `Nothing was denied with ${listWords(words)} ${describeWindow(state)}.` : `Nothing was denied ${describeWindow(state)}.`,
    onClear,
    onAllTime: () => onFilter({ window: 'all', from: undefined, to: undefined }),
  });
  if (inPlace) return inPlace;
  return (
    <DenialsTable
      rows={rows}
      state={state}
      stale={list.stale}
      visibility={visibility}
      onVisibility={onVisibility}
      onSort={onSort}
      onRuleFilter={(ruleSource) => onFilter({ ruleSource })}
      openRow={openRow}
    />
  );
}
