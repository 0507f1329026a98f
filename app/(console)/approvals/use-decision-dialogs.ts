'use client';

import { useCallback, useEffect, useRef, useState } from 'react';
import type { Approval } from './approval-types';
import { summarize } from './approval-text';
import type { ApproveCandidate } from './approve-dialog';

/**
 * The Approve and Reject dialogs: which requests each is open on. Approving asks first, always, and leaves out what
 * this operator may not approve (saying why when nothing is left). Signed out, an open dialog closes: it could only
 * fail. `openIds` is read by the poll, which closes a dialog whose request was decided elsewhere.
 */
export function useDecisionDialogs({ list, blocked, note, ended }: { list: readonly Approval[]; blocked: (a: Approval) => string | null; note: (text: string) => void; ended: boolean }) {
  const [approving, setApproving] = useState<ApproveCandidate[] | null>(null);
  const [rejecting, setRejecting] = useState<Approval[] | null>(null);
  const openIds = useRef<readonly string[]>([]);
  openIds.current = approving ? approving.map((c) => c.a.id) : rejecting ? rejecting.map((a) => a.id) : [];

  const closeAll = useCallback(() => {
    setApproving(null);
    setRejecting(null);
    openIds.current = [];
  }, []);
  useEffect(() => {
    if (ended) closeAll();
  }, [ended, closeAll]);

  const openApprove = useCallback(
    (ids: readonly string[]) => {
      // in queue order, oldest first, as the operator sees them
      const candidates = list.filter((a) => ids.includes(a.id)).map((a) => ({ a, blocked: blocked(a) }));
      if (candidates.length === 0) return;
      const only = candidates.length === 1 ? candidates[0] : undefined;
      if (only?.blocked) {
        note(`Not approved: ${summarize(only.a)}. ${only.blocked}`);
        return;
      }
      if (candidates.every((c) => c.blocked)) {
        note('None of the selected requests can be approved by you: each needs another operator.');
        return;
      }
      setApproving(candidates);
    },
    [list, blocked, note],
  );
  const openReject = useCallback(
    (ids: readonly string[]) => {
      const targets = list.filter((a) => ids.includes(a.id));
      if (targets.length) setRejecting(targets);
    },
    [list],
  );

  return { approving, rejecting, openApprove, openReject, closeAll, openIds, isOpen: approving !== null || rejecting !== null };
}
