'use client';

import { useSearchParams } from 'next/navigation';
import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import type { Parsed } from './url-params';

/**
 * The explorers' one data model, part 1: the URL is the view. The state is read from the address (so a link, a
 * reload and back/forward show the same view) and every change of view is a history entry made here: `push` for a
 * new view (back returns to the one before), `replace` for a move within one (the open row, the next in the panel).
 * Next.js hears both and updates useSearchParams, without asking the server for the page again; the view's data
 * is read from the API by the page (app/_lib/use-api-resource.ts).
 *
 * `moving` is true from a `push` until the new address has rendered: the address bar already names the next view
 * while the rows on screen still belong to the last one, so the tables are busy (dimmed, aria-busy) from the very
 * keystroke, never "settled" on rows of the view being left.
 *
 * `parse` and `serialize` must be module-level functions (their identity keys the memo).
 */
export function useUrlState<S>(parse: (params: URLSearchParams) => Parsed<S>, serialize: (state: S) => string) {
  const searchParams = useSearchParams();
  const { state, ignored } = useMemo(() => parse(new URLSearchParams(searchParams.toString())), [searchParams, parse]);
  /** the state as last rendered, for handlers that run between renders (a second click before the URL settled) */
  const stateRef = useRef(state);
  stateRef.current = state;
  const [moving, setMoving] = useState(false);
  useEffect(() => setMoving(false), [searchParams]);
  const go = useCallback(
    (next: S, mode: 'push' | 'replace' = 'push') => {
      // The next change builds on this one even before the new URL has rendered (two quick choices both count).
      stateRef.current = next;
      const url = `${window.location.pathname}${serialize(next)}`;
      if (url === `${window.location.pathname}${window.location.search}`) return;
      if (mode === 'push') {
        setMoving(true);
        window.history.pushState(null, '', url);
      } else {
        window.history.replaceState(null, '', url);
      }
    },
    [serialize],
  );
  return { state, ignored, stateRef, go, moving };
}
