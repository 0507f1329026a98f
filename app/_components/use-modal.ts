'use client';

import { useEffect, useRef, type RefObject } from 'react';

/**
 * A native modal dialog, opened when its component mounts (Escape closes it), with the focus put on `startAt`: where
 * the person starts, which each dialog chooses so that no stray keystroke decides (showModal alone would focus the
 * first control). Returns the ref for the <dialog>.
 */
export function useModal(startAt: RefObject<HTMLElement | null>): RefObject<HTMLDialogElement | null> {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = ref.current;
    if (d && !d.open) d.showModal();
    startAt.current?.focus();
  }, [startAt]);
  return ref;
}
