'use client';

import { useEffect, useState } from 'react';
import { denialTailSchema } from '@/lib/http/responses';
import { apiGet, asApiError } from '@/app/_lib/api-client';
import { filterParams, loadedState, tailUrl, type ExplorerState, type LoadedWindow } from './url-state';

const TAIL_MS = 5_000;

/**
 * The window a view was loaded with, and the live tail after it. When a filter is applied the page asks for the newest
 * matching id and the server's time (or takes the until_id of an exact link): that fixed window is what the list, the
 * counts, the chart, the exports and the copied link all read, so they hold the same rows whenever they are asked.
 * Then every few seconds it asks how many matching denials came after (counts only, as background requests), and
 * announces them; `showNew` lets go of the window and loads a new one. Nothing moves under the auditor's eyes.
 */
export function useLiveTail(state: ExplorerState) {
  const filterKey = filterParams({ ...state, untilId: undefined }).toString();
  const urlUntil = state.untilId;
  const [epoch, setEpoch] = useState(0);
  const [fetched, setFetched] = useState<{ key: string; epoch: number; loaded: LoadedWindow }>();
  const [tail, setTail] = useState<{ key: string; baseline?: number; count: number; latest?: number }>({ key: filterKey, count: 0 });

  useEffect(() => {
    let cancelled = false;
    let baseline: number | undefined = urlUntil;
    if (baseline !== undefined) setTail({ key: filterKey, baseline, count: 0, latest: baseline });
    const poll = async () => {
      if (baseline === undefined) {
        try {
          const body = await apiGet(tailUrl(filterKey, 'newest'), denialTailSchema, { background: true });
          if (cancelled) return;
          baseline = body.newest_id ?? 0;
          setFetched({ key: filterKey, epoch, loaded: { untilId: baseline, at: body.now ?? Date.now() / 1000 } });
          setTail({ key: filterKey, baseline, count: 0, latest: baseline });
        } catch (e) {
          const error = asApiError(e);
          // Refused (a 401, a 400): the view cannot fix its window; the list's own read will say why. Not reached, or
          // not understood: the next tick asks again.
          if (!cancelled && error.status >= 400) setFetched({ key: filterKey, epoch, loaded: { untilId: Number.MAX_SAFE_INTEGER } });
        }
        return;
      }
      const after = baseline;
      try {
        const body = await apiGet(tailUrl(filterKey, after), denialTailSchema, { background: true });
        if (cancelled) return;
        setTail((t) => (t.key === filterKey && t.baseline === after ? { ...t, count: body.count, latest: body.newest_id ?? t.latest } : t));
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
  }, [filterKey, epoch, urlUntil]);

  const loaded: LoadedWindow | undefined =
    state.untilId !== undefined ? { untilId: state.untilId } : fetched && fetched.key === filterKey && fetched.epoch === epoch ? fetched.loaded : undefined;
  return {
    /** the state the view reads with (its window fixed), or undefined until the window is known */
    view: loaded ? loadedState(state, loaded) : undefined,
    /** matching denials recorded after the view was loaded */
    newCount: tail.key === filterKey ? tail.count : 0,
    /** forget the window: the next one is fixed anew (the page also lets go of an exact link's until_id) */
    renew: () => {
      setEpoch((n) => n + 1);
      setTail({ key: filterKey, count: 0 });
    },
  };
}
