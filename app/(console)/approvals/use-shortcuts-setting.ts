'use client';

import { useEffect, useState } from 'react';

const SHORTCUTS_KEY = 'swarm.approvals.shortcuts';

/** Whether the single-key shortcuts listen: on unless this browser turned them off (read after mount). */
export function useShortcutsSetting(): [boolean, (on: boolean) => void] {
  const [on, setOn] = useState(true);
  useEffect(() => {
    setOn(window.localStorage.getItem(SHORTCUTS_KEY) !== 'off');
  }, []);
  const set = (next: boolean) => {
    setOn(next);
    window.localStorage.setItem(SHORTCUTS_KEY, next ? 'on' : 'off');
  };
  return [on, set];
}
