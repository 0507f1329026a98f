'use client';

import { useRef, useState } from 'react';
import { exactLinkState, serializeState, type ExplorerState } from './url-state';

/**
 * "Copy link for this exact window": a link that shows exactly the rows of the loaded view to whoever opens it,
 * whenever (its window made absolute, its newest id as until_id). The link is said on the page even when the
 * clipboard refuses it, so it can be copied by hand.
 */
export function useCopyExactLink(view: ExplorerState | undefined) {
  const [copied, setCopied] = useState<string | undefined>();
  const viewRef = useRef(view);
  viewRef.current = view;
  const copy = async () => {
    if (!viewRef.current) return;
    const url = `${window.location.origin}${window.location.pathname}${serializeState(exactLinkState(viewRef.current))}`;
    try {
      await navigator.clipboard.writeText(url);
    } catch {
      // shown below all the same
    }
    setCopied(url);
  };
  return { copied, copy, dismiss: () => setCopied(undefined) };
}
