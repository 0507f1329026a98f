'use client';

import { useCallback, useEffect, useRef, useState } from 'react';
import { stepsIn } from './stepping';

/** How the open row changes: opened from the list, closed, or stepped to from the panel. */
export type RowMove = 'open' | 'close' | 'step';

/**
 * The row open in an explorer's detail panel (a URL parameter, so a link opens it again): open, close (Escape too;
 * the focus goes back to the row), and step to its neighbours on screen. `show` writes the URL; how each move is
 * kept in the history is the page's choice. The explorer's table and detail panel take what it returns.
 */
export function useOpenRow(openId: number | undefined, rows: readonly { id: number }[], show: (id: number | undefined, move: RowMove) => void) {
  const [focusRequest, setFocusRequest] = useState<{ id: number; n: number }>();
  const openRef = useRef(openId);
  openRef.current = openId;
  const open = useCallback((id: number) => show(id, 'open'), [show]);
  const close = useCallback(() => {
    const id = openRef.current;
    show(undefined, 'close');
    if (id !== undefined) setFocusRequest({ id, n: Date.now() });
  }, [show]);
  // While a row is open, Escape (not already handled by a control inside the panel) closes it.
  const isOpen = openId !== undefined;
  useEffect(() => {
    if (!isOpen) return;
    const onKey = (e: globalThis.KeyboardEvent) => {
      if (e.key === 'Escape' && !e.defaultPrevented) {
        e.preventDefault();
        close();
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [isOpen, close]);
  const steps = stepsIn(rows.map(({ id }) => id), openId);
  const step = (delta: 1 | -1) => {
    const next = steps.neighbour(delta);
    if (next !== undefined) show(next, 'step');
  };
  return { openId, open, close, focusRequest, onStep: steps.inList ? step : undefined, canStep: steps.canStep };
}

export type OpenRow = ReturnType<typeof useOpenRow>;
