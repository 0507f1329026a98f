'use client';

import { useCallback, useEffect, useRef, useState } from 'react';
import type { Approval } from './approval-types';

/**
 * The current card: none until the operator moves (j/k, Tab or a click), so no keystroke acts on a card they did not
 * choose. After a decision made here the next card becomes current and takes the focus (the operator is working
 * through the queue); a current card a poll takes away (decided elsewhere) leaves nothing current. A deep link's card
 * is made current, scrolled to and focused once, on load.
 */
export function useCurrentCard(list: readonly Approval[], linkedId: string | null) {
  const [currentId, setCurrentId] = useState<string | null>(null);
  const cards = useRef(new Map<string, HTMLElement>());
  const heading = useRef<HTMLHeadingElement>(null);
  /** set by a decision made here: the position of the current card then (-1: none), to move on from */
  const advanceFrom = useRef<number | null>(null);
  const currentIndex = currentId ? list.findIndex((a) => a.id === currentId) : -1;
  const current = currentIndex >= 0 ? list[currentIndex] : undefined;

  const focusCard = useCallback((id: string | null) => {
    if (id) cards.current.get(id)?.focus();
    else heading.current?.focus();
  }, []);

  useEffect(() => {
    if (!linkedId) return;
    const card = cards.current.get(linkedId);
    if (!card) return;
    setCurrentId(linkedId);
    card.scrollIntoView({ block: 'center' });
    card.focus({ preventScroll: true });
    // on load only: later moves are the person's
  }, []);

  useEffect(() => {
    const from = advanceFrom.current;
    advanceFrom.current = null;
    if (currentId && !list.some((a) => a.id === currentId)) {
      const next = from !== null && from >= 0 && list.length > 0 ? list[Math.min(from, list.length - 1)] : undefined;
      setCurrentId(next?.id ?? null);
      if (from !== null) focusCard(next?.id ?? null);
    } else if (from !== null) {
      const active = document.activeElement;
      if (currentId) focusCard(currentId);
      else if (!active || active === document.body) focusCard(null);
    }
  }, [list, currentId, focusCard]);

  /** Move to the card at `index` (kept within the list), make it current and focus it. */
  const moveTo = (index: number) => {
    const next = list[Math.max(0, Math.min(list.length - 1, index))];
    if (!next) return;
    setCurrentId(next.id);
    focusCard(next.id);
  };
  /** The ref callback of card `id`. */
  const cardRef = (id: string) => (el: HTMLElement | null) => {
    if (el) cards.current.set(id, el);
    else cards.current.delete(id);
  };

  return {
    currentId,
    setCurrentId,
    currentIndex,
    current,
    heading,
    cardRef,
    moveTo,
    /** a decision made here at `index` is about to change the list: move on from there */
    advanceFrom: (index: number) => {
      advanceFrom.current = index;
    },
  };
}
