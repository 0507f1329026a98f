import type { Metadata } from 'next';
import Link from 'next/link';
import { DataTable } from '@/app/_components/data-table';
import { Time } from '@/app/_components/time';
import { requireSignedIn } from '@/lib/http/page-auth';
import { RULE_FILE_NAMES, type RuleFile } from '@/lib/change-control/files';
import { openFirst, shortRevision, STATUS_WORDS } from './policy-words';
import { ProposeForm } from './propose-form';
import { RollbackButton } from './rollback-button';
import styles from './policy.module.css';

export const metadata: Metadata = { title: 'Policy changes' };
export const dynamic = 'force-dynamic';

const ACTIVATION_WORDS = { seed: 'Seed: the files on disk at the first start', proposal: 'Approved proposal', emergency: '⚠ Emergency rollback (break-glass, no votes)' } as const;

/**
 * Changes to the rules (issue 28): whether change control is enforced and by which profiles, the activation in force
 * and every earlier one (admins propose going back to any), the proposals with their tests and impact, and for admins
 * the form that proposes a change. Auditors read everything here; what they may vote on is said on each proposal.
 */
export default async function PolicyPage() {
  const { app, principal } = await requireSignedIn('/policy');
  const cc = app.changeControl;
  await cc.sync();
  const settings = cc.settings;
  const active = cc.active;
  const activations = await cc.store.activations();
  const proposals = openFirst(await cc.store.proposals());
  const isAdmin = principal.role === 'admin';
  // The rule files in force: the active revision's under change control, else the files on disk.
  const texts = app.ruleTexts();
  const open = proposals.filter((p) => p.status === 'open').length;

  return (
    <div className={styles.page}>
      <header className="page-head">
        <h1>Policy changes</h1>
        <p className="muted">
          The rule files (agents, policy, gates, hooks, MCP servers) change through proposals: each is compiled, its policy tests run and its impact on the recorded calls is
          measured before anyone votes.
        </p>
      </header>

      <section className="section" aria-labelledby="control-head">
        <h2 id="control-head">Change control</h2>
        {settings ? (
          <p className={styles.lead} data-testid="change-control">
            <strong>Enforced.</strong> A change takes effect only when {settings.approvers === 1 ? 'one person' : `${settings.approvers} different people`} (
            {settings.roles.join(' or ')}) other than its proposer approve it; it is then active on every server within a second. Files edited on disk are not loaded.{' '}
            <span className="muted">
              Profile {settings.profiles.join(', ')}: {settings.basis}
            </span>
          </p>
        ) : (
          <p className={styles.lead} data-testid="change-control">
            Not enforced: the files on disk are the rules, and proposals are advisory (an approval says the files may be deployed).
          </p>
        )}
      </section>

      {settings ? (
        <section className="section" aria-labelledby="active-head">
          <h2 id="active-head">In force</h2>
          {active ? (
            <p className={styles.lead} data-testid="active-revision">
              Revision <code title={active.revision}>{shortRevision(active.revision)}</code>, activation {active.seq}, since <Time seconds={active.activatedAt} /> by{' '}
              <strong>{active.activatedBy}</strong>
              {active.proposalId ? (
                <>
                  {' '}
                  (proposal <Link href={`/policy/${active.proposalId}`}>{active.proposalId}</Link>)
                </>
              ) : (
                <> (the files on disk at the first start)</>
              )}
              .
            </p>
          ) : (
            <p className="muted">No activation yet: the servers seed one from the files on disk when they start.</p>
          )}
          {activations.length > 0 ? (
            <DataTable caption="Activations, newest first" heads={['#', 'Revision', 'How', 'By', 'When (UTC)', '']} cardsWhenNarrow>
              {activations.map((a) => (
                <tr key={a.seq} data-activation={a.seq} className={a.kind === 'emergency' ? styles.emergency : undefined}>
                  <td data-label="#">{a.seq}</td>
                  <td data-label="Revision">
                    <code title={a.revision}>{shortRevision(a.revision)}</code>
                  </td>
                  <td data-label="How">
                    {ACTIVATION_WORDS[a.kind]}
                    {a.proposalId ? (
                      <>
                        {' '}
                        <Link href={`/policy/${a.proposalId}`}>{a.proposalId}</Link>
                      </>
                    ) : null}
                  </td>
                  <td data-label="By">{a.activatedBy}</td>
                  <td className="nowrap" data-label="When (UTC)">
                    <Time seconds={a.activatedAt} />
                  </td>
                  <td data-label="Action">
                    {a.seq === active?.seq ? <span className="muted">in force</span> : isAdmin && a.revision !== active?.revision ? <RollbackButton revision={a.revision} seq={a.seq} /> : null}
                  </td>
                </tr>
              ))}
            </DataTable>
          ) : null}
        </section>
      ) : null}

      <section className="section" aria-labelledby="files-head">
        <h2 id="files-head">The rule files in force</h2>
        <p className="muted">What decides now, to read or download; a change to them is a proposal{settings ? ' (below)' : ''}.</p>
        <ul className={styles.ruleFiles} aria-label="Rule files in force">
          {(Object.keys(RULE_FILE_NAMES) as RuleFile[]).map((key) => {
            const name = RULE_FILE_NAMES[key];
            const text = texts[key];
            return (
              <li key={key} data-rule-file={name}>
                {text === null ? (
                  <span>
                    <code>{name}</code> <span className="muted">not present</span>
                  </span>
                ) : (
                  <details>
                    <summary>
                      <code>{name}</code> <span className="muted">({text.split('\n').length} lines)</span>
                    </summary>
                    <a className="button button-quiet" download={name} href={`data:text/yaml;charset=utf-8,${encodeURIComponent(text)}`}>
                      Download {name}
                    </a>
                    <pre className={styles.ruleText}>{text}</pre>
                  </details>
                )}
              </li>
            );
          })}
        </ul>
      </section>

      <section className="section" aria-labelledby="proposals-head">
        <h2 id="proposals-head">
          Proposals <span className="muted">({open} open of {proposals.length})</span>
        </h2>
        {proposals.length === 0 ? (
          <p className="muted">No proposal yet.</p>
        ) : (
          <DataTable caption="Proposals, open first" heads={['Proposal', 'Status', 'Proposed by', 'When (UTC)', 'Tests', 'Impact', 'Votes needed']} cardsWhenNarrow>
            {proposals.map((p) => (
              <tr key={p.id} data-proposal={p.id}>
                <td data-label="Proposal" className={styles.proposalCell}>
                  <Link href={`/policy/${p.id}`}>{p.kind === 'rollback' ? `Rollback: ${p.message}` : p.message}</Link>
                  <div className="muted">
                    <code>{p.id}</code>
                    {p.emergency ? <strong className={styles.emergencyTag}> ⚠ emergency</strong> : null}
                  </div>
                </td>
                <td data-label="Status" className="nowrap">
                  <span className={`${styles.status} ${styles[`status-${p.status}`] ?? ''}`}>{STATUS_WORDS[p.status]}</span>
                </td>
                <td data-label="Proposed by">{p.proposedBy}</td>
                <td className="nowrap" data-label="When (UTC)">
                  <Time seconds={p.proposedAt} />
                </td>
                <td data-label="Tests" className="nowrap">
                  {p.tests.failed > 0 ? <strong className={styles.fail}>✕ {p.tests.failed} failed</strong> : <span>✓ {p.tests.passed} passed</span>}
                </td>
                <td data-label="Impact">
                  {p.impact.changed === 0 ? (
                    <span className="muted">no recorded call changes</span>
                  ) : (
                    <>
                      {p.impact.by_direction.newly_denied} newly denied, {p.impact.by_direction.newly_allowed} newly allowed, {p.impact.by_direction.newly_asking} newly asking
                    </>
                  )}
                  <div className="muted">of {p.impact.replayed} replayed</div>
                </td>
                <td data-label="Votes needed">
                  {p.approvalsRequired} <span className="muted">({p.approverRoles.join(' or ')})</span>
                </td>
              </tr>
            ))}
          </DataTable>
        )}
      </section>

      {isAdmin ? (
        <section className="section" aria-labelledby="propose-head">
          <h2 id="propose-head">Propose a change</h2>
          <ProposeForm names={RULE_FILE_NAMES} inForce={texts} />
        </section>
      ) : null}
    </div>
  );
}
