'use client';

import { createContext, useContext, useEffect, useMemo, useState, type ReactNode } from 'react';

/**
 * The number of pending requests, shared by the "Pending (N)" tab and the queue: the queue publishes its live list
 * length (after every decision and every poll), so the tab and the "N waiting" heading always agree.
 */
const PendingCountContext = createContext<{ count: number; setCount: (n: number) => void } | null>(null);

export function PendingCountProvider({ initial, children }: { initial: number; children: ReactNode }) {
  const [count, setCount] = useState(initial);
  const value = useMemo(() => ({ count, setCount }), [count]);
  return <PendingCountContext.Provider value={value}>{children}</PendingCountContext.Provider>;
}

/** The live count, as text. */
export function PendingCount({ fallback }: { fallback: number }) {
  const ctx = useContext(PendingCountContext);
  return <span data-testid="pending-count">{ctx ? ctx.count : fallback}</span>;
}

/** Called by the queue with its live list length. */
export function usePublishPendingCount(n: number): void {
  const setCount = useContext(PendingCountContext)?.setCount;
  useEffect(() => {
    setCount?.(n);
  }, [setCount, n]);
}
