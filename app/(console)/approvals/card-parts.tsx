/** Pieces of a queue card (approval-card.tsx): its times, its decision buttons, and a two-person gate's progress. */
import { Time } from '@/app/_components/time';
import type { Approval } from './approval-types';
import { ago, formatDuration, urgency } from './durations';
import styles from './approvals.module.css';

/** "waiting 4m · expires in 23h 56m"; signed out, when the times were last true and that they are not updating. */
export function CardTimes({ a, now, staleSince }: { a: Approval; now: number; staleSince: number | null }) {
  if (staleSince !== null) {
    return (
      <span className={styles.stale} data-stale="true">
        times as of <Time seconds={staleSince} />, not updating (signed out)
      </span>
    );
  }
  const left = urgency(a.expires_at - now);
  return (
    <>
      waiting {formatDuration(now - a.requested_at)} · <span className={styles[`urgency_${left.level}`]}>{left.label}</span>
    </>
  );
}

interface ActionsProps {
  /** why this operator cannot approve it (the Approve button is then left out) */
  blocked: string | null;
  /** deciding is off (a decision on its way, or signed out) */
  off: boolean;
  ended: boolean;
  onApprove: () => void;
  onReject: () => void;
}

/** Approve… and Reject…: each opens its dialog, neither decides. */
export function CardActions({ blocked, off, ended, onApprove, onReject }: ActionsProps) {
  const describedBy = ended ? 'queue-ended' : undefined;
  return (
    <div className={styles.actions}>
      {blocked ? (
        <p className={styles.plainNote}>{blocked}</p>
      ) : (
        <button type="button" className="button button-primary" disabled={off} aria-describedby={describedBy} onClick={onApprove}>
          Approve…
        </button>
      )}
      <button type="button" className="button button-danger" disabled={off} aria-describedby={describedBy} onClick={onReject}>
        Reject…
      </button>
    </div>
  );
}

/** "1 of 2 approvals · approved by olivia (you) 2 min ago": who has approved a request that needs more than one. */
export function ApprovalProgress({ a, me, now }: { a: Approval; me: string; now: number }) {
  const first = a.approvals[0];
  const you = (by: string) => (by === me ? ' (you)' : '');
  return (
    <p className={styles.progress} data-testid="approval-progress">
      <strong>
        {a.approvals.length} of {a.approvals_required} approvals
      </strong>
      {first ? ` · approved by ${first.by}${you(first.by)} ${ago(now - first.at)}` : ' · none given yet'}
      {a.approvals.slice(1).map((g) => ` · then by ${g.by}${you(g.by)} ${ago(now - g.at)}`)}
    </p>
  );
}
