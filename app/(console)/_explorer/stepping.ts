import type { KeyboardEvent } from 'react';

/** Which neighbours the open row has in its list. */
export interface CanStep {
  prev: boolean;
  next: boolean;
}

/**
 * Up/Down (or k/j) inside an open detail panel move to the previous/next row of the list, as in a mail reader. Not
 * while typing in a field or with a modifier held (those keys belong to the browser or the field).
 */
function stepKey(e: KeyboardEvent<HTMLElement>, onStep: (delta: 1 | -1) => void, canStep: CanStep): void {
  if (e.altKey || e.ctrlKey || e.metaKey || e.shiftKey) return;
  const t = e.target as HTMLElement;
  if (t.closest('input, textarea, select, [contenteditable="true"]')) return;
  const delta = e.key === 'ArrowDown' || e.key === 'j' ? 1 : e.key === 'ArrowUp' || e.key === 'k' ? -1 : 0;
  if (delta === 0) return;
  e.preventDefault();
  if (delta === 1 ? canStep.next : canStep.prev) onStep(delta);
}

/** The attributes of a detail panel that steps through its list (none when the open row is not in the list). */
export function stepping(onStep: ((delta: 1 | -1) => void) | undefined, canStep: CanStep) {
  return onStep ? { 'aria-keyshortcuts': 'ArrowDown ArrowUp J K', onKeyDown: (e: KeyboardEvent<HTMLElement>) => stepKey(e, onStep, canStep) } : {};
}

/** Where the open row stands in the list of ids on screen, and the id `delta` rows away. */
export function stepsIn(ids: readonly number[], openId: number | undefined) {
  const index = openId === undefined ? -1 : ids.indexOf(openId);
  return {
    /** the open row is one of the rows on screen (else there is nothing to step through) */
    inList: index >= 0,
    canStep: { prev: index > 0, next: index >= 0 && index < ids.length - 1 },
    neighbour: (delta: 1 | -1): number | undefined => (index < 0 ? undefined : ids[index + delta]),
  };
}
