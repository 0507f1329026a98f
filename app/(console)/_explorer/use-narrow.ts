'use client';

import { useEffect, useState } from 'react';

/** A phone-sized screen (the explorers put the results first there, filters behind a button). */
export const NARROW_QUERY = '(max-width: 640px)';

/** Whether the screen is narrow; false on the server and until the page has hydrated, then follows the width. */
export function useNarrow(): boolean {
  const [narrow, setNarrow] = useState(false);
  useEffect(() => {
    const mq = window.matchMedia(NARROW_QUERY);
    const update = () => setNarrow(mq.matches);
    update();
    mq.addEventListener('change', update);
    return () => mq.removeEventListener('change', update);
  }, []);
  return narrow;
}
