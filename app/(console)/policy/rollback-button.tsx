'use client';

import { useRouter } from 'next/navigation';
import { useState } from 'react';
import { apiPost } from '@/app/_lib/api-client';
import { proposalSchema } from '@/lib/http/responses';
import { ReasonDialog } from './reason-dialog';

/**
 * Propose going back to an earlier activation's files (admins): a proposal like any other, reviewed and voted on;
 * nothing changes until it is approved. The dialog asks why (POST /api/v1/policy/rollback); the new proposal opens.
 */
export function RollbackButton({ revision, seq }: { revision: string; seq: number }) {
  const router = useRouter();
  const [open, setOpen] = useState(false);
  return (
    <>
      <button type="button" className="button button-quiet" onClick={() => setOpen(true)} aria-label={`Propose rollback to activation ${seq}`}>
        Propose rollback…
      </button>
      {open ? (
        <ReasonDialog
          title={`Propose going back to activation ${seq}?`}
          confirmLabel="Propose rollback"
          busyLabel="Proposing…"
          onCancel={() => setOpen(false)}
          onConfirm={async (reason) => {
            const p = await apiPost('/api/v1/policy/rollback', { revision, message: reason }, proposalSchema);
            router.push(`/policy/${p.id}`);
          }}
        >
          <p>
            This proposes the files of revision <code>{revision}</code> again. Nothing changes yet: the rollback is reviewed and approved like any change, with its impact measured against
            the rules in force.
          </p>
        </ReasonDialog>
      ) : null}
    </>
  );
}
