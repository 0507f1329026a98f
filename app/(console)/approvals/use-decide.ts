'use client';

import { useCallback, useRef, useState, type Dispatch, type SetStateAction } from 'react';
import { approvalSchema } from '@/lib/http/responses';
import { apiPost, asApiError } from '@/app/_lib/api-client';
import { normalize, type Approval } from './approval-types';
import { summarize } from './approval-text';

interface Options {
  setItems: Dispatch<SetStateAction<Approval[]>>;
  note: (text: string, kind?: 'info' | 'error') => void;
  markEnded: () => void;
}

/**
 * Approving and rejecting, one request after the other: each answer said in a note. A request decided here leaves the
 * list (and stays out of a poll that was already on its way); a first approval of a two-person gate stays, marked as
 * this operator's; a request decided meanwhile (409) or gone (404) leaves with the server's words; anything else stays
 * for another try.
 */
export function useDecide({ setItems, note, markEnded }: Options) {
  const [busy, setBusy] = useState(false);
  /** requests this operator gave a (non-final) approval to in this session, in case a poll answers before the server shows it */
  const [mine, setMine] = useState<ReadonlySet<string>>(new Set());
  const decidedHere = useRef(new Set<string>());

  const decide = useCallback(
    /** `beforeUpdate`: called once the answers are in, just before the list changes (the current card moves on then) */
    async (targets: readonly Approval[], action: 'approve' | 'reject', reason: string | undefined, beforeUpdate: () => void) => {
      setBusy(true);
      const outcome = new Map<string, Approval | 'gone'>();
      for (const t of targets) {
        const label = summarize(t);
        decidedHere.current.add(t.id);
        try {
          const answer = await apiPost(`/api/v1/approvals/${t.id}/${action}`, reason ? { reason } : {}, approvalSchema);
          const a = normalize(answer);
          if (action === 'approve' && a.status === 'pending') {
            // a two-person gate: our approval counted, the request waits for another operator
            decidedHere.current.delete(t.id);
            outcome.set(t.id, answer);
            setMine((m) => new Set(m).add(t.id));
            note(
              a.approvals_required === 2
                ? `First of two approvals given: ${label}; a second operator must approve.`
                : `Approval ${a.approvals.length} of ${a.approvals_required} given: ${label}; another operator must approve.`,
            );
          } else {
            outcome.set(t.id, 'gone');
            note(`${action === 'approve' ? 'Approved' : 'Rejected'}: ${label}`);
          }
        } catch (e) {
          const error = asApiError(e);
          if (error.status === 401) markEnded();
          note(`Could not ${action} ${label}: ${error.status === 401 ? 'you are signed out; sign in again and decide it then.' : error.detail}`, 'error');
          if (error.status === 409 || error.status === 404) outcome.set(t.id, 'gone');
          else decidedHere.current.delete(t.id);
        }
      }
      beforeUpdate();
      setItems((l) =>
        l.flatMap((a) => {
          const o = outcome.get(a.id);
          return o === 'gone' ? [] : o ? [o] : [a];
        }),
      );
      setBusy(false);
    },
    [note, markEnded, setItems],
  );

  return { decide, busy, mine, decidedHere };
}
