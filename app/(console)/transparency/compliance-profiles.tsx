import type { TransparencyReport } from '@/lib/flags/transparency';
import { ColumnHeads } from '@/app/_components/column-heads';
import { Ident } from './ident';
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
        profile locks flags, sets minimums for retention, masking, approvals and sign-in, adds policy rules and gates, and maps each control of its
        frameworks to what serves it. Read once at start: a change needs a restart.
      </p>
      {active.map((p) => (
        <ProfileCard key={p.name} profile={p} />
      ))}
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
          {p.retention ? (
            <>
              Audit rows stay in the live trail for at least <strong>{p.retention.min_days} days</strong>.
              <div className={styles.basis}>{p.retention.basis}</div>
            </>
          ) : (
            <span className="muted">no minimum</span>
          )}
        </dd>

        <dt>Masking</dt>
        <dd>
          {p.masking ? (
            <>
              These argument keys are masked in the trail:{' '}
              {p.masking.keys.map((k, i) => (
                <span key={k}>
                  {i > 0 ? ', ' : null}
                  <code>{k}</code>
                </span>
              ))}
              .<div className={styles.basis}>{p.masking.basis}</div>
            </>
          ) : (
            <span className="muted">nothing beyond the platform’s own redaction</span>
          )}
        </dd>

        <dt>Approvals</dt>
        <dd>
          {p.approvals ? (
            <>
              Two different people approve {RISK_FROM[p.approvals.two_person_from_risk] ?? `gates from ${p.approvals.two_person_from_risk} risk`}.
              <div className={styles.basis}>{p.approvals.basis}</div>
            </>
          ) : (
            <span className="muted">as each gate declares</span>
          )}
        </dd>

        <dt>Sign-in</dt>
        <dd>
          {p.sign_in ? (
            <>
              A user name is locked for <strong>{p.sign_in.lock_minutes} minutes</strong> after {p.sign_in.lock_after_failures} failed sign-ins in a
              row.
              <div className={styles.basis}>{p.sign_in.basis}</div>
            </>
          ) : (
            <span className="muted">failed sign-ins slow further attempts down; no lock</span>
          )}
        </dd>

        <dt>Policy rules</dt>
        <dd>
          {p.rules.length === 0 ? (
            <span className="muted">none</span>
          ) : (
            <>
              <ul className={styles.toolList}>
                {p.rules.map((r) => (
                  <li key={r}>
                    <code>policy:{r}</code>
                  </li>
                ))}
              </ul>
              <div className={styles.detail}>
                Listed with the <a href="#policy">YAML policy rules</a>.
              </div>
            </>
          )}
        </dd>

        <dt>Gates</dt>
        <dd>
          {p.gates.length === 0 ? (
            <span className="muted">none of its own</span>
          ) : (
            <>
              <ul className={styles.toolList}>
                {p.gates.map((g) => (
                  <li key={g}>
                    <code>hitl:{g}</code>
                  </li>
                ))}
              </ul>
              <div className={styles.detail}>
                Listed with the <a href="#gates">approval gates in force</a>.
              </div>
            </>
          )}
        </dd>
      </dl>

      <h4 className={styles.controlsHead}>
        Control mapping <span className={styles.count}>({p.controls.length})</span>
      </h4>
      {p.controls.length === 0 ? (
        <p className={`panel ${styles.quietPanel}`}>This profile maps no controls.</p>
      ) : (
        <div className={`table-wrap ${styles.wrap}`}>
          <table className="table" aria-label={`Control mapping of ${p.name}`}>
            <ColumnHeads labels={['Framework', 'Control', 'Title', 'Served by', 'Evidence', 'How']} />
            <tbody>
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
            </tbody>
          </table>
        </div>
      )}
    </article>
  );
}
