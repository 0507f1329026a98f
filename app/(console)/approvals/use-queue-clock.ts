'use client';

import { useCallback, useEffect, useState } from 'react';

/**
 * The queue's clock: `now` for the waiting and expiry times (the server's at first, the browser's once it runs), and
 * `asOf`, when they were last true (the poll's last answer), which stays as it was once the session has ended.
 */
export function useQueueClock(serverNow: number | undefined) {
  const [now, setNow] = useState(() => serverNow ?? Date.now() / 1000);
  const [asOf, setAsOf] = useState<number | null>(null);
  const tick = useCallback(() => {
    const t = Date.now() / 1000;
    setNow(t);
    setAsOf(t);
  }, []);
  useEffect(tick, [tick]);
  return { now, asOf, tick };
}
