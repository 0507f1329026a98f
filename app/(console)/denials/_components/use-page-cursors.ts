'use client';

import { useRef } from 'react';
import { serializeState, type ExplorerState } from './url-state';

/** The view without its position: what a remembered cursor belongs to. */
const viewKey = (s: ExplorerState) => serializeState({ ...s, cursor: undefined, page: 1, denial: undefined });

/**
 * The cursors of the pages seen in this view, so "Previous" can go back without the server counting. A page opened
 * from a link (page 5 of someone else's view) has no known previous cursor: the pager offers the first page instead.
 */
export function usePageCursors(state: ExplorerState) {
  const cursors = useRef(new Map<string, string | undefined>());
  const key = viewKey(state);
  cursors.current.set(`${key}#${state.page}`, state.cursor);
  return {
    /** the previous page can be reached */
    prevKnown: state.page === 2 || cursors.current.has(`${key}#${state.page - 1}`),
    /** the cursor of the previous page (page 1 has none) */
    prevCursor: (): string | undefined => (state.page === 2 ? undefined : cursors.current.get(`${key}#${state.page - 1}`)),
  };
}
