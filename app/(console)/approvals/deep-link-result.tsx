import { Time } from '@/app/_components/time';
import type { Approval } from './approval-types';
import { QueueToolName } from './tool-name';
import { decidedByText } from './approval-text';
import styles from './approvals.module.css';

/** The request a link names (/approvals?request=<id>): as the server found it at load, or null for no such request. */
export interface DeepLink {
  id: string;
  found: Approval | null;
}

/** What a link to a request no longer pending finds: who decided it, when and why; or that there is no such request. */
export function DeepLinkResult({ link }: { link: DeepLink }) {
  const a = link.found;
  if (!a) {
    return (
      <div className={`panel ${styles.linkResult}`} role="status" data-testid="deep-link-result">
        <strong>Request not found.</strong> No approval request <code>{link.id}</code> exists here: the link may be mistyped, or
        from another server.
      </div>
    );
  }
  const people = decidedByText(a);
  const by = people ? ` by ${people}` : '';
  const verb = a.status === 'expired' ? 'Expired without a decision' : a.status === 'rejected' ? `Rejected${by}` : `Approved${by}`;
  const after = a.status === 'consumed' ? ' The call has run.' : a.status === 'approved' ? ' The call has not run yet.' : '';
  return (
    <div className={`panel ${styles.linkResult}`} role="status" data-testid="deep-link-result">
      <p className={styles.linkHead}>
        <strong>This request was already decided.</strong> {a.agent} → <QueueToolName name={a.tool} />
      </p>
      <p>
        {verb}
        {a.decided_at ? (
          <>
            {' '}
            on <Time seconds={a.decided_at} />
          </>
        ) : null}
        {a.decision_reason ? <>, reason: “{a.decision_reason}”.</> : a.status === 'expired' ? '.' : ', no reason given.'}
        {after}
      </p>
      <p>
        <a href={`/approvals?tab=history&agent=${encodeURIComponent(a.agent)}&gate=${encodeURIComponent(a.gate)}`}>See it in History</a>
      </p>
    </div>
  );
}
