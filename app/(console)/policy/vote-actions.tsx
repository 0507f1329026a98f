'use client';

import { useRouter } from 'next/navigation';
import { useState } from 'react';
import { apiPost } from '@/app/_lib/api-client';
import { proposalSchema, voteResultSchema } from '@/lib/http/responses';
import { ReasonDialog } from './reason-dialog';
import styles from './policy.module.css';

type Act = 'approve' | 'reject' | 'withdraw';

/**
 * The decisions a person may take on an open proposal, each through a dialog that asks for the reason: Approve and
 * Reject (for a role that votes, not the proposer), Withdraw (the proposer or an admin). The server decides again on
 * every vote; a refusal is shown in the dialog. `approveBlocked` says why Approve is disabled (tests fail, stale).
 */
export function VoteActions({
  id,
  canVote,
  approveBlocked,
  canWithdraw,
  lastApproval,
  enforced,
}: {
  id: string;
  canVote: boolean;
  approveBlocked: string | null;
  canWithdraw: boolean;
  /** this approval would be the last one needed */
  lastApproval: boolean;
  enforced: boolean;
}) {
  const router = useRouter();
  const [act, setAct] = useState<Act | undefined>();

  const send = async (reason: string) => {
    if (act === 'withdraw') await apiPost(`/api/v1/policy/proposals/${id}/withdraw`, { reason }, proposalSchema);
    else await apiPost(`/api/v1/policy/proposals/${id}/votes`, { vote: act, reason }, voteResultSchema);
    router.refresh();
  };

  return (
    <div className={styles.actions}>
      {canVote ? (
        <>
          <button type="button" className="button button-primary" disabled={approveBlocked !== null} aria-describedby={approveBlocked ? 'approve-blocked' : undefined} onClick={() => setAct('approve')}>
            Approve…
          </button>
          <button type="button" className="button button-danger" onClick={() => setAct('reject')}>
            Reject…
          </button>
        </>
      ) : null}
      {canWithdraw ? (
        <button type="button" className="button" onClick={() => setAct('withdraw')}>
          Withdraw…
        </button>
      ) : null}
      {canVote && approveBlocked ? (
        <p id="approve-blocked" className={styles.blocked}>
          Approve is disabled: {approveBlocked}
        </p>
      ) : null}
      {act ? (
        <ReasonDialog
          title={act === 'approve' ? 'Approve this change to the rules?' : act === 'reject' ? 'Reject this change?' : 'Withdraw this proposal?'}
          confirmLabel={act === 'approve' ? 'Approve change' : act === 'reject' ? 'Reject change' : 'Withdraw proposal'}
          busyLabel="Sending…"
          danger={act !== 'approve'}
          onCancel={() => setAct(undefined)}
          onConfirm={send}
        >
          <p>
            {act === 'approve'
              ? lastApproval
                ? enforced
                  ? 'Yours is the last approval needed: the change becomes the rules on every server within a second.'
                  : 'Yours is the last approval needed: the proposal is approved (advisory: the files on disk stay the rules until deployed).'
                : 'Your approval is recorded; more are needed before the change takes effect.'
              : act === 'reject'
                ? 'A rejection closes the proposal: it can no longer be approved.'
                : 'A withdrawn proposal takes no more votes.'}
          </p>
        </ReasonDialog>
      ) : null}
    </div>
  );
}
