'use client';

import { useEffect, useMemo, useState } from 'react';
import { eventPageSchema, type EventPage, type SecurityEventJson } from '@/lib/http/responses';
import { apiGet, errorSentence } from '@/app/_lib/api-client';
import { staleWhile, useApiResource, type Seed } from '@/app/_lib/use-api-resource';
import { firstPageUrl, olderUrl, viewKey, type AuditState } from './url-state';

/**
 * The events of the audit view: its first page (the server's, for the URL the page was opened with; read from the
 * API for every later view), then "Older events" pages appended with the cursor. A new view starts again at its first
 * page.
 */
export function useAuditEvents(state: AuditState, seed: Seed<EventPage>, moving: boolean) {
  const first = staleWhile(moving, useApiResource(firstPageUrl(state), eventPageSchema, seed));
  const key = viewKey(state);
  const [older, setOlder] = useState<{ key: string; rows: SecurityEventJson[]; cursor: number | null }>();
  const [olderBusy, setOlderBusy] = useState(false);
  const [olderError, setOlderError] = useState<string>();
  useEffect(() => setOlderError(undefined), [key]);

  const extra = older?.key === key ? older : undefined;
  const rows = useMemo(() => [...(first.data?.events ?? []), ...(extra?.rows ?? [])], [first.data, extra]);
  const nextCursor = extra ? extra.cursor : (first.data?.next_cursor ?? null);

  const loadOlder = async () => {
    if (nextCursor === null) return;
    setOlderBusy(true);
    setOlderError(undefined);
    try {
      const page = await apiGet(olderUrl(state, nextCursor), eventPageSchema);
      setOlder((o) => ({ key, rows: [...(o?.key === key ? o.rows : []), ...page.events], cursor: page.next_cursor }));
    } catch (e) {
      setOlderError(errorSentence(e));
    } finally {
      setOlderBusy(false);
    }
  };

  return { first, rows, nextCursor, loadOlder, olderBusy, olderError };
}
