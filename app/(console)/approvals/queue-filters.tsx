'use client';

import { useCallback, useState } from 'react';
import type { Approval } from './approval-types';
import { filterChoices, FILTER_KEYS, isFiltered, queueFilterQuery, type FilterKey, type QueueFilter } from './queue-filter';
import styles from './approvals.module.css';

const NO_FILTER: QueueFilter = { agent: '', tool: '', gate: '', risk: '', compact: false };

/**
 * The pending queue's filter and view. The URL is the filter (reload, share, come back after signing in), replaced
 * in place: the queue is already on the page, nothing is navigated to or read again.
 */
export function useQueueFilter(initial: QueueFilter | undefined) {
  const [filter, setFilter] = useState<QueueFilter>(initial ?? NO_FILTER);
  const updateFilter = useCallback((next: QueueFilter) => {
    setFilter(next);
    window.history.replaceState(window.history.state, '', `${window.location.pathname}${queueFilterQuery(new URLSearchParams(window.location.search), next)}`);
  }, []);
  return { filter, updateFilter };
}

const FILTER_LABEL: Record<FilterKey, string> = { agent: 'Agent', tool: 'Tool', gate: 'Gate', risk: 'Risk' };

/** The pending queue's filters (the values the queue holds now) and the compact view. */
export function QueueFilters({ all, filter, onChange }: { all: readonly Approval[]; filter: QueueFilter; onChange: (next: QueueFilter) => void }) {
  return (
    <form className={styles.queueFilters} role="search" aria-label="Filter pending requests" onSubmit={(e) => e.preventDefault()}>
      {FILTER_KEYS.map((k) => (
        <label key={k}>
          {FILTER_LABEL[k]}
          <select value={filter[k]} onChange={(e) => onChange({ ...filter, [k]: e.target.value })}>
            <option value="">{k === 'risk' ? 'any risk' : `any ${k}`}</option>
            {filterChoices(all, k, filter[k]).map((v) => (
              <option key={v} value={v}>
                {k === 'risk' ? `${v} risk` : v}
              </option>
            ))}
          </select>
        </label>
      ))}
      {isFiltered(filter) ? (
        <button type="button" className="button button-quiet" onClick={() => onChange({ ...filter, agent: '', tool: '', gate: '', risk: '' })}>
          Clear filters
        </button>
      ) : null}
      <button type="button" className={`button button-quiet ${styles.viewToggle}`} aria-pressed={filter.compact} onClick={() => onChange({ ...filter, compact: !filter.compact })}>
        Compact view
      </button>
    </form>
  );
}
