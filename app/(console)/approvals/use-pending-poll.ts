'use client';

import { useEffect, useRef, type MutableRefObject } from 'react';
import { approvalListSchema, approvalSchema } from '@/lib/http/responses';
import { apiGet, asApiError } from '@/app/_lib/api-client';
import type { Approval } from './approval-types';
import { summarize } from './approval-text';

const POLL_MS = 3000;

/** "deployer → deploy_serving: rejected by admin (reason)", for a request decided elsewhere. */
function describe(a: Approval): string {
  const by = a.decided_by ? ` by ${a.decided_by}` : '';
  return `${a.agent} → ${a.tool}: ${a.outcome}${by}${a.decision_reason ? ` (${a.decision_reason})` : ''}`;
}

interface Options {
  /** the list as last rendered */
  items: readonly Approval[];
  /** requests decided on this page (a poll sent before the decision landed must not bring them back) */
  decidedHere: MutableRefObject<Set<string>>;
  /** the ids in the open Approve or Reject dialog, and how to close it */
  dialog: { openIds: MutableRefObject<readonly string[]>; closeAll: () => void };
  ended: boolean;
  markEnded: () => void;
  note: (text: string) => void;
  /** the pending requests now, and the moment they were read */
  onPolled: (items: Approval[]) => void;
}

/**
 * New requests appear without a reload; a request decided elsewhere leaves with a note of who decided it, and a
 * dialog open on it closes with that note (confirming would only be refused). Signed out, the poll stops: the session
 * banner (app/_components/session-watch.tsx) says why. Each poll is a background request (x-swarm-background: 1), so
 * the server can tell it from a person's read.
 */
export function usePendingPoll({ items, decidedHere, dialog, ended, markEnded, note, onPolled }: Options): void {
  /** the list as last rendered, for the poll (which runs outside React's updates) */
  const itemsRef = useRef(items);
  useEffect(() => {
    itemsRef.current = items;
  }, [items]);
  const latest = useRef({ dialog, markEnded, note, onPolled });
  latest.current = { dialog, markEnded, note, onPolled };

  useEffect(() => {
    if (ended) return;
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const poll = async () => {
      const { dialog, note, onPolled } = latest.current;
      try {
        const { approvals } = await apiGet('/api/v1/approvals?status=pending', approvalListSchema, { background: true });
        if (stopped) return;
        const still = new Set(approvals.map((a) => a.id));
        const gone = itemsRef.current.filter((p) => !still.has(p.id) && !decidedHere.current.has(p.id));
        const inDialog = gone.filter((g) => dialog.openIds.current.includes(g.id));
        if (inDialog.length > 0) dialog.closeAll();
        for (const g of gone) {
          const wasOpen = inDialog.includes(g);
          apiGet(`/api/v1/approvals/${g.id}`, approvalSchema, { background: true }).then(
            (a) => note(wasOpen ? `The dialog was closed, nothing was sent: this request was decided elsewhere. ${describe(a)}` : `Decided elsewhere: ${describe(a)}`),
            () => {
              if (wasOpen) note(`The dialog was closed, nothing was sent: ${summarize(g)} was decided elsewhere.`);
            },
          );
        }
        onPolled(approvals.filter((a) => !decidedHere.current.has(a.id)));
      } catch (e) {
        // 401: the session watch has seen it too (the banner); stop here. Anything else is retried on the next tick.
        if (asApiError(e).status === 401) {
          latest.current.markEnded();
          return;
        }
      }
      if (!stopped) timer = setTimeout(poll, POLL_MS);
    };
    timer = setTimeout(poll, POLL_MS);
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [ended, decidedHere]);
}
