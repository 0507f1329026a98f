'use client';

import { useEffect } from 'react';

/** While a panel is open, Escape (not already handled by a control inside it) closes it. */
export function useEscapeToClose(open: boolean, close: () => void): void {
  useEffect(() => {
    if (!open) return;
    const onKey = (e: globalThis.KeyboardEvent) => {
      if (e.key === 'Escape' && !e.defaultPrevented) {
        e.preventDefault();
        close();
      }
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [open, close]);
}
