import type { Metadata } from 'next';
import Link from 'next/link';
import { notFound } from 'next/navigation';
import { DataTable } from '@/app/_components/data-table';
import { Time } from '@/app/_components/time';
import { PROPOSAL_ID } from '@/lib/change-control/service';
import { AppError, isError } from '@/lib/errors';
import { requireSignedIn } from '@/lib/http/page-auth';
import { FileDiff } from '../diff-view';
import { DIRECTION_WORDS, shortRevision, STATUS_WORDS } from '../policy-words';
import { VoteActions } from '../vote-actions';
import styles from '../policy.module.css';

export const metadata: Metadata = { title: 'Policy change' };
export const dynamic = 'force-dynamic';

/** A decision id the audit explorer can follow (its decision_id filter). */
const DECISION_ID = /^[0-9a-f-]{36}$/;

/** A test file by its folder and name (the server's full path on hover): the page is read away from the server. */
const testFileName = (path: string): string => path.split(/[\\/]/).slice(-2).join('/');

/**
 * One proposal: who proposed it, when and why; its status; the diff of every file it changes; its tests; its impact
 * on the recorded calls; the votes; and the decisions the viewer may take, or why they may not.
 */
export default async function ProposalPage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  const { app, principal } = await requireSignedIn('/policy');
  if (!PROPOSAL_ID.test(id)) notFound();
  const cc = app.changeControl;
  const { proposal: p, votes, files, stale } = await cc.detail(id).catch((error: unknown) => {
    if (isError(error, AppError) && error.code === 'NOT_FOUND') notFound();
    throw error;
  });
  const enforced = cc.enforced;
  const activation = p.status === 'activated' ? (await cc.store.activations()).find((a) => a.proposalId === p.id) : undefined;
  const inForce = activation !== undefined && cc.active?.seq === activation.seq;

  const approvals = votes.filter((v) => v.vote === 'approve').length;
  const isProposer = principal.id === p.proposedBy;
  const voted = votes.some((v) => v.voter === principal.id);
  const open = p.status === 'open';
  const roleVotes = principal.kind === 'user' && p.approverRoles.includes(principal.role);
  const canVote = open && roleVotes && !isProposer && !voted;
  const approveBlocked = p.tests.failed > 0 ? `${p.tests.failed} of its policy tests fail; a proposal whose tests fail cannot be approved.` : stale ? 'the rules in force changed since it was proposed; it must be proposed again.' : null;
  const canWithdraw = open && (isProposer || principal.role === 'admin');
  const whyNoVote = !open
    ? null
    : isProposer
      ? 'You proposed this change: someone else must approve it.'
      : voted
        ? 'You have voted on this proposal.'
        : !roleVotes
          ? `Only ${p.approverRoles.join(' or ')} users vote on changes to the rules.`
          : null;
  const impact = p.impact;
  // Who may still approve it: a person of an approver role, neither its proposer nor one who voted already.
  const stillNeeded = open ? Math.max(0, p.approvalsRequired - approvals) : 0;
  const mayStillVote = open ? (await app.auth.usersWithRoles(p.approverRoles)).map((u) => u.username).filter((name) => name !== p.proposedBy && !votes.some((v) => v.voter === name)) : [];

  return (
    <div className={styles.page}>
      <p className={styles.back}>
        <Link href="/policy">← Policy changes</Link>
      </p>
      <header className="page-head">
        <h1>{p.kind === 'rollback' ? 'Rollback proposal' : 'Proposed change'}</h1>
        <p className={styles.message} data-testid="proposal-message">
          {p.message}
        </p>
        <p className="muted">
          <code>{p.id}</code> · proposed by <strong>{p.proposedBy}</strong> on <Time seconds={p.proposedAt} /> · revision <code title={p.revision}>{shortRevision(p.revision)}</code>
          {p.baseRevision ? (
            <>
              {' '}
              against <code title={p.baseRevision}>{shortRevision(p.baseRevision)}</code>
            </>
          ) : null}
        </p>
      </header>

      <section className={`panel ${styles.statusPanel}`} aria-labelledby="status-head" data-testid="proposal-status">
        <h2 id="status-head">
          <span className={`${styles.status} ${styles[`status-${p.status}`] ?? ''}`}>{STATUS_WORDS[p.status]}</span>
          {p.emergency ? <strong className={styles.emergencyTag}> ⚠ emergency rollback (break-glass, no votes)</strong> : null}
        </h2>
        {p.status === 'activated' ? (
          <p>
            {inForce ? <strong>Active on every server</strong> : <strong>Was activated</strong>}
            {activation ? (
              <>
                {' '}
                since <Time seconds={activation.activatedAt} /> (activation {activation.seq})
              </>
            ) : null}
            {inForce ? '.' : '; a later activation has replaced it.'}
          </p>
        ) : p.status === 'approved' ? (
          <p>Approved. Change control is not enforced here: the files on disk stay the rules until they are deployed.</p>
        ) : p.status === 'open' ? (
          <p>
            {approvals} of {p.approvalsRequired} approvals ({p.approverRoles.join(' or ')}, not the proposer).{' '}
            {enforced ? 'The last approval needed makes it the rules on every server.' : 'Advisory: change control is not enforced, so nothing is activated.'}
          </p>
        ) : (
          <p>
            {p.status === 'rejected' ? 'Rejected' : 'Withdrawn'} by <strong>{p.decidedBy}</strong>
            {p.decidedAt ? (
              <>
                {' '}
                on <Time seconds={p.decidedAt} />
              </>
            ) : null}
            : {p.decisionReason}
          </p>
        )}
        {stale ? <p className={styles.blocked}>Stale: the rules in force changed since this was proposed, so it can no longer be approved. Propose it again.</p> : null}
        {whyNoVote ? <p className={styles.blocked}>{whyNoVote}</p> : null}
        {canVote || canWithdraw ? <VoteActions id={p.id} canVote={canVote} approveBlocked={approveBlocked} canWithdraw={canWithdraw} lastApproval={approvals + 1 >= p.approvalsRequired} enforced={enforced} /> : null}
      </section>

      <section className="section" aria-labelledby="diff-head">
        <h2 id="diff-head">
          Changes <span className="muted">({files.length} {files.length === 1 ? 'file' : 'files'})</span>
        </h2>
        {files.length === 0 ? <p className="muted">No file differs from the rules it was proposed against.</p> : files.map((f) => <FileDiff key={f.key} name={f.name} before={f.before} after={f.after} />)}
      </section>

      <section className="section" aria-labelledby="tests-head">
        <h2 id="tests-head">Policy tests</h2>
        {p.tests.failed > 0 ? (
          <>
            <p className={styles.fail} data-testid="tests-result">
              ✕ {p.tests.failed} failed, {p.tests.passed} passed
            </p>
            <ul className={styles.failures}>
              {p.tests.failures.map((f) => (
                <li key={`${f.position}-${f.name}`}>
                  <strong>{f.name}</strong> <code className="muted">{f.position}</code>
                  <div>{f.message}</div>
                </li>
              ))}
            </ul>
          </>
        ) : (
          <p data-testid="tests-result">
            ✓ all {p.tests.passed} passed <span className="muted">(
              {p.tests.files.length === 0
                ? 'no test file'
                : p.tests.files.map((f, n) => (
                    <span key={f}>
                      {n > 0 ? ', ' : null}
                      <code title={f}>{testFileName(f)}</code>
                    </span>
                  ))}
              )</span>
          </p>
        )}
      </section>

      <section className="section" aria-labelledby="impact-head">
        <h2 id="impact-head">Impact on the recorded calls</h2>
        <p data-testid="impact-summary">
          Of {impact.replayed} calls recorded since <Time seconds={impact.since} />, <strong>{impact.changed}</strong> would be decided otherwise:{' '}
          {(Object.keys(DIRECTION_WORDS) as (keyof typeof DIRECTION_WORDS)[]).map((k, n) => (
            <span key={k}>
              {n > 0 ? ', ' : ''}
              {impact.by_direction[k]} {DIRECTION_WORDS[k]}
            </span>
          ))}
          .{impact.uncertain > 0 ? <> {impact.uncertain} of them are uncertain (marked ? below): the replay could not know everything the call was decided on.</> : null}
        </p>
        {impact.changed > 0 ? (
          <div className={styles.impactGrid}>
            {[
              { by: 'agent', head: 'Agent', rows: impact.by_agent.map((a) => ({ name: a.agent, count: a.count })) },
              { by: 'tool', head: 'Tool', rows: impact.by_tool.map((t) => ({ name: t.tool, count: t.count })) },
            ].map((table) => (
              <DataTable key={table.by} caption={`Changed calls by ${table.by}`} heads={[table.head, 'Calls']}>
                {table.rows.map((r) => (
                  <tr key={r.name}>
                    <td>
                      <code>{r.name}</code>
                    </td>
                    <td>{r.count}</td>
                  </tr>
                ))}
              </DataTable>
            ))}
          </div>
        ) : null}
        {impact.examples.length > 0 ? (
          <DataTable caption="Examples of changed calls" heads={['Call', 'Before', 'After', 'Decision']} cardsWhenNarrow>
            {impact.examples.map((e, n) => (
              <tr key={`${e.decision_id ?? 'x'}-${n}`}>
                <td data-label="Call">
                  <code>{e.agent}</code> → <code>{e.tool}</code>
                  <div className="muted">{DIRECTION_WORDS[e.direction]}</div>
                </td>
                <td data-label="Before">
                  {e.before.decision} <span className="muted">({e.before.rule_source})</span>
                </td>
                <td data-label="After">
                  {e.after.decision} <span className="muted">({e.after.rule_source})</span>
                  {e.uncertain ? <strong title="The replay could not know everything this call was decided on"> ? uncertain</strong> : null}
                </td>
                <td data-label="Decision">
                  {e.decision_id && DECISION_ID.test(e.decision_id) ? (
                    <Link href={`/audit?decision_id=${e.decision_id}`} className={styles.decisionId} title="This decision in the audit explorer">
                      {e.decision_id}
                    </Link>
                  ) : (
                    <span className="muted">{e.decision_id ?? 'none'}</span>
                  )}
                </td>
              </tr>
            ))}
          </DataTable>
        ) : null}
      </section>

      <section className="section" aria-labelledby="votes-head">
        <h2 id="votes-head">Votes</h2>
        {stillNeeded > 0 ? (
          <p className={styles.lead} data-testid="may-still-vote">
            {stillNeeded === 1 ? 'One more approval' : `${stillNeeded} more approvals`} needed.{' '}
            {mayStillVote.length === 0 ? (
              <strong>
                Nobody may give {stillNeeded === 1 ? 'it' : 'them'} yet: no other {p.approverRoles.join(' or ')} user exists besides its proposer and those who voted. An administrator adds one
                (<code>npx swarm users add NAME --role {p.approverRoles[0]}</code>).
              </strong>
            ) : mayStillVote.length < stillNeeded ? (
              <strong>
                Only {mayStillVote.join(', ')} may still approve it, fewer than needed: an administrator adds another {p.approverRoles.join(' or ')} user.
              </strong>
            ) : (
              <>May still approve it: {mayStillVote.join(', ')} <span className="muted">({p.approverRoles.join(' or ')}; not its proposer)</span>.</>
            )}
          </p>
        ) : null}
        {votes.length === 0 ? (
          <p className="muted">No vote yet.</p>
        ) : (
          <ul className={styles.votes}>
            {votes.map((v) => (
              <li key={v.voter}>
                <strong>{v.vote === 'approve' ? '✓ Approved' : '✕ Rejected'}</strong> by <strong>{v.voter}</strong> <span className="muted">({v.voterRole})</span> on <Time seconds={v.votedAt} />
                <div>{v.reason}</div>
              </li>
            ))}
          </ul>
        )}
      </section>
    </div>
  );
}
