'use client';

import { useEffect, useRef, useState } from 'react';
import type { Approval } from './approval-types';

const MOVE_FIRST = 'Move to a request first (j/k).';
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

interface Options {
  /** the shortcuts listen (switched on, no dialog open, nothing being decided, still signed in) */
  enabled: boolean;
  canDecide: boolean;
  /** the card the operator moved to, and its position in the list (-1: none) */
  current: Approval | undefined;
  currentIndex: number;
  selected: ReadonlySet<string>;
  moveTo: (index: number) => void;
  openApprove: (ids: string[]) => void;
  openReject: (ids: string[]) => void;
  toggle: (id: string) => void;
  note: (text: string) => void;
}

/**
 * Single-key shortcuts: j/k move, a asks to approve, r asks to reject, x selects. Never while typing or in a dialog,
 * never with a modifier, and a held key (repeat) decides nothing and stacks no notes. a and r only open a dialog: no
 * keystroke decides on its own.
 */
export function useQueueShortcuts(options: Options): void {
  const latest = useRef(options);
  latest.current = options;
  const { enabled } = options;
  useEffect(() => {
    if (!enabled) return;
    const onKey = (e: KeyboardEvent) => {
      const { canDecide, current, currentIndex, selected, moveTo, openApprove, openReject, toggle, note } = latest.current;
      if (e.metaKey || e.ctrlKey || e.altKey || !latest.current.enabled) return;
      const t = e.target as HTMLElement | null;
      if (t && (t.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(t.tagName) || t.closest('dialog'))) return;
      if (e.key === 'j') moveTo(currentIndex < 0 ? 0 : currentIndex + 1);
      else if (e.key === 'k') moveTo(currentIndex < 0 ? 0 : currentIndex - 1);
      else if (!canDecide || !['a', 'r', 'x'].includes(e.key)) return;
      else if (e.repeat) {
        // a held key never decides or stacks notes
      } else if (e.key === 'a') {
        if (selected.size) openApprove([...selected]);
        else if (current) openApprove([current.id]);
        else note(MOVE_FIRST);
      } else if (e.key === 'r') {
        if (selected.size) openReject([...selected]);
        else if (current) openReject([current.id]);
        else note(MOVE_FIRST);
      } else if (e.key === 'x') {
        if (current) toggle(current.id);
        else note(MOVE_FIRST);
      }
      e.preventDefault();
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [enabled]);
}
