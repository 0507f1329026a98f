import type { ReactNode } from 'react';
import type { TransparencyReport } from '@/lib/flags/transparency';
import { DataTable } from '@/app/_components/data-table';
import { Ident } from './ident';
import { CodeList } from './rule-sources';
import styles from './transparency.module.css';

type Profiles = TransparencyReport['profiles'];
type Profile = Profiles['active'][number];

/** The profiles this installation ships (config/profiles); any folder with a profile.yaml is one too. */
const KNOWN_PROFILES = ['bfsi', 'healthcare', 'eu_ai_act_high_risk'] as const;

const SELECTED_BY: Record<Profiles['selected_by'], string> = {
  SWARM_PROFILE: 'the environment variable SWARM_PROFILE',
  'swarm.yaml': 'profile: in config/swarm.yaml',
  none: 'nothing',
};

const RISK_FROM: Record<string, string> = { low: 'every gate', medium: 'medium- and high-risk gates', high: 'high-risk gates' };

/** A sampling rate as people read it: 10%, 2.5%, 0.1%. */
function samplePercent(rate: number): string {
  return `${Number((rate * 100).toPrecision(3))}%`;
}

/** Which compliance profiles are active, what each holds the platform to, and the controls it maps. */
export function ComplianceProfiles({ profiles }: { profiles: Profiles }) {
  const { active, selected_by } = profiles;
  if (active.length === 0) {
    return (
      <p className={`panel ${styles.quietPanel}`} data-testid="no-profile">
        No compliance profile is active. To select one, start the server with <code>SWARM_PROFILE=bfsi</code> or write{' '}
        <code>profile: bfsi</code> in <code>config/swarm.yaml</code>; the known profiles are{' '}
        {KNOWN_PROFILES.map((p, i) => (
          <span key={p}>
            {i > 0 ? (i === KNOWN_PROFILES.length - 1 ? ' and ' : ', ') : null}
            <code>{p}</code>
          </span>
        ))}
        .
      </p>
    );
  }
  return (
    <>
      <p className={styles.sectionLead}>
        {active.length === 1 ? 'One profile is' : `${active.length} profiles are`} active, selected by {SELECTED_BY[selected_by]}. A
        profile locks flags, sets minimums for retention, masking, approvals and sign-in, may keep a sample of allowed calls, adds policy rules and gates, and maps each control of its
        frameworks to what serves it. Read once at start: a change needs a restart.
      </p>
      {active.map((p) => (
        <ProfileCard key={p.name} profile={p} />
      ))}
    </>
  );
}

/** A minimum the profile sets, with the basis it cites; or, without one, what holds instead. */
function Minimum({ basis, otherwise, children }: { basis: string | undefined; otherwise: string; children: ReactNode }) {
  if (basis === undefined) return <span className="muted">{otherwise}</span>;
  return (
    <>
      {children}
      <div className={styles.basis}>{basis}</div>
    </>
  );
}

/** The rules or gates a profile adds, and where the page lists them in full. */
function Added({ items, prefix, none, href, where }: { items: readonly string[]; prefix: string; none: string; href: string; where: string }) {
  if (items.length === 0) return <span className="muted">{none}</span>;
  return (
    <>
      <CodeList items={items} prefix={prefix} />
      <div className={styles.detail}>
        Listed with the <a href={href}>{where}</a>.
      </div>
    </>
  );
}

