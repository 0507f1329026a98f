'use client';

import { useCallback, useState } from 'react';
import { queueFilterQuery, type QueueFilter } from './queue-filter';

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
