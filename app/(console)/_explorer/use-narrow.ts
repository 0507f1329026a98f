'use client';

import { useEffect, useState } from 'react';

/**
 * Whether the screen is phone-sized (the explorers put the results first there, filters behind a button); false on the
 * server and until the page has hydrated, then follows the width.
 */
export function useNarrow(): boolean {
  const [narrow, setNarrow] = useState(false);
  useEffect(() => {
    const mq = window.matchMedia('(max-width: 640px)');
    const update = () => setNarrow(mq.matches);
    update();
    mq.addEventListener('change', update);
    return () => mq.removeEventListener('change', update);
  }, []);
  return narrow;
}