function ProfileCard({ profile: p }: { profile: Profile }) {
  const headingId = `profile-${p.name}`;
  return (
    <article className={styles.profile} aria-labelledby={headingId} data-profile={p.name}>
      <h3 id={headingId} className={styles.profileTitle}>
        {p.title} <code className={styles.profileName}>{p.name}</code>
      </h3>
      <p className={styles.profileDescription}>{p.description}</p>
      <div className={styles.detail}>
        Declared in <code>{p.folder}</code>
      </div>

      <dl className={styles.profileFacts}>
        <dt>Frameworks</dt>
        <dd>
          <ul className={`${styles.plainList} ${styles.frameworks}`}>
            {p.frameworks.map((f) => (
              <li key={f}>{f}</li>
            ))}
          </ul>
        </dd>

        <dt>Locks</dt>
        <dd>
          {p.locks.length === 0 ? (
            <span className="muted">no flag</span>
          ) : (
            <ul className={styles.plainList}>
              {p.locks.map((l) => (
                <li key={l.flag}>
                  <Ident>{l.flag}</Ident> locked <strong>{l.value ? 'on' : 'off'}</strong>
                  <span className="muted">: no override, variable or alias can change it</span>
                </li>
              ))}
            </ul>
          )}
        </dd>

        <dt>Retention</dt>
        <dd>
          <Minimum basis={p.retention?.basis} otherwise="no minimum">
            Audit rows stay in the live trail for at least <strong>{p.retention?.min_days} days</strong>.
          </Minimum>
        </dd>

        <dt>Masking</dt>
        <dd>
          <Minimum basis={p.masking?.basis} otherwise="nothing beyond the platform’s own redaction">
            These argument keys are masked in the trail:{' '}
            {p.masking?.keys.map((k, i) => (
              <span key={k}>
                {i > 0 ? ', ' : null}
                <code>{k}</code>
              </span>
            ))}
            .
          </Minimum>
        </dd>

        <dt>Decision log</dt>
        <dd>
          <Minimum basis={p.decision_log?.basis} otherwise="allowed calls are kept as decision_log_all says; denials always">
            While <Ident>decision_log_all</Ident> is off, <strong>{samplePercent(p.decision_log?.sample ?? 0)}</strong> of allowed and asked calls
            are kept in the trail, chosen by their decision id; denials are all kept.
          </Minimum>
        </dd>

        <dt>Approvals</dt>
        <dd>
          <Minimum basis={p.approvals?.basis} otherwise="as each gate declares">
            Two different people approve {RISK_FROM[p.approvals?.two_person_from_risk ?? ''] ?? `gates from ${p.approvals?.two_person_from_risk} risk`}.
          </Minimum>
        </dd>

        <dt>Sign-in</dt>
        <dd>
          <Minimum basis={p.sign_in?.basis} otherwise="failed sign-ins slow further attempts down; no lock">
            A user name is locked for <strong>{p.sign_in?.lock_minutes} minutes</strong> after {p.sign_in?.lock_after_failures} failed sign-ins in a
            row.
          </Minimum>
        </dd>

        <dt>API tokens</dt>
        <dd>
          <Minimum basis={p.tokens?.basis} otherwise="tokens expire only when asked; unused ones stay enabled">
            {p.tokens?.max_days ? (
              <>
                A token expires <strong>{p.tokens.max_days} days</strong> after it is made{p.tokens.inactive_days ? '; ' : '.'}
              </>
            ) : null}
            {p.tokens?.inactive_days ? (
              <>
                {p.tokens.max_days ? 'one' : 'A token'} unused for <strong>{p.tokens.inactive_days} days</strong> is disabled.
              </>
            ) : null}
          </Minimum>
        </dd>

        <dt>Policy rules</dt>
        <dd>
          <Added items={p.rules} prefix="policy:" none="none" href="#policy" where="YAML policy rules" />
        </dd>

        <dt>Gates</dt>
        <dd>
          <Added items={p.gates} prefix="hitl:" none="none of its own" href="#gates" where="approval gates in force" />
        </dd>
      </dl>

      <h4 className={styles.controlsHead}>
        Control mapping <span className={styles.count}>({p.controls.length})</span>
      </h4>
      {p.controls.length === 0 ? (
        <p className={`panel ${styles.quietPanel}`}>This profile maps no controls.</p>
      ) : (
        <DataTable label={`Control mapping of ${p.name}`} heads={['Framework', 'Control', 'Title', 'Served by', 'Evidence', 'How']} wrapClassName={styles.wrap}>
          {p.controls.map((c) => (
            <tr key={`${c.framework}|${c.id}`} data-control={c.id}>
              <td className={styles.framework}>{c.framework}</td>
              <td className="nowrap">
                <strong>{c.id}</strong>
              </td>
              <td className={styles.controlTitle}>{c.title}</td>
              <td>
                <ul className={styles.servedBy}>
                  {c.served_by.map((s) => (
                    <li key={`${s.kind}:${s.ref}`}>
                      <Ident>{`${s.kind}:${s.ref}`}</Ident>
                      {s.in_force ? null : <span className={styles.notInForce}>not in force</span>}
                    </li>
                  ))}
                </ul>
              </td>
              <td>
                <ul className={styles.plainList}>
                  {c.evidence.map((e) => (
                    <li key={e} className="nowrap">
                      {e.replaceAll('_', ' ')}
                    </li>
                  ))}
                </ul>
              </td>
              <td className={styles.description}>{c.how}</td>
            </tr>
          ))}
        </DataTable>
      )}
    </article>
  );
}
